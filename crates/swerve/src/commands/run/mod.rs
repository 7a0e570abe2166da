//! `swerve run`: run the agent on tasks, `--samples K` rollouts each, concurrently; write each
//! rollout's trajectory as it goes, the patches as SWE-bench predictions, and a summary.
//!
//! Layout of `--out DIR`: `trajectories/<instance_id>__<sample>.jsonl` (one per rollout,
//! appended step by step), `preds.jsonl` (SWE-bench predictions, sample 0 of each task),
//! `summary.json`, and `config.json` (the resolved configuration). Runs resume by default: a
//! rollout whose trajectory already has its outcome is skipped (`--redo` runs it again); one
//! cut off by a crash is started over.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::json;
use swerve_agent::episode::{Agent, AgentConfig};
use swerve_agent::prompt::{PromptTemplates, Prompts};
use swerve_core::Task;
use swerve_core::atomic::write_atomically;
use swerve_core::trajectory::{ExitReason, Header, Outcome, TrajectoryWriter, read_trajectory};
use swerve_llm::{HttpModel, HttpModelConfig, Model, ReplayModel};
use swerve_sandbox::Cache;
use swerve_tools::formats::{self, ToolFormat};

use crate::cli::RunArgs;
use crate::commands::demo;
use crate::config::Config;
use crate::open;

/// What every rollout of a run shares.
struct Shared {
    config: Config,
    cache: Cache,
    task_file: PathBuf,
    format: Box<dyn ToolFormat>,
    prompts: Prompts,
    agent_config: AgentConfig,
}

/// One rollout to run.
struct Rollout {
    task: Task,
    sample: usize,
    path: PathBuf,
}

impl Rollout {
    fn id(&self) -> String {
        format!("{}__{}", self.task.instance_id, self.sample)
    }
}

pub fn run(config: &Config, args: RunArgs) -> Result<ExitCode> {
    let tasks = open::selected_tasks(&args.tasks, &args.ids)?;
    let format = formats::from_name(&args.format).with_context(|| {
        format!(
            "unknown --format {:?}; choose one of {}",
            args.format,
            formats::FORMAT_NAMES.join(", ")
        )
    })?;
    let agent_config = AgentConfig {
        max_steps: args.max_steps,
        ..AgentConfig::default()
    };
    let prompts = Prompts::new(&PromptTemplates::default())?;
    let trajectories = args.out.join("trajectories");
    std::fs::create_dir_all(&trajectories)
        .with_context(|| format!("cannot create {}", trajectories.display()))?;
    let resolved = json!({ "tasks": args.tasks, "model": args.model, "base_url": args.base_url, "format": args.format, "samples": args.samples, "agent": agent_config });
    write_json(&args.out.join("config.json"), &resolved)?;

    let rollouts: Vec<Rollout> = tasks
        .iter()
        .flat_map(|task| (0..args.samples.max(1)).map(move |sample| (task, sample)))
        .map(|(task, sample)| Rollout {
            task: task.clone(),
            sample,
            path: trajectories.join(format!("{}__{sample}.jsonl", task.instance_id)),
        })
        .collect();
    let pending: Vec<Rollout> = rollouts
        .into_iter()
        .filter(|rollout| args.redo || !finished(&rollout.path))
        .collect();
    let total = tasks.len() * args.samples.max(1);
    eprintln!(
        "{} rollouts to run, {} already finished",
        pending.len(),
        total - pending.len()
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let done = Arc::new(AtomicUsize::new(0));
    let shared = Arc::new(Shared {
        config: config.clone(),
        cache: config.cache()?,
        task_file: args.tasks.clone(),
        format,
        prompts,
        agent_config,
    });
    let started = Instant::now();
    let results = runtime.block_on(async {
        let semaphore = Arc::new(tokio::sync::Semaphore::new(args.concurrency.max(1)));
        let mut handles = Vec::new();
        for rollout in pending {
            let permit = semaphore
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let model = model_for(&args, &rollout)?;
            let (shared, done) = (shared.clone(), done.clone());
            handles.push(tokio::spawn(async move {
                let _permit = permit;
                let id = rollout.id();
                let result = run_rollout(&shared, &rollout, model.as_ref()).await;
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                match &result {
                    Ok(outcome) => eprintln!(
                        "[{finished}] {id:<44} {:<12} {:.1} s",
                        outcome.exit_reason.as_str(),
                        started.elapsed().as_secs_f64()
                    ),
                    Err(error) => eprintln!("[{finished}] {id:<44} ERROR {error:#}"),
                }
                result.map_err(|error| format!("{error:#}"))
            }));
        }
        let mut results = Vec::new();
        for handle in handles {
            results.push(
                handle
                    .await
                    .unwrap_or_else(|error| Err(format!("the rollout panicked: {error}"))),
            );
        }
        anyhow::Ok(results)
    })?;
    let failed = results.iter().filter(|result| result.is_err()).count();
    let summary = summarize(&tasks, &trajectories, args.samples.max(1), &args.model)?;
    write_json(&args.out.join("summary.json"), &summary)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&summary["exit_reasons"])?
    );
    println!(
        "{} rollouts, {} submitted, {failed} failed to run; predictions in {}",
        summary["rollouts"],
        summary["submitted"],
        args.out.join("preds.jsonl").display()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether the trajectory at `path` has its outcome.
fn finished(path: &Path) -> bool {
    read_trajectory(path).is_ok_and(|read| read.trajectory.outcome.is_some())
}

/// The model for one rollout: a replay of the task's demonstration, or a served model.
fn model_for(args: &RunArgs, rollout: &Rollout) -> Result<Arc<dyn Model>> {
    if args.model == "replay" {
        let path = args
            .demos
            .join(format!("{}.json", rollout.task.instance_id));
        let demonstration = demo::load(&path)?;
        let format = formats::from_name(&args.format).context("unknown format")?;
        let turns = demonstration
            .calls
            .iter()
            .map(|call| format.render_call("", call, None).content)
            .collect();
        return Ok(Arc::new(ReplayModel::new(turns)));
    }
    let base_url = args.base_url.clone().context(
        "--model NAME needs --base-url URL (an OpenAI-compatible server), or use --model replay",
    )?;
    let mut http = HttpModelConfig::new(base_url, args.model.clone());
    http.api_key_env = args.api_key_env.clone();
    http.timeout_secs = args.request_timeout;
    http.max_retries = args.max_retries;
    Ok(Arc::new(HttpModel::new(http)?))
}

/// Runs one rollout to its end and writes its trajectory; returns its outcome.
async fn run_rollout(shared: &Shared, rollout: &Rollout, model: &dyn Model) -> Result<Outcome> {
    let Shared {
        config,
        cache,
        task_file,
        format,
        prompts,
        agent_config,
    } = shared;
    let format = format.as_ref();
    let workspace =
        tokio::task::block_in_place(|| open::workspace(config, cache, task_file, &rollout.task))?;
    let mut toolbox = open::toolbox(config, &workspace);
    let agent = Agent {
        model,
        format,
        prompts,
        config: agent_config,
    };
    let opening = agent.opening(
        &rollout.task,
        &toolbox,
        &config.sandbox.mount_point.to_string_lossy(),
    )?;
    let mut header = Header::new(rollout.id(), rollout.task.instance_id.clone());
    header.config =
        json!({ "model": model.name(), "format": format.name(), "agent": agent_config });
    header.prompt = opening.clone();
    let mut writer = TrajectoryWriter::create(&rollout.path, &header)?;
    let end = agent
        .run(opening, &mut toolbox, &mut writer, &rollout.id())
        .await?;
    let patch = tokio::task::block_in_place(|| workspace.patch(&config.patch))?;
    let mut outcome = Outcome::new(end.exit_reason, patch.diff);
    outcome.exit_detail = end.detail;
    outcome.cost = Some(end.cost);
    outcome.usage = Some(end.usage);
    outcome.timings = end.timings;
    writer.finish(&outcome)?;
    tokio::task::block_in_place(|| workspace.destroy())?;
    Ok(outcome)
}

/// Counts exit reasons over every finished trajectory and writes `preds.jsonl`.
fn summarize(tasks: &[Task], dir: &Path, samples: usize, model: &str) -> Result<serde_json::Value> {
    let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
    let (mut rollouts, mut submitted, mut cost) = (0, 0, 0.0);
    let mut predictions = String::new();
    for task in tasks {
        for sample in 0..samples {
            let Ok(read) =
                read_trajectory(dir.join(format!("{}__{sample}.jsonl", task.instance_id)))
            else {
                continue;
            };
            let Some(outcome) = read.trajectory.outcome else {
                continue;
            };
            rollouts += 1;
            *reasons.entry(outcome.exit_reason.as_str()).or_default() += 1;
            submitted += usize::from(outcome.exit_reason == ExitReason::Submitted);
            cost += outcome.cost.unwrap_or(0.0);
            if sample == 0 {
                predictions.push_str(&format!("{}\n", json!({"instance_id": task.instance_id, "model_name_or_path": model, "model_patch": outcome.patch})));
            }
        }
    }
    let path = dir.parent().unwrap_or(dir).join("preds.jsonl");
    write_atomically(&path, |out| out.write_all(predictions.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(
        json!({ "rollouts": rollouts, "submitted": submitted, "cost": cost, "exit_reasons": reasons }),
    )
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    let json = serde_json::to_vec_pretty(value)?;
    write_atomically(path, |out| out.write_all(&json))
        .with_context(|| format!("cannot write {}", path.display()))
}
