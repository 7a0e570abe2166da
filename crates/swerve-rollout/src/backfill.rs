//! SWE-AGILE backfill over files of trajectories: each trajectory is a [`Job`] whose results
//! go into an output directory (`trajectories/<id>.jsonl` when done, written whole and
//! atomically; `rejected/<id>.json` with the reason when the teacher's work was rejected), so
//! a rerun resumes by asking each job its [`State`]. [`Backfill`] is what the jobs of one
//! invocation share (the teacher and what it has spent); [`summarize`] reads every job's
//! result into `summary.json`. The per-trajectory algorithm is
//! [`swerve_agent::backfill::Teacher`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_agent::agile::WindowPolicy;
use swerve_agent::backfill::{Spent, Stop, Teacher};
use swerve_core::atomic::write_json_atomically;
use swerve_core::trajectory::import::load_all;
use swerve_core::trajectory::{Trajectory, read_trajectory, write_trajectory};
use swerve_llm::Model;
use swerve_tools::formats::ToolFormat;

use crate::config::Config;
use crate::models;

/// Settings a backfill's output directory may resume with changed, besides those of every
/// command ([`crate::run_dir::OPERATIONAL_KEYS`], models' endpoints): a backfill reads
/// `[backfill]`, `run.format` and `[tools]` (which the format is checked against) and
/// nothing else listed here. Any other setting, a section added later included, changes
/// results, and resuming with it changed is refused.
pub const NON_RESULT_KEYS: &[&str] = &[
    // How many trajectories are backfilled at once.
    "backfill.concurrency",
    // `swerve run`'s agent, model, sandbox, grading and world: a backfill reads the
    // trajectories they made, not these settings.
    "agent",
    "prompts",
    "patch",
    "model",
    "sandbox",
    "reward",
    "world",
    "edit",
    "run.samples",
    "run.concurrency",
    "run.demos",
    "run.eval",
    "run.evaluator",
    "run.recipes",
    "run.tokenizer",
    "run.env",
];

/// What every job of one invocation shares.
pub struct Backfill {
    model: Arc<dyn Model>,
    format: Box<dyn ToolFormat>,
    window: WindowPolicy,
    seed: u64,
    max_attempts: u32,
    /// Whether the price table knows the teacher (an unknown model is counted as free).
    pub priced: bool,
    /// What the teacher took in this invocation, over every job.
    spent: Mutex<Spent>,
}

impl Backfill {
    /// The teacher and settings of `config`'s `[backfill]`, checked.
    pub fn new(config: &Config) -> Result<Self> {
        let settings = &config.backfill;
        if settings.concurrency == 0 || settings.max_attempts == 0 {
            bail!("backfill.concurrency and backfill.max_attempts must be at least 1");
        }
        let format = config.format()?;
        let (model, priced) = models::teacher(config)?;
        Teacher::new(model.as_ref(), format.as_ref(), settings.max_attempts)
            .map_err(|error| anyhow!("run.format = {:?}: {error}", config.run.format))?;
        Ok(Self {
            model,
            format,
            window: settings.window,
            seed: settings.seed,
            max_attempts: settings.max_attempts,
            priced,
            spent: Mutex::new(Spent::default()),
        })
    }

    /// What the teacher took in this invocation so far, over every job.
    pub fn spent(&self) -> Spent {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One trajectory to backfill, and where its results go.
pub struct Job {
    /// The file it was read from.
    source: PathBuf,
    trajectory: Trajectory,
    /// The trajectory id, as a file name.
    pub name: String,
    /// The backfilled trajectory.
    output: PathBuf,
    /// Why it was rejected, when it was.
    rejected: PathBuf,
}

/// Where a job stands in the output directory.
pub enum State {
    /// Backfilled: the steps of the trajectory written and what the teacher took.
    Done {
        /// The steps of the backfilled trajectory.
        steps: usize,
        /// What the teacher took for it.
        spent: Spent,
    },
    /// Rejected, for the recorded reason.
    Rejected(Rejection),
    /// Neither (or its file is unreadable): to be run.
    Open,
}

/// The record of a rejected trajectory (`rejected/<id>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rejection {
    /// The trajectory id.
    pub id: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// Why the teacher's work was rejected.
    pub reason: String,
    /// The teacher model.
    pub teacher: String,
    /// What the teacher took for it.
    #[serde(flatten)]
    pub spent: Spent,
}

/// How a job ended.
pub enum Finished {
    /// Backfilled and written.
    Done {
        /// The steps of the backfilled trajectory.
        steps: usize,
        /// What the teacher took for it.
        spent: Spent,
    },
    /// Rejected, and the rejection recorded.
    Rejected {
        /// Why.
        reason: String,
        /// What the teacher took for it.
        spent: Spent,
    },
}

/// The jobs of every trajectory in `files`, with their files in `out`; two trajectories
/// with the same id are an error.
pub fn plan(files: &[PathBuf], out: &Path) -> Result<Vec<Job>> {
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut jobs = Vec::new();
    for loaded in load_all(files)? {
        let id = &loaded.trajectory.header.id;
        if id.is_empty() {
            bail!(
                "{}: a trajectory without an id (header field id)",
                loaded.path.display()
            );
        }
        let name = id.replace('/', "_");
        if let Some(first) = seen.insert(name.clone(), loaded.path.clone()) {
            bail!(
                "two trajectories would be written to {name}.jsonl: ids {id:?} in {} and in an \
                 earlier one of {}; backfill them into different --out directories",
                loaded.path.display(),
                first.display()
            );
        }
        jobs.push(Job {
            output: out.join("trajectories").join(format!("{name}.jsonl")),
            rejected: out.join("rejected").join(format!("{name}.json")),
            source: loaded.path,
            trajectory: loaded.trajectory,
            name,
        });
    }
    Ok(jobs)
}

impl Job {
    /// Where the job stands. An output counts as done only when it is whole: every step of
    /// the source and the backfill record in its header (swerve writes it atomically, but a
    /// file put there otherwise may be cut short).
    pub fn state(&self) -> State {
        if let Ok(read) = read_trajectory(&self.output)
            && read.partial_line.is_none()
            && read.trajectory.steps.len() == self.trajectory.steps.len()
            && let Some(record) = read.trajectory.header.extra.get("backfill")
            && let Ok(spent) = serde_json::from_value(record.clone())
        {
            return State::Done {
                steps: read.trajectory.steps.len(),
                spent,
            };
        }
        let record = std::fs::read(&self.rejected)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        record.map_or(State::Open, State::Rejected)
    }

    /// Backfills the trajectory and writes the result (replacing an earlier one's); `Err`
    /// when the teacher could not be called or a file not written.
    pub async fn run(&self, shared: &Backfill) -> Result<Finished, String> {
        let teacher = Teacher::new(
            shared.model.as_ref(),
            shared.format.as_ref(),
            shared.max_attempts,
        )?;
        let window = shared
            .window
            .resolve(shared.seed, &self.trajectory.header.id);
        let backfilled = teacher.backfill(&self.trajectory, window).await;
        let spent = backfilled.spent;
        shared
            .spent
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .absorb(spent);
        let written = match backfilled.result {
            Ok(mut trajectory) => {
                if let Some(Value::Object(record)) = trajectory.header.extra.get_mut("backfill") {
                    let source = self.source.to_string_lossy().into_owned();
                    record.insert("source".into(), Value::from(source));
                }
                let steps = trajectory.steps.len();
                write_trajectory(&self.output, &trajectory)
                    .map_err(|error| error.to_string())
                    .and_then(|()| remove_stale(&self.rejected))
                    .map(|()| Finished::Done { steps, spent })
            }
            Err(Stop::Rejected(reason)) => {
                let record = Rejection {
                    id: self.trajectory.header.id.clone(),
                    source: self.source.clone(),
                    reason: reason.clone(),
                    teacher: shared.model.name().to_owned(),
                    spent,
                };
                write_json(&self.rejected, &record)
                    .and_then(|()| remove_stale(&self.output))
                    .map(|()| Finished::Rejected { reason, spent })
            }
            Err(Stop::Failed(error)) => return Err(error),
        };
        written.map_err(|error| format!("{error} (the teacher's work on it is lost)"))
    }
}

/// A trajectory of this invocation that could not be backfilled (it is retried by the next).
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The job's name (the trajectory id as a file name).
    pub id: String,
    /// What went wrong.
    pub error: String,
}

/// A rejected trajectory.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    /// The job's name.
    pub id: String,
    /// The file it was read from.
    pub source: String,
    /// Why.
    pub reason: String,
}

/// This invocation's share.
#[derive(Debug, Clone, Serialize)]
pub struct Invocation {
    /// The trajectories this invocation ran.
    pub trajectories_run: usize,
    /// Every teacher call of this invocation, those of failed trajectories included.
    pub teacher: Spent,
    /// How long it took.
    pub wall_seconds: f64,
}

/// What `summary.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Trajectories in the input files.
    pub trajectories: usize,
    /// Backfilled.
    pub done: usize,
    /// The steps of those backfilled.
    pub steps: usize,
    /// Rejected, with their reasons.
    pub rejected: Vec<Rejected>,
    /// What the teacher took for the trajectories done or rejected.
    pub teacher: Spent,
    /// Whether the price table knows the teacher (an unknown model is counted as free).
    pub cost_priced: bool,
    /// This invocation's failures.
    pub failed: Vec<Failure>,
    /// This invocation's share.
    pub this_invocation: Invocation,
}

/// Reads every job's result in `out`, writes `summary.json` and returns the summary.
pub fn summarize(
    out: &Path,
    jobs: &[Job],
    invocation: Invocation,
    cost_priced: bool,
    failed: Vec<Failure>,
) -> Result<Summary> {
    let mut summary = Summary {
        trajectories: jobs.len(),
        done: 0,
        steps: 0,
        rejected: Vec::new(),
        teacher: Spent::default(),
        cost_priced,
        failed,
        this_invocation: invocation,
    };
    for job in jobs {
        match job.state() {
            State::Done { steps, spent } => {
                summary.done += 1;
                summary.steps += steps;
                summary.teacher.absorb(spent);
            }
            State::Rejected(rejection) => {
                summary.teacher.absorb(rejection.spent);
                summary.rejected.push(Rejected {
                    id: job.name.clone(),
                    source: rejection.source.display().to_string(),
                    reason: rejection.reason,
                });
            }
            State::Open => {}
        }
    }
    write_json(&out.join("summary.json"), &summary).map_err(|error| anyhow!(error))?;
    Ok(summary)
}

/// Writes `value` as JSON to `path`, atomically.
fn write_json(path: &Path, value: &impl Serialize) -> Result<(), String> {
    write_json_atomically(path, value)
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// Removes the result of an earlier attempt that this one replaces, if there is one.
fn remove_stale(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {error}", path.display()))
        }
        _ => Ok(()),
    }
}
