//! `run.env = "world"` (`--env world`): SWE-World's environment for one rollout. The agent's
//! tools work on the real sandbox, but every `execute_bash` call goes through the router
//! first: reads and navigation run for real, installs and refused commands get their fixed
//! replies, and commands that would run project code are answered by the transition model
//! (SWT) from the task, the agent's current patch and the files the command would execute.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use swerve_core::{Shell, Task, ToolCall};
use swerve_llm::Model;
use swerve_tools::{CallInterceptor, ToolConfig, ToolResult, WorkspaceFs};
use swerve_world::tokens::ApproxTokens;
use swerve_world::{
    IssueInputs, Route, Router, Sources, TransitionContext, WorldConfig, bash_command,
    simulate_command,
};

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
}

impl World {
    /// The router and transition model `config` describes.
    pub fn new(config: &WorldConfig) -> anyhow::Result<Self> {
        let router = Router::from_config(&config.router)?;
        let server = &config.transition_model;
        let model: Arc<dyn Model> = if server.model == crate::embedded::EMBEDDED {
            crate::embedded::load(server, "world.transition_model")?
        } else if server.model.is_empty() || server.base_url.is_empty() {
            anyhow::bail!(
                "run.env = \"world\" needs a transition model: set world.transition_model.name \
                 and world.transition_model.base_url (an OpenAI-compatible server), or name \
                 `embedded` to run the embedded model"
            );
        } else {
            Arc::new(swerve_llm::HttpModel::new(server.clone())?)
        };
        Ok(Self {
            config: config.clone(),
            router,
            model,
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

    /// The agent's changes so far, as `git diff` against the base commit (new files
    /// included), computed with a scratch index so the repository's own index is untouched.
    fn agent_patch(&self) -> String {
        let command = "index=$(mktemp) && GIT_INDEX_FILE=$index git add -A >/dev/null 2>&1 && \
                       GIT_INDEX_FILE=$index git diff --cached --no-color --no-ext-diff; rm -f $index";
        match self.shell.run(command, Duration::from_secs(60)) {
            Ok(outcome) => outcome.stdout_text(),
            Err(error) => {
                tracing::warn!(
                    "cannot compute the agent's patch for the transition model: {error}"
                );
                String::new()
            }
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
                let patch = self.agent_patch();
                let inputs = IssueInputs {
                    task: &self.task,
                    initial_analysis: None,
                    agent_patch: &patch,
                };
                let sources = Sources {
                    workspace: fs,
                    original: &self.base,
                    counter: &ApproxTokens,
                };
                let context = TransitionContext::assemble(
                    &inputs,
                    &command,
                    &sources,
                    &self.world.config.context,
                );
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
