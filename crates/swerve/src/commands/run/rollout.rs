//! One rollout: a fresh workspace for the task, the agent loop writing the trajectory step by
//! step, then the patch, its grade when the run evaluates (in a fresh workspace, by
//! SWE-bench's rules), and the outcome. Runs inside a [`ROLLOUT_SPAN`] so everything it logs
//! lands in its own log file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use swerve_agent::episode::Agent;
use swerve_agent::prompt::Prompts;
use swerve_agent::reasoning::Window;
use swerve_chat::ChatModel;
use swerve_core::Task;
use swerve_core::trajectory::{Header, Outcome, TrajectoryWriter, read_trajectory};
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::spec::RecipeTable;
use swerve_llm::Model;
use swerve_sandbox::{Cache, RepoMap};
use swerve_tools::WorkspaceFs;
use swerve_tools::formats::ToolFormat;
use tracing::Instrument;

use super::world::{World, WorldInterceptor, WorldStats};
use crate::config::Config;
use crate::logging::ROLLOUT_SPAN;
use crate::open;

/// What every rollout of a run shares.
pub struct Shared {
    pub config: Config,
    /// The resolved configuration as JSON, recorded in each trajectory's header.
    pub config_json: serde_json::Value,
    pub cache: Cache,
    pub task_file: PathBuf,
    pub format: Box<dyn ToolFormat>,
    pub prompts: Prompts,
    /// How patches are graded, when the run evaluates them.
    pub evaluation: Option<Evaluation>,
    /// The chat template prompts are rendered with, in prompt-rendered mode.
    pub renderer: Option<ChatModel>,
    /// SWE-World's router and transition model, when `run.env = "world"`.
    pub world: Option<Arc<World>>,
}

/// What grading a rollout's patch needs.
pub struct Evaluation {
    pub repos: RepoMap,
    pub recipes: RecipeTable,
    pub settings: EvalSettings,
}

/// One rollout to run: a task, which sample of it, and where its files go.
pub struct Rollout {
    pub task: Task,
    pub sample: usize,
    /// The trajectory (JSON lines).
    pub path: PathBuf,
    /// The human-readable log.
    pub log: PathBuf,
}

impl Rollout {
    /// The rollout's files in the run directory `out`.
    pub fn new(out: &Path, task: &Task, sample: usize) -> Self {
        let id = format!("{}__{sample}", task.instance_id);
        Self {
            task: task.clone(),
            sample,
            path: out.join("trajectories").join(format!("{id}.jsonl")),
            log: out.join("logs").join(format!("{id}.log")),
        }
    }

    /// `<instance_id>__<sample>`: the trajectory id and the `X-Session-ID` of its requests.
    pub fn id(&self) -> String {
        format!("{}__{}", self.task.instance_id, self.sample)
    }

    /// Whether the trajectory has its outcome (a rollout cut off by a crash has not).
    pub fn finished(&self) -> bool {
        read_trajectory(&self.path).is_ok_and(|read| read.trajectory.outcome.is_some())
    }

    /// Runs the rollout to its end, logging to its log file; returns its outcome.
    pub async fn run(&self, shared: &Shared, model: &dyn Model) -> Result<Outcome> {
        // A fresh start: the log of an earlier, interrupted attempt is replaced.
        std::fs::write(&self.log, b"")?;
        let span = tracing::info_span!(ROLLOUT_SPAN, log = %self.log.display());
        async {
            tracing::info!(id = %self.id(), model = model.name(), "rollout started");
            let result = self.run_logged(shared, model).await;
            match &result {
                Ok(outcome) => tracing::info!(
                    exit_reason = outcome.exit_reason.as_str(),
                    detail = outcome.exit_detail.as_deref().unwrap_or(""),
                    patch_bytes = outcome.patch.len(),
                    "rollout ended"
                ),
                Err(error) => tracing::error!("rollout failed: {error:#}"),
            }
            result
        }
        .instrument(span)
        .await
    }

    async fn run_logged(&self, shared: &Shared, model: &dyn Model) -> Result<Outcome> {
        let Shared {
            config,
            config_json,
            cache,
            task_file,
            format,
            prompts,
            evaluation,
            renderer,
            world,
        } = shared;
        let format = format.as_ref();
        let workspace =
            tokio::task::block_in_place(|| open::workspace(config, cache, task_file, &self.task))?;
        tracing::info!(
            workspace = %workspace.host_root().display(),
            strategy = ?workspace.strategy(),
            "workspace ready"
        );
        let mut toolbox = open::toolbox(config, &workspace);
        let world_stats = Arc::new(Mutex::new(WorldStats::default()));
        if let Some(world) = world {
            toolbox = toolbox.with_interceptor(Box::new(WorldInterceptor::new(
                world.clone(),
                self.task.clone(),
                WorkspaceFs::with_sandbox_root(
                    &workspace.base().path,
                    &config.sandbox.mount_point.to_string_lossy(),
                ),
                workspace.shell(),
                world_stats.clone(),
            )));
        }
        let agent = Agent {
            model,
            format,
            prompts,
            config: &config.agent,
            renderer: renderer.as_ref(),
        };
        let opening = agent.opening(
            &self.task,
            &toolbox,
            &config.sandbox.mount_point.to_string_lossy(),
        )?;
        let mut header = Header::new(self.id(), self.task.instance_id.clone());
        header.config = config_json.clone();
        header.prompt = opening.clone();
        if let Window::Last(n) = config.agent.reasoning.policy(&self.id()).window {
            header
                .extra
                .insert("reasoning_window".into(), serde_json::Value::from(n));
        }
        let mut writer = TrajectoryWriter::create(&self.path, &header)?;
        let end = agent
            .run(opening, &mut toolbox, &mut writer, &self.id())
            .await?;
        let patch = tokio::task::block_in_place(|| workspace.patch(&config.patch))?;
        tokio::task::block_in_place(|| workspace.destroy())?;
        let mut outcome = Outcome::new(end.exit_reason, patch.diff);
        outcome.exit_detail = end.detail;
        outcome.cost = Some(end.cost);
        outcome.usage = Some(end.usage);
        outcome.timings = end.timings;
        if world.is_some() {
            let stats = world_stats
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            outcome
                .extra
                .insert("world".into(), serde_json::to_value(&stats)?);
        }
        if let Some(evaluation) = evaluation {
            let evaluator = Evaluator {
                cache,
                repos: &evaluation.repos,
                recipes: &evaluation.recipes,
                settings: evaluation.settings.clone(),
            };
            let patch = Some(outcome.patch.as_str()).filter(|patch| !patch.is_empty());
            let report = tokio::task::block_in_place(|| evaluator.evaluate(&self.task, patch));
            tracing::info!(
                resolved = report.resolved,
                error = report.error.as_deref().unwrap_or(""),
                "graded"
            );
            outcome.reward = Some(if report.resolved { 1.0 } else { 0.0 });
            outcome.eval_report = Some(serde_json::to_value(&report)?);
        }
        writer.finish(&outcome)?;
        Ok(outcome)
    }
}
