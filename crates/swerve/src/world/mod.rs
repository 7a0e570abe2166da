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

use swerve_core::Shell;

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
