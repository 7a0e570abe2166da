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

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use swerve_core::trajectory::{ExitReason, Outcome};

use crate::batch::{self, Ended};
use crate::cli::RunArgs;
use swerve_cluster::rollouts;
use swerve_rollout::config::Config;
use swerve_rollout::config::cluster::Backend;
use swerve_rollout::models::ModelSource;
use swerve_rollout::open;
use swerve_rollout::rollout::{Rollout, RunContext};
use swerve_rollout::run_dir;
use swerve_rollout::summary::{Failure, summarize};

/// Settings whose change would make a run directory mix rollouts of different set-ups.
const RESULT_KEYS: &[&str] = &[
    "agent",
    "prompts",
    "tools",
    "patch",
    "run.format",
    "run.demos",
    "run.eval",
    "run.evaluator",
    "run.recipes",
    "run.tokenizer",
    "run.env",
    // Every world setting but where samples are recorded (`world.record`), and the models'
    // endpoints, timeouts and retries, as for `model`.
    "world.transition_model.name",
    "world.transition_model.path",
    "world.transition_model.sampling",
    "world.transition_model.extra_body",
    "world.reward_model.name",
    "world.reward_model.path",
    "world.reward_model.sampling",
    "world.reward_model.extra_body",
    "world.analysis_model.name",
    "world.analysis_model.path",
    "world.analysis_model.sampling",
    "world.analysis_model.extra_body",
    "world.analysis",
    "world.router",
    "world.context",
    "world.prompts",
    "world.swt",
    "world.swr",
    "edit.commands",
    "edit.matching",
    "edit.format",
    "edit.viewer.name",
    "edit.viewer.sampling",
    "edit.editor.name",
    "edit.editor.sampling",
    "model.name",
    "model.path",
    "model.mode",
    "model.sampling",
    "model.extra_body",
    "reward",
];

pub fn run(config: &Config, args: RunArgs) -> Result<ExitCode> {
    let tasks = open::selected_tasks(&args.tasks, &args.ids)?;
    if config.run.samples == 0 || config.run.concurrency == 0 {
        bail!("run.samples and run.concurrency must be at least 1");
    }
    swerve_rollout::reward::check_run_reward(config)?;
    let source = Arc::new(ModelSource::new(config, &tasks)?);
    let out = &args.out;
    let shared = Arc::new(RunContext::new(config, &args.tasks, out.join("eval-logs"))?);
    run_dir::prepare(
        out,
        &["trajectories", "logs"],
        config,
        args.redo,
        RESULT_KEYS,
        "run every rollout again",
    )?;

    let cluster = match config.cluster.backend {
        Backend::Ray => Some(Arc::new(crate::cluster::start(
            config,
            &args.tasks,
            &args.out,
            None,
        )?)),
        Backend::Local => None,
    };
    let concurrency = cluster
        .as_ref()
        .map_or(config.run.concurrency, |cluster| cluster.jobs_at_once());
    let rollouts: Vec<Rollout> = tasks
        .iter()
        .flat_map(|task| (0..config.run.samples).map(move |sample| Rollout::new(out, task, sample)))
        .collect();
    let pending: Vec<usize> = (0..rollouts.len())
        .filter(|&index| args.redo || !rollouts[index].finished())
        .collect();
    eprintln!(
        "{} rollouts to run, {} already finished; model {}, format {}, {} at once",
        pending.len(),
        rollouts.len() - pending.len(),
        config.model.model,
        shared.format.name(),
        concurrency
    );
    let started = Instant::now();
    let rollouts = Arc::new(rollouts);
    let results = batch::run_shown(
        pending
            .iter()
            .map(|&index| (rollouts[index].id(), index))
            .collect(),
        concurrency,
        COUNTS,
        |index| {
            let (shared, rollouts, source) = (shared.clone(), rollouts.clone(), source.clone());
            let (cluster, out) = (cluster.clone(), out.clone());
            async move {
                let rollout = &rollouts[index];
                match (&cluster, source.for_task(&rollout.task)) {
                    (Some(cluster), _) => {
                        let key = rollouts::locality_key(&shared.config, &rollout.task);
                        rollouts::run(cluster, &out, rollout, &key).await
                    }
                    (None, Ok(model)) => rollout.run(&shared, model.as_ref()).await,
                    (None, Err(error)) => Err(error),
                }
                .map_err(|error| format!("{error:#}"))
            }
        },
        ended,
    )?;
    let results: Vec<(usize, Result<Outcome, String>)> =
        pending.iter().copied().zip(results).collect();

    let failed: Vec<Failure> = results
        .iter()
        .filter_map(|(index, result)| {
            let error = result.as_ref().err()?;
            Some(Failure {
                id: rollouts[*index].id(),
                error: error.clone(),
                log: rollouts[*index].log.display().to_string(),
            })
        })
        .collect();
    let ran: BTreeSet<String> = pending.iter().map(|&index| rollouts[index].id()).collect();
    let summary = summarize(
        out,
        &rollouts,
        &ran,
        &config.model.model,
        source.is_priced(),
        failed,
        started.elapsed().as_secs_f64(),
    )?;
    print!("{}", summary::render(&summary, out));
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
