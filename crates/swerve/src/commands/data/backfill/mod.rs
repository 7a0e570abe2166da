//! `swerve data backfill`: SWE-AGILE reasoning and digests written into existing
//! trajectories by a teacher model ([`swerve_rollout::backfill`]), `backfill.concurrency`
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

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use swerve_agent::agile::WindowPolicy;
use swerve_rollout::backfill::{
    Backfill, Failure, Finished, Invocation, NON_RESULT_KEYS, State, plan, summarize,
};

use crate::batch::{self, Ended};
use crate::cli::BackfillArgs;
use swerve_rollout::config::Config;
use swerve_rollout::run_dir;

/// The counts the progress display keeps (see [`Ended::count`]).
const COUNTS: &[&str] = &["done", "rejected", "failed"];

pub fn run(config: &Config, args: &BackfillArgs) -> Result<ExitCode> {
    let settings = &config.backfill;
    let shared = Arc::new(Backfill::new(config)?);
    let out = &args.out;
    let jobs = plan(&args.files, out)?;
    run_dir::prepare(
        out,
        &["trajectories", "rejected"],
        config,
        args.redo,
        NON_RESULT_KEYS,
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
        settings.teacher.model,
        describe(settings.window),
        settings.concurrency
    );

    let started = Instant::now();
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

    let failed: Vec<Failure> = pending
        .iter()
        .zip(&results)
        .filter_map(|(&index, result)| {
            Some(Failure {
                id: jobs[index].name.clone(),
                error: result.as_ref().err()?.clone(),
            })
        })
        .collect();
    let summary = summarize(
        out,
        &jobs,
        Invocation {
            trajectories_run: pending.len(),
            teacher: shared.spent(),
            wall_seconds: started.elapsed().as_secs_f64(),
        },
        shared.priced,
        failed,
    )?;
    print!("{}", summary::render(&summary, out));
    Ok(batch::exit_code(summary.failed.len()))
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
