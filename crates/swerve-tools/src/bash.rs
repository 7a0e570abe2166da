//! `execute_bash`: runs one command through the workspace's [`Shell`] and prints R2E-Gym's
//! `[STDOUT]`/`[STDERR]` layout, with R2E-Gym's error codes.
//!
//! Differences from R2E-Gym: the command may be given as `cmd` (R2E-Gym) or `command`
//! (SWE-AGILE); `cd` is blocked along with R2E-Gym's list; a command killed by a signal
//! reports the shell's `128 + signal` (upstream reports Python's `sys.exit(-signal)`, i.e.
//! `256 - signal`); only a real timeout counts as a timeout, where upstream also takes a
//! command that itself exits with 124 for one.

use std::time::Duration;

use swerve_core::{Shell, ToolCall};

use crate::args;
use crate::config::ToolConfig;
use crate::pytext::py_strip;

/// What one `execute_bash` call printed, with the runtime's error code string.
pub(crate) struct BashOutput {
    pub output: String,
    pub error_code: String,
    pub is_error: bool,
}

/// R2E-Gym's error code for an exit status: `0`, or `Error: Exit code N`.
pub fn error_code(status: i32) -> String {
    if status == 0 {
        "0".to_owned()
    } else {
        format!("Error: Exit code {status}")
    }
}

/// Runs one `execute_bash` call (`cmd` or `command`).
pub(crate) fn run(shell: &dyn Shell, config: &ToolConfig, call: &ToolCall) -> BashOutput {
    let command = args::text(call, "cmd")
        .or_else(|| args::text(call, "command"))
        .filter(|command| !command.trim().is_empty());
    let Some(command) = command else {
        return BashOutput {
            output: format!(
                "ERROR: Missing required parameter '{}' for 'execute_bash'.\n",
                config.bash_param
            ),
            error_code: error_code(2),
            is_error: true,
        };
    };
    let first_word = command.split_whitespace().next().unwrap_or_default();
    if config
        .blocked_commands
        .iter()
        .any(|blocked| blocked == first_word)
    {
        return BashOutput {
            output: format!(
                "Bash command '{first_word}' is not allowed. Please use a different command or tool.\n"
            ),
            error_code: error_code(1),
            is_error: true,
        };
    }
    let timeout = Duration::from_secs(config.bash_timeout_secs);
    let outcome = match shell.run(&command, timeout) {
        Ok(outcome) => outcome,
        Err(err) => {
            return BashOutput {
                output: format!("Error: {err}"),
                error_code: "-1".to_owned(),
                is_error: true,
            };
        }
    };
    if outcome.timed_out {
        return BashOutput {
            output: format!(
                "The command took too long to execute (>{}s)",
                config.bash_timeout_secs
            ),
            error_code: "-1".to_owned(),
            is_error: true,
        };
    }
    let status = outcome.shell_status();
    BashOutput {
        output: format_output(&outcome.stdout_text(), &outcome.stderr_text(), status),
        error_code: error_code(status),
        is_error: status != 0,
    }
}

/// What `execute_bash` prints for a command that finished with `status`: R2E-Gym's
/// `[STDOUT]`/`[STDERR]` layout (both streams stripped, a space after stdout), prefixed with
/// `Error executing command:` on a non-zero status. SWE-World's simulated commands are
/// rendered through this too, so they look exactly like real ones.
pub fn format_output(stdout: &str, stderr: &str, status: i32) -> String {
    let prefix = if status == 0 {
        ""
    } else {
        "Error executing command:\n\n"
    };
    format!(
        "{prefix}[STDOUT]\n\n{} \n\n[STDERR]\n\n{}\n",
        py_strip(stdout),
        py_strip(stderr)
    )
}
