//! [`ScaffoldShell`]: a workspace's [`Shell`] running commands the way the recorded
//! scaffold ran them, and keeping the last raw result for the comparison.
//!
//! - Fresh process (mini-swe-agent, R2E-Gym): `bash -c COMMAND` at the repository root
//!   with the scaffold's variables, nothing carried over. mini-swe-agent ran `bash -lc`
//!   in its container; here the login profile is not read, since a distribution's
//!   `/etc/profile` resets `PATH` and would hide the task's environment.
//! - Persistent session (SWE-agent, OpenHands): the working directory and exported
//!   variables one command leaves are restored before the next (kept under the
//!   repository's `.git/`, which no patch includes). Shell functions, aliases, unexported
//!   variables and background jobs do not carry over.
//!
//! - Native (swerve's own trajectories): the command as swerve's tools ran it.
//!
//! With `merge_stderr`, standard error goes to the same pipe as standard output, interleaved
//! as the scaffold showed it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use swerve_core::{ExecOutcome, Shell};

use crate::scaffold::{Semantics, Session};

/// The last raw result a [`ScaffoldShell`] produced, taken once.
#[derive(Clone, Default)]
pub struct LastOutcome(Arc<Mutex<Option<ExecOutcome>>>);

impl LastOutcome {
    /// The result of the last command, if one ran since the last take.
    pub fn take(&self) -> Option<ExecOutcome> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn put(&self, outcome: ExecOutcome) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
    }
}

/// Runs commands through `inner` with a scaffold's [`Semantics`].
pub struct ScaffoldShell {
    inner: Arc<dyn Shell>,
    semantics: Semantics,
    /// The repository root inside the sandbox.
    mount_point: String,
    last: LastOutcome,
}

impl ScaffoldShell {
    /// The shell over `inner` for a repository at `mount_point`, and the slot of its last
    /// result.
    pub fn wrap(
        inner: Arc<dyn Shell>,
        semantics: Semantics,
        mount_point: &str,
    ) -> (Arc<dyn Shell>, LastOutcome) {
        let last = LastOutcome::default();
        let shell = Self {
            inner,
            semantics,
            mount_point: mount_point.trim_end_matches('/').to_owned(),
            last: last.clone(),
        };
        (Arc::new(shell), last)
    }

    /// The script `command` runs as.
    fn script(&self, command: &str) -> String {
        let root = quote(if self.mount_point.is_empty() {
            "/"
        } else {
            &self.mount_point
        });
        let env: String = self
            .semantics
            .env
            .iter()
            .map(|(key, value)| format!("export {key}={}\n", quote(value)))
            .chain(
                self.semantics
                    .unset
                    .iter()
                    .map(|name| format!("unset {name}\n")),
            )
            .collect();
        let body = match self.semantics.session {
            Session::Native => return command.to_owned(),
            Session::FreshProcess => format!("cd {root}\n{env}{command}"),
            Session::Persistent => {
                let state = quote(&format!("{}/.git/swerve-replay-session", self.mount_point));
                format!(
                    "__state={state}\nmkdir -p \"$__state\"\ncd {root}\n{env}\
                     if [ -f \"$__state/env\" ]; then . \"$__state/env\"; fi\n\
                     if [ -f \"$__state/cwd\" ]; then cd \"$(cat \"$__state/cwd\")\" 2>/dev/null; fi\n\
                     {command}\n\
                     __status=$?\n\
                     pwd > \"$__state/cwd\"\n\
                     export -p | grep -v -E '^declare -x (PWD|OLDPWD|SHLVL|_|__state|__status)=' > \"$__state/env\"\n\
                     exit $__status"
                )
            }
        };
        let redirect = if self.semantics.merge_stderr {
            " 2>&1"
        } else {
            ""
        };
        format!("bash -c {}{redirect}", quote(&body))
    }
}

impl Shell for ScaffoldShell {
    fn run(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome> {
        let timeout = match self.semantics.timeout_secs {
            0 => timeout,
            secs => Duration::from_secs(secs),
        };
        let outcome = self.inner.run(&self.script(command), timeout)?;
        self.last.put(outcome.clone());
        Ok(outcome)
    }
}

/// `text` as one single-quoted shell word.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes() {
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
