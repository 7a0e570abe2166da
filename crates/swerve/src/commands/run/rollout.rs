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
use swerve_edit::EditMetrics;
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::report::InstanceReport;
use swerve_eval::spec::RecipeTable;
use swerve_llm::Model;
use swerve_sandbox::{Cache, RepoMap};
use swerve_tools::formats::ToolFormat;
use swerve_tools::{Toolbox, WorkspaceFs};
use tracing::Instrument;

use super::edit::EditTools;
use super::models;
use super::world::{World, WorldInterceptor, WorldParts, WorldStats};
use crate::config::{Config, EvaluatorKind};
use crate::logging::ROLLOUT_SPAN;
use crate::world::grading::SwrGrader;
use crate::world::record::Recorder;
use crate::{open, training};

/// The outcome's `extra` key of the rollout's edit metrics (`swerve_edit::metrics`).
pub const EDIT_METRICS_KEY: &str = "edit";

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
    /// SWE-World's reward model, when `run.evaluator = "swr"` grades the patches.
    pub swr: Option<SwrGrader>,
    /// Records world-model training data, when `world.record.dir` is set.
    pub recorder: Option<Arc<Recorder>>,
    /// SWE-Edit's `llm_editor` and its subagent models, when `edit.commands` offers it.
    pub edit: Option<EditTools>,
}

impl Shared {
    /// What rollouts under `config` share, for tasks loaded from `task_file` (their
    /// repositories are found from it); graded patches log to `eval_logs`.
    pub fn new(config: &Config, task_file: &Path, eval_logs: PathBuf) -> Result<Self> {
        let format = config.format()?;
        let world = WorldParts::new(config, task_file, &eval_logs)?;
        let evaluation = match config.run.eval && config.run.evaluator == EvaluatorKind::Tests {
            true => Some(Evaluation::new(config, task_file, eval_logs)?),
            false => None,
        };
        Ok(Self {
            evaluation,
            renderer: models::prompt_renderer(config, format.as_ref())?,
            world: world.world,
            swr: world.swr,
            recorder: world.recorder,
            edit: EditTools::new(config)?,
            config: config.clone(),
            config_json: serde_json::to_value(config)?,
            cache: config.cache()?,
            task_file: task_file.to_path_buf(),
            prompts: Prompts::new(&config.prompts)?,
            format,
        })
    }
}

/// What grading a rollout's patch needs.
pub struct Evaluation {
    pub repos: RepoMap,
    pub recipes: RecipeTable,
    pub settings: EvalSettings,
    /// Tasks' images, chosen as their workspaces' are.
    pub images: open::TaskImages,
}

impl Evaluation {
    /// Grading under `config` for tasks loaded from `task_file`, logging to `logs`.
    pub fn new(config: &Config, task_file: &Path, logs: PathBuf) -> Result<Self> {
        Ok(Self {
            repos: config.repo_map(task_file),
            recipes: RecipeTable::shipped_with(config.run.recipes.as_deref())
                .map_err(|error| anyhow::anyhow!("{error}"))?,
            settings: config.eval_settings(logs),
            images: open::TaskImages(config.clone()),
        })
    }

    /// Grades `patch` (empty: no patch) for `task` by SWE-bench's rules, in a fresh
    /// workspace of `cache`, its logs in `<logs>/<label>/<instance_id>/` (a rollout's or a
    /// session's id, so that samples of one task keep their logs apart). Blocks: call it on
    /// a blocking thread.
    pub fn grade(&self, cache: &Cache, task: &Task, patch: &str, label: &str) -> InstanceReport {
        let mut settings = self.settings.clone();
        settings.log_dir = settings.log_dir.map(|logs| logs.join(label));
        let evaluator = Evaluator {
            cache,
            repos: &self.repos,
            recipes: &self.recipes,
            settings,
            images: Some(&self.images),
        };
        evaluator.evaluate(task, Some(patch).filter(|patch| !patch.is_empty()))
    }
}

/// One rollout to run: a task, which sample of it, and where its files go.
pub struct Rollout {
    pub task: Task,
    pub sample: usize,
    /// The trajectory id, also the `X-Session-ID` of the rollout's model requests.
    id: String,
    /// The trajectory (JSON lines).
    pub path: PathBuf,
    /// The human-readable log.
    pub log: PathBuf,
}

impl Rollout {
    /// The rollout's files in the run directory `out`.
    pub fn new(out: &Path, task: &Task, sample: usize) -> Self {
        Self::named(out, task, sample, format!("{}__{sample}", task.instance_id))
    }

    /// A rollout whose trajectory id is `id` (a file name), its files in `out`.
    pub fn named(out: &Path, task: &Task, sample: usize, id: String) -> Self {
        Self {
            task: task.clone(),
            sample,
            path: out.join("trajectories").join(format!("{id}.jsonl")),
            log: out.join("logs").join(format!("{id}.log")),
            id,
        }
    }

    /// The trajectory id (`<instance_id>__<sample>` in `swerve run`) and the `X-Session-ID`
    /// of its requests.
    pub fn id(&self) -> String {
        self.id.clone()
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
            edit,
            swr,
            recorder,
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
        if let Some(recorder) = recorder {
            let base = WorkspaceFs::with_sandbox_root(
                &workspace.base().path,
                &config.sandbox.mount_point.to_string_lossy(),
            );
            let (interceptor, shell) =
                recorder.for_rollout(&self.id(), &self.task, base, workspace.shell())?;
            toolbox = Toolbox::new(toolbox.fs().clone(), shell, config.tools.clone())
                .with_interceptor(Box::new(interceptor));
        }
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
        if let Some(edit) = edit {
            let fs = toolbox.fs().clone();
            toolbox = toolbox.with_interceptor(Box::new(edit.interceptor(fs)));
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
        // Totals include the subagents; the edit metrics tell them apart.
        outcome.cost = Some(end.cost + end.subagent_cost);
        let mut usage = end.usage;
        usage += end.subagent_usage;
        outcome.usage = Some(usage);
        outcome.timings = end.timings;
        let recorded = read_trajectory(&self.path)?.trajectory;
        outcome.extra.insert(
            EDIT_METRICS_KEY.into(),
            serde_json::to_value(EditMetrics::of(&recorded))?,
        );
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
            let report = tokio::task::block_in_place(|| {
                evaluation.grade(cache, &self.task, &outcome.patch, &self.id())
            });
            tracing::info!(
                resolved = report.resolved,
                error = report.error.as_deref().unwrap_or(""),
                "graded"
            );
            outcome.reward = Some(if report.resolved { 1.0 } else { 0.0 });
            outcome.eval_report = Some(serde_json::to_value(&report)?);
            let reward = training::rollout_reward(&self.path, &mut outcome, config)?;
            outcome.extra.insert(training::REWARD_KEY.into(), reward);
            if let Some(recorder) = recorder
                && let Err(error) = recorder
                    .record_grade(&self.id(), &self.task, &outcome.patch, &report)
                    .await
            {
                tracing::warn!("cannot record the SWR sample: {error:#}");
            }
        }
        if let Some(grader) = swr {
            let patch = Some(outcome.patch.as_str()).filter(|patch| !patch.is_empty());
            let report = grader.grade(&self.task, patch, Some(&self.id())).await;
            tracing::info!(
                score = ?report.swr.score,
                resolved = report.report.resolved,
                error = report.report.error.as_deref().unwrap_or(""),
                "graded by the reward model"
            );
            outcome.reward = Some(report.swr.score.unwrap_or(0.0));
            outcome.eval_report = Some(serde_json::to_value(&report)?);
            let reward = training::rollout_reward(&self.path, &mut outcome, config)?;
            outcome.extra.insert(training::REWARD_KEY.into(), reward);
        }
        writer.finish(&outcome)?;
        Ok(outcome)
    }
}
