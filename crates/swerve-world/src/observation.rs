//! Answers that stand in for running `execute_bash`, rendered exactly as the real tool's
//! results are: the same output clean-up, error codes and observation text.

use swerve_tools::{ToolResult, render_observation, strip_ansi_and_cr};

/// The `execute_bash` result that printed `output` with runtime error code `error_code`
/// (`0`, `Error: Exit code N` or `-1`), as [`swerve_tools::Toolbox::call`] builds it.
pub(crate) fn bash_result(output: &str, error_code: &str, observation_lines: usize) -> ToolResult {
    let output = strip_ansi_and_cr(output).into_owned();
    let observation = render_observation("execute_bash", &output, error_code, observation_lines);
    ToolResult {
        output,
        error_code: error_code.to_owned(),
        done: false,
        is_error: error_code != "0",
        observation,
        submission: None,
    }
}
