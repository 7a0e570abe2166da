//! `swerve data backfill`: SWE-AGILE reasoning and digests written into existing
//! trajectories by a teacher model ([`swerve_agent::backfill`]), `backfill.concurrency`
//! trajectories at once (the steps of one go one after another, since each builds on the
//! reasoning before it).
//!
//! Layout of `--out DIR`: `trajectories/<id>.jsonl` (a backfilled trajectory, written whole
//! and atomically once every step is done, so a partial one never exists), `rejected/<id>.json`
//! (why a trajectory was rejected, with what the teacher spent on it), `summary.json` and
//! `config.toml`. `<id>` is the trajectory id with `/` written `_`. Reruns resume: a
//! trajectory already backfilled or rejected is skipped (`--redo` does it again; deleting
//! its file in `rejected/` retries just that one), one cut off by a crash starts over, and
//! resuming with settings that change results is refused.

mod summary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_agent::backfill::{Spent, Stop, Teacher};
use swerve_agent::reasoning::WindowPolicy;
use swerve_core::atomic::write_json_atomically;
use swerve_core::trajectory::import::load_all;
use swerve_core::trajectory::{Trajectory, read_trajectory, write_trajectory};
use swerve_llm::Model;
use swerve_rollout::models;
use swerve_tools::formats::ToolFormat;

use crate::batch::{self, Ended};
use crate::cli::BackfillArgs;
use swerve_rollout::config::Config;
use swerve_rollout::run_dir;

/// Settings whose change would make an output directory mix trajectories of two set-ups.
const RESULT_KEYS: &[&str] = &[
    "backfill.teacher.name",
    "backfill.teacher.sampling",
    "backfill.teacher.extra_body",
    "backfill.window",
    "backfill.seed",
    "run.format",
];

/// The counts the progress display keeps (see [`Ended::count`]).
const COUNTS: &[&str] = &["done", "rejected", "failed"];

pub fn run(config: &Config, args: &BackfillArgs) -> Result<ExitCode> {
    let settings = &config.backfill;
    let teacher = &settings.teacher;
    if settings.concurrency == 0 || settings.max_attempts == 0 {
        bail!("backfill.concurrency and backfill.max_attempts must be at least 1");
    }
    let format = config.format()?;
    let (model, priced) = models::teacher(config)?;
    Teacher::new(model.as_ref(), format.as_ref(), settings.max_attempts)
        .map_err(|error| anyhow!("run.format = {:?}: {error}", config.run.format))?;

    let out = &args.out;
    let jobs = plan(&args.files, out)?;
    run_dir::prepare(
        out,
        &["trajectories", "rejected"],
        config,
        args.redo,
        RESULT_KEYS,
        "backfill every trajectory again",
    )?;
    let pending: Vec<usize> = (0..jobs.len())
        .filter(|&index| args.redo || matches!(jobs[index].state(), State::Open))
        .collect();
    eprintln!(
        "{} trajectories to backfill, {} already done or rejected; teacher {}, window {}, {} at \
         once",
        pending.len(),
        jobs.len() - pending.len(),
        teacher.model,
        describe(settings.window),
        settings.concurrency
    );

    let started = Instant::now();
    let shared = Arc::new(Shared {
        model,
        format,
        window: settings.window,
        seed: settings.seed,
        max_attempts: settings.max_attempts,
        spent: Mutex::new(Spent::default()),
    });
    let jobs = Arc::new(jobs);
    let results = batch::run_shown(
        pending
            .iter()
            .map(|&index| (jobs[index].name.clone(), index))
            .collect(),
        settings.concurrency,
        COUNTS,
        |index| {
            let (shared, jobs) = (shared.clone(), jobs.clone());
            async move { jobs[index].run(&shared).await }
        },
        ended,
    )?;

    let failed: Vec<summary::Failure> = pending
        .iter()
        .zip(&results)
        .filter_map(|(&index, result)| {
            Some(summary::Failure {
                id: jobs[index].name.clone(),
                error: result.as_ref().err()?.clone(),
            })
        })
        .collect();
    let this_time = *shared.spent.lock().unwrap_or_else(|e| e.into_inner());
    let summary = summary::summarize(
        out,
        &jobs,
        summary::Invocation {
            trajectories_run: pending.len(),
            teacher: this_time,
            wall_seconds: started.elapsed().as_secs_f64(),
        },
        priced,
        failed,
    )?;
    print!("{}", summary::render(&summary, out));
    Ok(batch::exit_code(summary.failed.len()))
}

/// What every job shares.
struct Shared {
    model: Arc<dyn Model>,
    format: Box<dyn ToolFormat>,
    window: WindowPolicy,
    seed: u64,
    max_attempts: u32,
    /// What the teacher took in this invocation, over every job.
    spent: Mutex<Spent>,
}

/// One trajectory to backfill, and where its results go.
pub struct Job {
    /// The file it was read from.
    source: PathBuf,
    trajectory: Trajectory,
    /// The trajectory id, as a file name.
    name: String,
    /// The backfilled trajectory.
    output: PathBuf,
    /// Why it was rejected, when it was.
    rejected: PathBuf,
}

/// Where a job stands in the output directory.
enum State {
    /// Backfilled: the steps of the trajectory written and what the teacher took.
    Done { steps: usize, spent: Spent },
    /// Rejected, for the recorded reason.
    Rejected(Rejection),
    /// Neither (or its file is unreadable): to be run.
    Open,
}

/// The record of a rejected trajectory (`rejected/<id>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Rejection {
    id: String,
    source: PathBuf,
    reason: String,
    teacher: String,
    #[serde(flatten)]
    spent: Spent,
}

/// How a job ended.
enum Finished {
    Done { steps: usize, spent: Spent },
    Rejected { reason: String, spent: Spent },
}

/// The jobs of every trajectory in `files`, with their files in `out`; two trajectories
/// with the same id are an error.
fn plan(files: &[PathBuf], out: &Path) -> Result<Vec<Job>> {
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
    fn state(&self) -> State {
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
    async fn run(&self, shared: &Shared) -> Result<Finished, String> {
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

/// How a job's end is shown.
fn ended(result: &Result<Finished, String>) -> Ended {
    match result {
        Ok(Finished::Done { steps, spent }) => Ended {
            line: format!("done         {steps} steps, {} teacher calls", spent.calls),
            count: Some(0),
            cost: spent.cost,
        },
        Ok(Finished::Rejected { reason, spent }) => Ended {
            line: format!("rejected     {}", reason.lines().next().unwrap_or("")),
            count: Some(1),
            cost: spent.cost,
        },
        Err(error) => Ended::failed(error, 2),
    }
}

/// A window as `--window` writes it.
fn describe(window: WindowPolicy) -> String {
    match window {
        WindowPolicy::Interleaved => "interleaved".into(),
        WindowPolicy::CurrentStep => "current_step".into(),
        WindowPolicy::Last(n) => n.to_string(),
        WindowPolicy::Random { min, max } => format!("{min}..{max}"),
    }
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
