//! The messages between the driver, the Ray script and the swerve workers, one JSON object
//! a line.
//!
//! - To a worker: one [`Setup`], then [`Job`]s; it answers the setup with a [`Ready`] and
//!   each job with a [`Reply`] (in the order jobs end, matched by id).
//! - Between the driver and the Ray script ([`ToRay`], [`FromRay`]): the script places
//!   jobs on nodes and passes replies back untouched.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use swerve_eval::grader::Grade;
use swerve_eval::report::InstanceReport;
use swerve_rollout::config::EvaluatorKind;

/// What every job of a run shares: sent to each worker once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setup {
    /// The resolved configuration (`swerve config show`), as TOML.
    pub config: String,
    /// The task file's path on the driver (its directory locates local repositories).
    pub task_file: PathBuf,
    /// The task file's text, used when the path does not exist on the node.
    pub tasks: String,
    /// The driver's run directory: paths into the worker's scratch directory in the files a
    /// job sends back (a report's `log_path`) are rewritten to point there.
    pub out: PathBuf,
    /// The driver's working directory (relative paths of the configuration are relative to
    /// it), used when it exists on the node.
    pub cwd: PathBuf,
    /// How `swerve eval` grades; `None` for `swerve run` (whose grading follows `run.eval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grading: Option<GradingSetup>,
}

/// `swerve eval`'s grading settings beyond the configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradingSetup {
    /// Tests or the reward model.
    pub evaluator: EvaluatorKind,
    /// Whether cached test results may be reused.
    pub use_cache: bool,
    /// The tests' time limit, when `--timeout` gave one.
    #[serde(default)]
    pub test_timeout_secs: Option<f64>,
}

/// A worker's answer to the setup.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Ready {
    /// The worker runs jobs.
    #[serde(rename = "ready")]
    Ready {
        /// The node's host name.
        host: String,
    },
    /// The worker cannot run jobs on this node: what to fix.
    #[serde(rename = "error")]
    Error(String),
}

/// One job: an id unique in the run and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// Unique in the run: a rollout's id, or a grading's task and repetition.
    pub id: String,
    /// What to do.
    pub work: Work,
}

/// What a job does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// A rollout of `swerve run`: sample `sample` of task `instance_id`.
    Rollout {
        /// The task.
        instance_id: String,
        /// Which sample.
        sample: usize,
    },
    /// A grading of `swerve eval`: the patch of task `instance_id`.
    Grade {
        /// The task.
        instance_id: String,
        /// The patch (`None`: no prediction).
        patch: Option<String>,
    },
}

/// A worker's answer to a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The job's id.
    pub id: String,
    /// A rollout's outcome (as its trajectory's last line holds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<serde_json::Value>,
    /// A grading's grade.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<GradeReply>,
    /// Why the job failed (a rollout whose environment could not be built, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The files the job wrote, relative to the run directory.
    #[serde(default)]
    pub files: Vec<File>,
}

/// A grade as it travels: the parts of `swerve_eval::grader::Grade`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GradeReply {
    /// SWE-bench's report.
    pub report: InstanceReport,
    /// The grade as a number.
    pub score: Option<f64>,
    /// What a predicted grade adds to the report.
    pub prediction: Option<serde_json::Map<String, serde_json::Value>>,
}

impl From<Grade> for GradeReply {
    fn from(grade: Grade) -> Self {
        Self {
            report: grade.report,
            score: grade.score,
            prediction: grade.prediction,
        }
    }
}

impl From<GradeReply> for Grade {
    fn from(reply: GradeReply) -> Self {
        Self {
            report: reply.report,
            score: reply.score,
            prediction: reply.prediction,
        }
    }
}

/// A file a job wrote: its path relative to the run directory and its bytes (as text when
/// they are UTF-8, which trajectories and logs are).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct File {
    /// Relative to the run directory, `/`-separated, without `..`.
    pub path: String,
    /// The content when it is UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The content otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Vec<u8>>,
}

impl File {
    /// The file at `path` under `root`, named by `relative`.
    pub fn read(root: &Path, relative: &str) -> Result<Self> {
        let path = root.join(relative);
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => Self {
                path: relative.to_owned(),
                text: Some(text),
                bytes: None,
            },
            Err(error) => Self {
                path: relative.to_owned(),
                text: None,
                bytes: Some(error.into_bytes()),
            },
        })
    }

    /// Writes the file under `root`, atomically (a reader sees the old file or the new
    /// one); refuses paths that leave `root`.
    pub fn write_under(&self, root: &Path) -> Result<()> {
        let relative = Path::new(&self.path);
        let safe = relative
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)));
        if !safe || self.path.is_empty() {
            anyhow::bail!(
                "a worker sent the file \"{}\", which is not a plain path inside the run directory",
                self.path
            );
        }
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let content: &[u8] = match (&self.text, &self.bytes) {
            (Some(text), _) => text.as_bytes(),
            (None, Some(bytes)) => bytes,
            (None, None) => &[],
        };
        swerve_core::atomic::write_atomically(&path, |out| std::io::Write::write_all(out, content))
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// What the driver tells the Ray script.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ToRay<'a> {
    /// Connect and start the workers.
    Start {
        /// `ray.init`'s address.
        address: &'a str,
        /// The swerve executable on the nodes.
        swerve: &'a str,
        /// The workers' setup.
        setup: &'a Setup,
        /// The `[cluster]` settings (slots, resources, timeouts).
        cluster: &'a swerve_rollout::config::cluster::ClusterSection,
    },
    /// Run a job; jobs with the same `key` go to the same node when they can.
    Job {
        /// The job.
        job: &'a Job,
        /// Its locality key (repository, version, image).
        key: &'a str,
    },
}

/// What the Ray script tells the driver.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FromRay {
    /// The workers are up.
    Ready {
        /// One line per node with a worker (`host: N slots`).
        nodes: Vec<String>,
        /// Jobs at once across the cluster.
        slots: usize,
    },
    /// Something the user should know (a node that got no worker, and why).
    Warning {
        /// What happened.
        message: String,
    },
    /// A job's node died; the job starts again elsewhere.
    Requeued {
        /// The job.
        id: String,
        /// Why.
        reason: String,
    },
    /// A job ended on a worker.
    Done {
        /// The worker's reply.
        reply: Box<Reply>,
    },
    /// A job could not be run (its attempts were used up, or no node is left).
    Failed {
        /// The job.
        id: String,
        /// Why.
        error: String,
    },
    /// The script cannot go on (cannot connect, no node can take a worker).
    Fatal {
        /// What to fix.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn files_round_trip_and_paths_outside_the_run_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("logs")).unwrap();
        std::fs::write(dir.path().join("logs/a.log"), b"hello\n").unwrap();
        std::fs::write(dir.path().join("logs/b.bin"), [0xff, 0x00, 0xfe]).unwrap();
        let out = tempfile::tempdir().unwrap();
        for name in ["logs/a.log", "logs/b.bin"] {
            let file = File::read(dir.path(), name).unwrap();
            let line = serde_json::to_string(&file).unwrap();
            let back: File = serde_json::from_str(&line).unwrap();
            back.write_under(out.path()).unwrap();
            assert_eq!(
                std::fs::read(out.path().join(name)).unwrap(),
                std::fs::read(dir.path().join(name)).unwrap()
            );
        }
        for bad in ["../x", "/etc/passwd", "a/../../x", ""] {
            let file = File {
                path: bad.into(),
                text: Some("x".into()),
                bytes: None,
            };
            let error = file.write_under(out.path()).unwrap_err().to_string();
            assert!(error.contains("not a plain path"), "{bad}: {error}");
        }
    }

    #[test]
    fn script_events_parse() {
        let ready: FromRay =
            serde_json::from_str(r#"{"event":"ready","nodes":["a: 4 slots"],"slots":4}"#).unwrap();
        assert_eq!(
            ready,
            FromRay::Ready {
                nodes: vec!["a: 4 slots".into()],
                slots: 4
            }
        );
        let done: FromRay = serde_json::from_str(
            r#"{"event":"done","reply":{"id":"x__0","error":"boom","files":[]}}"#,
        )
        .unwrap();
        assert!(matches!(done, FromRay::Done { reply } if reply.error.as_deref() == Some("boom")));
    }

    proptest! {
        /// Whatever a line from the script or a worker holds, parsing it never panics.
        #[test]
        fn arbitrary_lines_never_panic(line in ".{0,200}") {
            let _ = serde_json::from_str::<FromRay>(&line);
            let _ = serde_json::from_str::<Reply>(&line);
            let _ = serde_json::from_str::<Job>(&line);
        }
    }
}
