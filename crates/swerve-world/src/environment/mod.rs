//! `run.env = "world"` (`--env world`): SWE-World's environment for one rollout. The agent's
//! tools work on the real sandbox, but every `execute_bash` call goes through the router
//! first: reads and navigation run for real, installs and refused commands get their fixed
//! replies, and commands that would run project code are answered by the transition model
//! (SWT) from the task, the agent's current patch and the files the command would execute.
//! [`record`] is the other mode: the agent runs for real and each command the router would
//! simulate is recorded with its transition context, as training data.

pub mod record;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use swerve_core::{Shell, Task, ToolCall};
use swerve_llm::Model;
use swerve_tools::{CallInterceptor, ToolConfig, ToolResult, WorkspaceFs};

use crate::analysis::cache::Analyses;
use crate::tokens::ApproxTokens;
use crate::{
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
    /// The `[world]` settings.
    pub config: WorldConfig,
    /// Decides which commands are simulated.
    pub router: Router,
    /// The transition model.
    pub model: Arc<dyn Model>,
    /// The tasks' initial analyses.
    pub analyses: Arc<Analyses>,
}

/// What a [`WorldInterceptor`] does with the commands the router would simulate.
enum Mode {
    /// Answers them with the transition model (`run.env = "world"`), counting the routes.
    Simulate {
        world: Arc<World>,
        stats: Arc<Mutex<WorldStats>>,
    },
    /// Lets them run for real, leaving their transition context for the recording shell
    /// that pairs it with the real result ([`record::Recorder`]).
    Record {
        recorder: Arc<record::Recorder>,
        pending: Arc<Mutex<Option<record::Pending>>>,
    },
}

/// SWE-World's interceptor of one rollout's calls: routes each `execute_bash` command and
/// assembles the transition context of those the router would simulate, then either
/// answers them with the transition model or records them beside their real run.
pub struct WorldInterceptor {
    mode: Mode,
    task: Task,
    /// The repository at the base commit, for the original contents of modified files.
    base: WorkspaceFs,
    /// The sandbox's shell, for the agent's current patch.
    shell: Arc<dyn Shell>,
    runtime: tokio::runtime::Handle,
}

impl WorldInterceptor {
    /// An interceptor simulating `task`'s commands in `world`, counting routes in `stats`;
    /// calls must come from a blocking section of a tokio multi-threaded runtime
    /// (`block_in_place`), as the agent loop runs tools.
    pub fn simulate(
        world: Arc<World>,
        task: Task,
        base: WorkspaceFs,
        shell: Arc<dyn Shell>,
        stats: Arc<Mutex<WorldStats>>,
    ) -> Self {
        Self::new(Mode::Simulate { world, stats }, task, base, shell)
    }

    fn new(mode: Mode, task: Task, base: WorkspaceFs, shell: Arc<dyn Shell>) -> Self {
        Self {
            mode,
            task,
            base,
            shell,
            runtime: tokio::runtime::Handle::current(),
        }
    }

    fn router(&self) -> &Router {
        match &self.mode {
            Mode::Simulate { world, .. } => &world.router,
            Mode::Record { recorder, .. } => &recorder.router,
        }
    }

    /// The transition context of `command`, as the world models see it.
    fn context(&self, command: &str, fs: &WorkspaceFs) -> TransitionContext {
        let (analyses, world) = match &self.mode {
            Mode::Simulate { world, .. } => (&world.analyses, &world.config),
            Mode::Record { recorder, .. } => {
                (&recorder.contexts.analyses, &recorder.contexts.world)
            }
        };
        self.runtime.block_on(transition_context(
            analyses,
            &self.task,
            self.shell.as_ref(),
            fs,
            &self.base,
            command,
            world,
        ))
    }

    fn count(stats: &Mutex<WorldStats>, route: Route, failed: bool) {
        let mut stats = stats.lock().unwrap_or_else(|e| e.into_inner());
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
        if let Mode::Record { pending, .. } = &self.mode {
            bash_command(call)?;
            // A context left by a command that never ran (refused by `execute_bash`) is stale.
            *pending.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        let decision = self.router().route_call(call);
        tracing::info!(route = %decision.route, reason = %decision.reason, "routed");
        match (&self.mode, decision.route) {
            (Mode::Record { .. }, Route::Sandbox | Route::Install | Route::Blocked) => None,
            (Mode::Record { recorder, pending }, Route::Simulated) => {
                let command = bash_command(call)?;
                let context = self.context(&command, fs);
                let waiting = recorder.pending(&self.runtime, command, context, config);
                *pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(waiting);
                None
            }
            (Mode::Simulate { stats, .. }, Route::Sandbox) => {
                Self::count(stats, decision.route, false);
                None
            }
            (Mode::Simulate { world, stats }, Route::Install | Route::Blocked) => {
                Self::count(stats, decision.route, false);
                world.router.reply(&decision, config.observation_lines)
            }
            (Mode::Simulate { world, stats }, Route::Simulated) => {
                let command = bash_command(call)?;
                let context = self.context(&command, fs);
                let outcome = self.runtime.block_on(simulate_command(
                    world.model.as_ref(),
                    &context,
                    &world.config.swt,
                    config.observation_lines,
                ));
                if let Some(error) = &outcome.error {
                    tracing::warn!("simulation failed: {error}");
                }
                Self::count(stats, decision.route, outcome.failed());
                Some(outcome.result)
            }
        }
    }
}

/// The agent's changes so far, as `git diff` against the base commit (new files included),
/// computed with a scratch index so the repository's own index is untouched. Empty (and
/// logged) when git fails.
pub fn agent_patch(shell: &dyn Shell) -> String {
    let command = "index=$(mktemp) && GIT_INDEX_FILE=$index git add -A >/dev/null 2>&1 && \
                   GIT_INDEX_FILE=$index git diff --cached --no-color --no-ext-diff; rm -f $index";
    match shell.run(command, Duration::from_secs(60)) {
        Ok(outcome) => outcome.stdout_text(),
        Err(error) => {
            tracing::warn!("cannot compute the agent's patch for the world models: {error}");
            String::new()
        }
    }
}

/// The transition context of `command` in a rollout of `task` working in `workspace`: the
/// agent's patch so far (read through `shell`), the task's initial analysis, and the files
/// the command would run, beside their originals in `base` (the repository at the base
/// commit), rendered with the `world.prompts` templates.
pub async fn transition_context(
    analyses: &Analyses,
    task: &Task,
    shell: &dyn Shell,
    workspace: &WorkspaceFs,
    base: &WorkspaceFs,
    command: &str,
    world: &WorldConfig,
) -> TransitionContext {
    let patch = agent_patch(shell);
    let analysis = analyses.get(task).await;
    let inputs = IssueInputs {
        task,
        initial_analysis: analysis.as_deref(),
        agent_patch: &patch,
    };
    let sources = Sources {
        workspace,
        original: base,
        counter: &ApproxTokens,
    };
    TransitionContext::assemble(&inputs, command, &sources, &world.context)
        .with_prompts(world.prompts)
}
