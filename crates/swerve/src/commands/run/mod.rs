//! `swerve run`: run the agent on tasks, `run.samples` rollouts each, `run.concurrency` at
//! once; write each rollout's trajectory as it goes, its log, the patches as SWE-bench
//! predictions, and a summary.
//!
//! Layout of `--out DIR`: `trajectories/<instance_id>__<sample>.jsonl` (appended step by
//! step), `logs/<instance_id>__<sample>.log` (what happened, in words), `preds.jsonl`
//! (sample 0 of each task), `summary.json`, and `config.toml` (the resolved configuration,
//! usable again with `--config`). Runs resume by default: a rollout whose trajectory has its
//! outcome is skipped (`--redo` runs it again); one cut off by a crash starts over. Resuming
//! with settings that change results is refused, so one directory never mixes two set-ups.

mod summary;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use swerve_core::trajectory::{ExitReason, Outcome};

use crate::batch::{self, Ended};
use crate::cli::RunArgs;
use swerve_cluster::rollouts;
use swerve_rollout::config::Config;
use swerve_rollout::config::cluster::Backend;
use swerve_rollout::open;
use swerve_rollout::run::Run;

pub fn run(config: &Config, args: RunArgs) -> Result<ExitCode> {
    let task_file = open::chosen_task_file(&args.tasks.choice(), &args.out)?;
    let run = Arc::new(Run::prepare(
        config, &task_file, &args.ids, &args.out, args.redo,
    )?);
    let cluster = match config.cluster.backend {
        Backend::Ray => Some(Arc::new(crate::cluster::start(
            config, &task_file, &args.out, None,
        )?)),
        Backend::Local => None,
    };
    let concurrency = cluster
        .as_ref()
        .map_or(config.run.concurrency, |cluster| cluster.jobs_at_once());
    eprintln!(
        "{} rollouts to run, {} already finished; model {}, format {}, {} at once",
        run.pending.len(),
        run.rollouts.len() - run.pending.len(),
        config.model.model,
        run.context.format.name(),
        concurrency
    );
    let started = Instant::now();
    let results = batch::run_shown(
        run.pending
            .iter()
            .map(|&index| (run.rollouts[index].id(), index))
            .collect(),
        concurrency,
        COUNTS,
        |index| {
            let (run, cluster) = (run.clone(), cluster.clone());
            async move {
                match &cluster {
                    Some(cluster) => {
                        let rollout = &run.rollouts[index];
                        let key = rollouts::locality_key(&run.context.config, &rollout.task);
                        rollouts::run(cluster, &run.out, rollout, &key)
                            .await
                            .map_err(|error| swerve_core::hint::chain(error.as_ref()))
                    }
                    None => run.run_local(index).await,
                }
            }
        },
        ended,
    )?;
    let summary = run.finish(&results, started)?;
    print!("{}", summary::render(&summary, &args.out));
    Ok(batch::exit_code(summary.failed.len()))
}

/// The counts the progress display keeps.
const COUNTS: &[&str] = &["submitted", "errors"];

/// How a rollout's end is shown: its exit reason (and grade), counted as submitted or as
/// an error.
fn ended(result: &Result<Outcome, String>) -> Ended {
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(error) => return Ended::failed(error, 1),
    };
    let count = match outcome.exit_reason {
        ExitReason::Submitted => Some(0),
        ExitReason::ModelError | ExitReason::EnvError | ExitReason::Error => Some(1),
        _ => None,
    };
    // A report's `resolved`: SWR's score is a mean, resolved from its threshold up.
    let grade = match outcome
        .eval_report
        .as_ref()
        .map(|report| &report["resolved"])
    {
        Some(serde_json::Value::Bool(true)) => " resolved",
        Some(_) => " unresolved",
        None => "",
    };
    Ended {
        line: format!("{:<12}{grade}", outcome.exit_reason.as_str()),
        count,
        cost: outcome.cost.unwrap_or(0.0),
    }
}
