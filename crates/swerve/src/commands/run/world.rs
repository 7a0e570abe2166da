//! `run.env = "world"` (`--env world`): SWE-World's environment for one rollout. The agent's
//! tools work on the real sandbox, but every `execute_bash` call goes through the router
//! first: reads and navigation run for real, installs and refused commands get their fixed
//! replies, and commands that would run project code are answered by the transition model
//! (SWT) from the task, the agent's current patch and the files the command would execute.
//! [`WorldParts`] also holds a run's SWR grading and training-data recording.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use swerve_core::{Shell, Task, ToolCall};
use swerve_llm::Model;
use swerve_tools::{CallInterceptor, ToolConfig, ToolResult, WorkspaceFs};
use swerve_world::{Route, Router, WorldConfig, bash_command, simulate_command};

use crate::config::{Config, EnvKind, EvaluatorKind};
use crate::world::analysis::Analyses;
use crate::world::grading::{EvaluationContexts, SwrGrader};
use crate::world::record::Recorder;
use crate::world::{models, transition_context};

/// How a rollout's commands were routed, recorded in its outcome (`extra.world`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorldStats {
    /// Commands per route (`sandbox`, `simulated`, `install`, `blocked`).
    pub routed: BTreeMap<String, usize>,
    /// Simulations that failed (the agent saw the failure observation).
    pub failures: usize,
}

/// What every world rollout shares.
pub struct World {
    pub config: WorldConfig,
    pub router: Router,
    /// The transition model.
    pub model: Arc<dyn Model>,
    /// The tasks' initial analyses.
    pub analyses: Arc<Analyses>,
}

impl World {
    /// The router and transition model `config` describes.
    pub fn new(config: &WorldConfig, analyses: Arc<Analyses>) -> anyhow::Result<Self> {
        Ok(Self {
            config: config.clone(),
            router: Router::from_config(&config.router)?,
            model: models::require(
                &config.transition_model,
                "world.transition_model",
                "run.env = \"world\"",
            )?,
            analyses,
        })
    }
}

/// Routes one rollout's calls; answers simulated commands with the transition model.
pub struct WorldInterceptor {
    world: Arc<World>,
    task: Task,
    /// The repository at the base commit, for the original contents of modified files.
    base: WorkspaceFs,
    /// The sandbox's shell, for the agent's current patch.
    shell: Arc<dyn Shell>,
    runtime: tokio::runtime::Handle,
    stats: Arc<Mutex<WorldStats>>,
}

impl WorldInterceptor {
    /// An interceptor for `task`; calls must come from a blocking section of a tokio
    /// multi-threaded runtime (`block_in_place`), as the agent loop runs tools.
    pub fn new(
        world: Arc<World>,
        task: Task,
        base: WorkspaceFs,
        shell: Arc<dyn Shell>,
        stats: Arc<Mutex<WorldStats>>,
    ) -> Self {
        Self {
            world,
            task,
            base,
            shell,
            runtime: tokio::runtime::Handle::current(),
            stats,
        }
    }

    fn count(&self, route: Route, failed: bool) {
        let mut stats = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        *stats.routed.entry(route.to_string()).or_default() += 1;
        stats.failures += usize::from(failed);
    }
}

impl CallInterceptor for WorldInterceptor {
    fn intercept(
        &mut self,
        call: &ToolCall,
        fs: &WorkspaceFs,
        config: &ToolConfig,
    ) -> Option<ToolResult> {
        if call.name != "execute_bash" {
            return None;
        }
        let decision = self.world.router.route_call(call);
        tracing::info!(route = %decision.route, reason = %decision.reason, "routed");
        match decision.route {
            Route::Sandbox => {
                self.count(decision.route, false);
                None
            }
            Route::Install | Route::Blocked => {
                self.count(decision.route, false);
                self.world.router.reply(&decision, config.observation_lines)
            }
            Route::Simulated => {
                let command = bash_command(call)?;
                let context = self.runtime.block_on(transition_context(
                    &self.world.analyses,
                    &self.task,
                    self.shell.as_ref(),
                    fs,
                    &self.base,
                    &command,
                    &self.world.config,
                ));
                let outcome = self.runtime.block_on(simulate_command(
                    self.world.model.as_ref(),
                    &context,
                    &self.world.config.swt,
                    config.observation_lines,
                ));
                if let Some(error) = &outcome.error {
                    tracing::warn!("simulation failed: {error}");
                }
                self.count(decision.route, outcome.failed());
                Some(outcome.result)
            }
        }
    }
}

/// SWE-World's parts of a run: the world environment (`run.env = "world"`), SWR grading
/// (`run.eval` with `run.evaluator = "swr"`) and training-data recording
/// (`world.record.dir`), all sharing one cache of initial analyses.
pub struct WorldParts {
    pub world: Option<Arc<World>>,
    pub swr: Option<SwrGrader>,
    pub recorder: Option<Arc<Recorder>>,
}

impl WorldParts {
    /// The parts `config` asks for, for tasks loaded from `task_file`; SWR votes are saved
    /// under `eval_logs`.
    pub fn new(config: &Config, task_file: &Path, eval_logs: &Path) -> anyhow::Result<Self> {
        let analyses = Arc::new(Analyses::new(&config.world, config.cache()?.root())?);
        let contexts =
            || EvaluationContexts::new(config, task_file, analyses.clone()).map(Arc::new);
        let world = match config.run.env {
            EnvKind::World => Some(Arc::new(World::new(&config.world, analyses.clone())?)),
            EnvKind::Sandbox => None,
        };
        let grades_by_swr = config.run.eval && config.run.evaluator == EvaluatorKind::Swr;
        let swr = match grades_by_swr {
            true => Some(SwrGrader::new(
                config,
                contexts()?,
                Some(eval_logs.to_owned()),
            )?),
            false => None,
        };
        let recorder = match &config.world.record.dir {
            None => None,
            Some(dir) => {
                if config.run.env == EnvKind::World {
                    anyhow::bail!(
                        "world.record.dir (--record-world-data) records real results, but \
                         run.env = \"world\" simulates them: record with run.env = \"sandbox\""
                    );
                }
                if !config.run.eval || grades_by_swr {
                    tracing::warn!(
                        "recording world data without real evaluation (--eval): only SWT \
                         samples are recorded"
                    );
                }
                let simulate = config.world.record.simulate;
                let contexts = contexts()?;
                Some(Arc::new(Recorder {
                    router: Router::from_config(&config.world.router)?,
                    dir: dir.clone(),
                    transition: match simulate {
                        true => Some(models::require(
                            &config.world.transition_model,
                            "world.transition_model",
                            "world.record.simulate",
                        )?),
                        false => None,
                    },
                    grader: match simulate && config.run.eval && !grades_by_swr {
                        true => Some(SwrGrader::new(config, contexts.clone(), None)?),
                        false => None,
                    },
                    contexts,
                }))
            }
        };
        Ok(Self {
            world,
            swr,
            recorder,
        })
    }
}
