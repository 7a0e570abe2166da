//! One rollout: a fresh environment for the task ([`open::environment`]), the agent loop writing the trajectory step by
//! step, then the patch, its grade when the run evaluates (in a fresh workspace, by
//! SWE-bench's rules), and the outcome. Runs inside a [`ROLLOUT_SPAN`] so everything it logs
//! lands in its own log file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use swerve_agent::agile::Window;
use swerve_agent::episode::{Agent, EpisodeEnd};
use swerve_agent::prompt::Prompts;
use swerve_chat::ChatModel;
use swerve_core::Task;
use swerve_core::trajectory::{
    Header, Message, Outcome, Trajectory, TrajectoryWriter, read_trajectory,
};
use swerve_edit::EditMetrics;
use swerve_eval::grader::{Grade, Grader};
use swerve_llm::Model;
use swerve_sandbox::{Cache, Environment};
use swerve_tools::formats::ToolFormat;
use swerve_tools::{Toolbox, WorkspaceFs};
use swerve_world::environment::record::Recorder;
use swerve_world::environment::{World, WorldInterceptor, WorldStats};
use tracing::Instrument;

use crate::config::Config;
use crate::edit::EditTools;
use crate::{grading, models, open, reward, world};

/// The name of the span a rollout runs in; its `log` field names the log file, where the
/// command line's logging puts every event of the rollout.
pub const ROLLOUT_SPAN: &str = "rollout";

/// The outcome's `extra` key of the rollout's edit metrics (`swerve_edit::metrics`).
pub const EDIT_METRICS_KEY: &str = "edit";

/// What every rollout of a run shares.
pub struct RunContext {
    /// The run's configuration.
    pub config: Config,
    /// The resolved configuration as JSON, recorded in each trajectory's header.
    pub config_json: serde_json::Value,
    /// Base checkouts and workspace layers.
    pub cache: Cache,
    /// The task file (its tasks' repositories are found from it).
    pub task_file: PathBuf,
    /// The tool-call format.
    pub format: Box<dyn ToolFormat>,
    /// The agent's prompts.
    pub prompts: Prompts,
    /// How patches are graded, when the run evaluates them (`run.eval`).
    pub grader: Option<Arc<dyn Grader>>,
    /// The chat template prompts are rendered with, in prompt-rendered mode.
    pub renderer: Option<ChatModel>,
    /// SWE-World's router and transition model, when `run.env = "world"`.
    pub world: Option<Arc<World>>,
    /// Records world-model training data, when `world.record.dir` is set.
    pub recorder: Option<Arc<Recorder>>,
    /// SWE-Edit's `llm_editor` and its subagent models, when `edit.commands` offers it.
    pub edit: Option<EditTools>,
}

impl RunContext {
    /// What rollouts under `config` share, for tasks loaded from `task_file` (their
    /// repositories are found from it); graded patches log to `eval_logs`.
    pub fn new(config: &Config, task_file: &Path, eval_logs: PathBuf) -> Result<Self> {
        Self::build(config, task_file, config.run.eval.then_some(eval_logs))
    }

    /// What the environments of a trainer's episodes under `config` share (the gym
    /// environments, [`crate::gym::GymEnv`]): everything [`RunContext::new`] makes but the
    /// grader, which the front end keeps.
    pub fn for_environments(config: &Config, task_file: &Path) -> Result<Self> {
        Self::build(config, task_file, None)
    }

    fn build(config: &Config, task_file: &Path, eval_logs: Option<PathBuf>) -> Result<Self> {
        let format = config.format()?;
        let analyses = grading::analyses(config)?;
        let world::WorldParts { world, recorder } = world::parts(config, task_file, &analyses)?;
        let grader = match eval_logs {
            Some(eval_logs) => Some(grading::grader(
                config,
                config.run.evaluator,
                task_file,
                config.eval_settings(eval_logs),
                &analyses,
            )?),
            None => None,
        };
        Ok(Self {
            grader,
            renderer: models::prompt_renderer(config, format.as_ref())?,
            world,
            recorder,
            edit: EditTools::new(config)?,
            config: config.clone(),
            config_json: serde_json::to_value(config)?,
            cache: config.cache()?,
            task_file: task_file.to_path_buf(),
            prompts: Prompts::new(&config.prompts)?,
            format,
        })
    }

    /// The agent every episode under this context runs (its model is given per episode).
    pub fn agent(&self) -> Agent<'_> {
        Agent {
            format: self.format.as_ref(),
            prompts: &self.prompts,
            config: &self.config.agent,
            renderer: self.renderer.as_ref(),
        }
    }

    /// The environment of the trajectory `id` of `task` with everything the configuration
    /// turns on: a fresh sandboxed workspace ([`open::environment`]) with the native tools
    /// over it, SWE-World's recorder (`world.record.dir`) or its simulation (`run.env =
    /// "world"`), and SWE-Edit's `llm_editor` (`edit.commands`). The one place an episode's
    /// tools are assembled, for rollouts and gym environments alike. Must be called inside
    /// a tokio runtime (the interceptors call their models on it); blocks while the
    /// workspace is made.
    pub fn open(&self, task: &Task, id: &str) -> Result<TaskEnvironment> {
        let config = &self.config;
        let environment = tokio::task::block_in_place(|| {
            open::environment(config, &self.cache, &self.task_file, task)
        })?;
        let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
        let base = || WorkspaceFs::with_sandbox_root(environment.base_root(), &mount_point);
        let mut toolbox = open::toolbox(config, environment.as_ref());
        if let Some(recorder) = &self.recorder {
            let (interceptor, shell) =
                recorder.for_rollout(id, task, base(), environment.shell())?;
            toolbox = Toolbox::new(toolbox.fs().clone(), shell, config.tools.clone())
                .with_interceptor(Box::new(interceptor));
        }
        let world_stats = self
            .world
            .as_ref()
            .map(|_| Arc::new(Mutex::new(WorldStats::default())));
        if let (Some(world), Some(stats)) = (&self.world, &world_stats) {
            toolbox = toolbox.with_interceptor(Box::new(WorldInterceptor::simulate(
                world.clone(),
                task.clone(),
                base(),
                environment.shell(),
                stats.clone(),
            )));
        }
        if let Some(edit) = &self.edit {
            let fs = toolbox.fs().clone();
            toolbox = toolbox.with_interceptor(Box::new(edit.interceptor(fs)));
        }
        Ok(TaskEnvironment {
            environment,
            toolbox,
            world_stats,
        })
    }

    /// The header of the trajectory `id` of `task`, which opens with `opening`: the resolved
    /// configuration, the opening messages, and the reasoning window drawn for it.
    pub fn header(&self, id: &str, task: &Task, opening: &[Message]) -> Header {
        let mut header = Header::new(id.to_owned(), task.instance_id.clone());
        header.config = self.config_json.clone();
        header.prompt = opening.to_vec();
        if let Window::Last(n) = self.config.agent.reasoning.policy(id).window {
            header
                .extra
                .insert("reasoning_window".into(), serde_json::Value::from(n));
        }
        header
    }
}

/// One episode's environment, from [`RunContext::open`].
pub struct TaskEnvironment {
    /// The sandboxed workspace (or image root) the commands run in.
    pub environment: Box<dyn Environment>,
    /// The tools over it, with the configuration's interceptors.
    pub toolbox: Toolbox,
    /// SWE-World's routing counts, when `run.env = "world"`.
    pub world_stats: Option<Arc<Mutex<WorldStats>>>,
}

/// One rollout to run: a task, which sample of it, and where its files go.
pub struct Rollout {
    /// The task.
    pub task: Task,
    /// Which sample of the task it is.
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
    pub async fn run(&self, context: &RunContext, model: &dyn Model) -> Result<Outcome> {
        // A fresh start: the log of an earlier, interrupted attempt is replaced.
        std::fs::write(&self.log, b"")?;
        let span = tracing::info_span!(ROLLOUT_SPAN, log = %self.log.display());
        async {
            tracing::info!(id = %self.id(), model = model.name(), "rollout started");
            let result = self.run_logged(context, model).await;
            match &result {
                Ok(outcome) => tracing::info!(
                    exit_reason = outcome.exit_reason.as_str(),
                    detail = outcome.exit_detail.as_deref().unwrap_or(""),
                    patch_bytes = outcome.patch.len(),
                    "rollout ended"
                ),
                Err(error) => tracing::error!(
                    "rollout failed: {}",
                    swerve_core::hint::chain(error.as_ref())
                ),
            }
            result
        }
        .instrument(span)
        .await
    }

    async fn run_logged(&self, context: &RunContext, model: &dyn Model) -> Result<Outcome> {
        let RunContext {
            config,
            grader,
            recorder,
            ..
        } = context;
        let TaskEnvironment {
            environment,
            mut toolbox,
            world_stats,
        } = context.open(&self.task, &self.id())?;
        let agent = context.agent();
        let opening = agent.opening(
            &self.task,
            &toolbox,
            &config.sandbox.mount_point.to_string_lossy(),
        )?;
        let header = context.header(&self.id(), &self.task, &opening);
        let mut writer = TrajectoryWriter::create(&self.path, &header)?;
        let end = agent
            .run(model, opening, &mut toolbox, &mut writer, &self.id())
            .await?;
        let patch = tokio::task::block_in_place(|| environment.patch(&config.patch))?;
        tokio::task::block_in_place(|| environment.destroy())?;
        let recorded = writer.trajectory();
        let mut outcome = episode_outcome(end, patch.diff, recorded, world_stats.as_deref())?;
        if let Some(grader) = grader {
            let patch = Some(outcome.patch.as_str()).filter(|patch| !patch.is_empty());
            let grade = grader.grade(&self.task, patch, Some(&self.id())).await;
            tracing::info!(
                score = ?grade.score,
                resolved = grade.resolved(),
                error = grade.report.error.as_deref().unwrap_or(""),
                "graded"
            );
            record_grade(&mut outcome, &grade, recorded, &self.path, config)?;
            if grader.runs_tests()
                && let Some(recorder) = recorder
                && let Err(error) = recorder
                    .record_grade(&self.id(), &self.task, &outcome.patch, &grade.report)
                    .await
            {
                tracing::warn!("cannot record the SWR sample: {error:#}");
            }
        }
        writer.finish(&outcome)?;
        Ok(outcome)
    }
}

/// The outcome of an episode that ended with `end` leaving `patch`, before grading: the exit,
/// the totals (the subagents' included), and the edit metrics and SWE-World's routing counts
/// computed from `recorded`, the episode's steps in memory.
pub fn episode_outcome(
    end: EpisodeEnd,
    patch: String,
    recorded: &Trajectory,
    world_stats: Option<&Mutex<WorldStats>>,
) -> Result<Outcome> {
    let mut outcome = Outcome::new(end.exit_reason, patch);
    outcome.exit_detail = end.detail;
    // Totals include the subagents; the edit metrics tell them apart.
    outcome.cost = Some(end.cost + end.subagent_cost);
    let mut usage = end.usage;
    usage += end.subagent_usage;
    outcome.usage = Some(usage);
    outcome.timings = end.timings;
    outcome.extra.insert(
        EDIT_METRICS_KEY.into(),
        serde_json::to_value(EditMetrics::of(recorded))?,
    );
    if let Some(world_stats) = world_stats {
        let stats = world_stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        outcome
            .extra
            .insert("world".into(), serde_json::to_value(&stats)?);
    }
    Ok(outcome)
}

/// Records `grade` in `outcome` (of the episode `recorded`, named `name` in errors) with
/// the reward `[reward]` shapes from it (`extra.reward`: the total and its terms).
pub fn record_grade(
    outcome: &mut Outcome,
    grade: &Grade,
    recorded: &Trajectory,
    name: &Path,
    config: &Config,
) -> Result<()> {
    // No reward (neither 1 nor 0) when grading failed for the machinery's reason.
    outcome.reward = crate::grading::reward_of(grade);
    outcome.eval_report = Some(grade.to_json());
    let reward = reward::rollout_reward(recorded, name, outcome, config)?;
    outcome.extra.insert(reward::REWARD_KEY.into(), reward);
    Ok(())
}
