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

mod models;
mod progress;
mod resources;
mod rollout;
mod summary;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use swerve_agent::prompt::Prompts;
use swerve_core::atomic::write_atomically;
use swerve_tools::formats;

use crate::cli::RunArgs;
use crate::commands::eval;
use crate::config::Config;
use crate::open;
use models::ModelSource;
use progress::Progress;
use rollout::{Evaluation, Rollout, Shared};
use summary::Failure;

/// Settings whose change would make a run directory mix rollouts of different set-ups.
const RESULT_KEYS: &[&str] = &[
    "agent",
    "prompts",
    "tools",
    "patch",
    "run.format",
    "run.demos",
    "run.eval",
    "run.recipes",
    "run.tokenizer",
    "model.name",
    "model.mode",
    "model.sampling",
    "model.extra_body",
];

pub fn run(config: &Config, args: RunArgs) -> Result<ExitCode> {
    let tasks = open::selected_tasks(&args.tasks, &args.ids)?;
    if config.run.samples == 0 || config.run.concurrency == 0 {
        bail!("run.samples and run.concurrency must be at least 1");
    }
    let format = formats::from_name(&config.run.format).with_context(|| {
        format!(
            "unknown tool-call format {:?} (run.format, --format); choose one of {}",
            config.run.format,
            formats::FORMAT_NAMES.join(", ")
        )
    })?;
    let prompts = Prompts::new(&config.prompts)?;
    let source = Arc::new(ModelSource::new(config, &tasks)?);
    let renderer = models::prompt_renderer(config, format.as_ref())?;
    let out = &args.out;
    for dir in [out.join("trajectories"), out.join("logs")] {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    save_config(config, out, args.redo)?;

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
        format.name(),
        config.run.concurrency
    );

    let evaluation = match config.run.eval {
        true => Some(Evaluation {
            repos: config.repo_map(&args.tasks),
            recipes: eval::recipes(config.run.recipes.as_deref())?,
            settings: eval::settings(config, out.join("eval-logs")),
        }),
        false => None,
    };
    let shared = Arc::new(Shared {
        evaluation,
        renderer,
        config: config.clone(),
        config_json: serde_json::to_value(config)?,
        cache: config.cache()?,
        task_file: args.tasks.clone(),
        format,
        prompts,
    });
    let started = Instant::now();
    let rollouts = Arc::new(rollouts);
    let progress = Arc::new(Progress::new(pending.len()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let results = runtime.block_on(async {
        let semaphore = Arc::new(tokio::sync::Semaphore::new(config.run.concurrency));
        let mut handles = Vec::new();
        for &index in &pending {
            let permit = semaphore
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let (shared, rollouts, progress, source) = (
                shared.clone(),
                rollouts.clone(),
                progress.clone(),
                source.clone(),
            );
            let handle = tokio::spawn(async move {
                let _permit = permit;
                let rollout = &rollouts[index];
                progress.started();
                let result = match source.for_task(&rollout.task) {
                    Ok(model) => rollout.run(&shared, model.as_ref()).await,
                    Err(error) => Err(error),
                }
                .map_err(|error| format!("{error:#}"));
                progress.finished(&rollout.id(), &result);
                result
            });
            handles.push((index, handle));
        }
        let mut results = Vec::new();
        for (index, handle) in handles {
            let result = handle
                .await
                .unwrap_or_else(|panic| Err(format!("the rollout panicked: {panic}")));
            results.push((index, result));
        }
        results
    });
    progress.finish();

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
    let summary = summary::summarize(
        out,
        &rollouts,
        &ran,
        &config.model.model,
        source.is_priced(),
        failed,
        started.elapsed().as_secs_f64(),
    )?;
    print!("{}", summary::render(&summary, out));
    Ok(if summary.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Writes the resolved configuration to `out/config.toml`, after checking that a run already
/// in `out` used the same result-changing settings (unless `redo` starts it over).
fn save_config(config: &Config, out: &Path, redo: bool) -> Result<()> {
    let path = out.join("config.toml");
    let text = config.to_toml()?;
    if !redo && let Ok(saved) = std::fs::read_to_string(&path) {
        let saved: toml::Table = saved
            .parse()
            .with_context(|| format!("{}: not a configuration file", path.display()))?;
        let current: toml::Table = text.parse()?;
        let changed: Vec<&str> = RESULT_KEYS
            .iter()
            .copied()
            .filter(|key| lookup(&saved, key) != lookup(&current, key))
            .collect();
        if !changed.is_empty() {
            bail!(
                "{} was run with different settings ({}); resuming would mix two set-ups in one \
                 run. Use a new --out, or --redo to run every rollout again with the new settings",
                out.display(),
                changed.join(", ")
            );
        }
    }
    write_atomically(&path, |file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The value at dotted `key` in `table`.
fn lookup<'a>(table: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}
