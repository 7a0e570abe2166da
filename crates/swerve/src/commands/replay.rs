//! `swerve replay`: re-execute recorded trajectories in fresh workspaces of their tasks
//! (opened as `swerve run` opens them) through [`swerve_rollout::replay`], `run.concurrency`
//! at once on the run's progress display, and write the replayed trajectories and the
//! fidelity report.
//!
//! Layout of `--out DIR`: `trajectories/<id>.jsonl` (the recorded replies with swerve's
//! observations), `results/<id>.json` (each trajectory's report, written as it ends),
//! `report.json` ([`swerve_replay::ReplayReport`], over every trajectory in the order given),
//! `table.md` (its per-repository table), `throughput.json` (replay time beside the recorded
//! environment time), `config.toml` and, with `--grade`, `eval-logs/`. Replays resume by
//! default: a trajectory whose result is there is skipped (`--redo` replays it again);
//! resuming with settings that change results is refused.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use swerve_replay::TrajectoryReport;

use crate::batch::{self, Ended};
use crate::cli::ReplayArgs;
use swerve_rollout::config::Config;
use swerve_rollout::replay::ReplayRun;

/// The counts the progress display keeps (see [`Ended::count`]).
const COUNTS: &[&str] = &["patch equal", "diverging", "failed"];

/// Runs `swerve replay`.
pub fn run(config: &Config, args: ReplayArgs) -> Result<ExitCode> {
    let replay = Arc::new(ReplayRun::prepare(
        config,
        &args.files,
        &args.tasks,
        &args.out,
        args.redo,
    )?);
    eprintln!(
        "{} trajectories to replay, {} already replayed; {} at once",
        replay.pending.len(),
        replay.jobs.len() - replay.pending.len(),
        config.run.concurrency
    );
    let outcomes = batch::run_shown(
        replay
            .pending
            .iter()
            .map(|&index| (replay.jobs[index].name.clone(), index))
            .collect(),
        config.run.concurrency,
        COUNTS,
        |index| replay.clone().replay_local(index),
        ended,
    )?;
    let report = replay.finish(&outcomes)?;
    let table = report.table();
    print!("{table}");
    Ok(batch::exit_code(report.total.failed))
}

/// How a trajectory's end is shown: its step counts and patch, counted as an equal patch,
/// as diverging or as failed.
fn ended(result: &Result<TrajectoryReport, String>) -> Ended {
    let report = match result {
        Ok(report) => report,
        Err(error) => return Ended::failed(error, 2),
    };
    if let Some(error) = &report.error {
        return Ended::failed(&format!("not replayed: {error}"), 2);
    }
    let steps = &report.agreement;
    let patch_equal = report.patch.as_ref().map(|patch| patch.equal);
    Ended {
        line: format!(
            "{} steps, {} agree, {} diverge, {} not replayable; patch {}",
            steps.steps,
            steps.agree,
            steps.diverge,
            steps.not_replayable,
            match patch_equal {
                Some(true) => "equal",
                Some(false) => "differs",
                None => "not recorded",
            }
        ),
        count: match (patch_equal, steps.diverge) {
            (_, 1..) => Some(1),
            (Some(true), 0) => Some(0),
            _ => None,
        },
        cost: 0.0,
    }
}
