//! SWE-World's pieces that need the rest of swerve: the world models loaded from their
//! configuration sections ([`models`]), the initial analyses cached on disk ([`analysis`]),
//! SWR grading of patches in a workspace with the test patch applied ([`grading`]),
//! recording training samples from real runs ([`record`]), exporting them
//! ([`data`]), and choosing among candidate rollouts ([`select`]).

pub mod analysis;
pub mod data;
pub mod grading;
pub mod models;
pub mod record;
pub mod select;

use std::time::Duration;

use swerve_core::{Shell, Task};
use swerve_tools::WorkspaceFs;
use swerve_world::tokens::ApproxTokens;
use swerve_world::{IssueInputs, Sources, TransitionContext, WorldConfig};

use analysis::Analyses;

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
