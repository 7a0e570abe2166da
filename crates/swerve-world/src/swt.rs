//! SWT, the transition model: one call per simulated command, its reply parsed into
//! `{stdout, stderr, exit_code}` and rendered as the `execute_bash` result the agent
//! would have seen. A failed call or an unusable reply never fails the step: it becomes
//! SWE-World's failure observation (exit code −1) with the error recorded.

use serde::{Deserialize, Serialize};
use swerve_llm::{Model, ModelRequest, ModelResponse, Sampling};
use swerve_tools::{ToolResult, bash_error_code, format_bash_output};

use crate::context::TransitionContext;
use crate::observation::bash_result;
use crate::reply::{ReplyError, find_object, integer_field, split_reasoning, text_field};

/// What the failure observation says on standard error (SWE-World's text).
pub const FEEDBACK_FAILED: &str = "Failed to get environment feedback!";

/// How a simulated command's output is laid out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationStyle {
    /// Exactly as swerve's `execute_bash` prints a real command (R2E-Gym's layout:
    /// streams stripped, a space after stdout, `Error executing command:` on failure), so
    /// simulated and real observations cannot be told apart.
    #[default]
    Swerve,
    /// SWE-World's simulated layout, `[STDOUT]\n\n{stdout}\n\n[STDERR]\n\n{stderr}`, as
    /// its released models were trained on.
    SweWorld,
}

/// Settings of the transition model's calls (the `[world.swt]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwtConfig {
    /// Sampling of each call (SWE-World: temperature 0).
    pub sampling: Sampling,
    /// The layout of the rendered output.
    pub style: ObservationStyle,
}

impl Default for SwtConfig {
    fn default() -> Self {
        Self {
            sampling: Sampling {
                temperature: Some(0.0),
                ..Sampling::default()
            },
            style: ObservationStyle::Swerve,
        }
    }
}

/// A transition model's prediction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwtReply {
    /// Predicted standard output.
    pub stdout: String,
    /// Predicted standard error.
    pub stderr: String,
    /// Predicted exit code (1 when the reply gave none, as SWE-World does).
    pub exit_code: i32,
    /// Whether the reply gave the exit code.
    pub exit_code_given: bool,
    /// The reasoning before the answer, if any.
    pub reasoning: Option<String>,
}

/// Reads a transition model's reply: optional `<think>…</think>`, then a JSON object with
/// `stdout`, `stderr` and `exit_code` anywhere in the rest (fenced or not, with text around
/// it). Missing streams are empty; a missing or `null` exit code is 1; an exit code must
/// be an integer (a number or a string of one) that fits in 32 bits.
pub fn parse_swt_reply(text: &str) -> Result<SwtReply, ReplyError> {
    let (reasoning, answer) = split_reasoning(text);
    let map = find_object(
        answer,
        &["stdout", "stderr", "exit_code"],
        "`stdout`, `stderr` or `exit_code`",
    )?;
    let (exit_code, exit_code_given) = match map.get("exit_code") {
        None | Some(serde_json::Value::Null) => (1, false),
        Some(value) => {
            let code = integer_field(value)
                .and_then(|code| i32::try_from(code).ok())
                .ok_or_else(|| ReplyError::Field {
                    field: "exit_code",
                    problem: format!("must be an integer, got {value}"),
                })?;
            (code, true)
        }
    };
    Ok(SwtReply {
        stdout: text_field(&map, "stdout"),
        stderr: text_field(&map, "stderr"),
        exit_code,
        exit_code_given,
        reasoning: reasoning.map(str::to_owned),
    })
}

/// The `execute_bash` result of a predicted run.
pub fn render_reply(
    reply: &SwtReply,
    style: ObservationStyle,
    observation_lines: usize,
) -> ToolResult {
    let output = match style {
        ObservationStyle::Swerve => {
            format_bash_output(&reply.stdout, &reply.stderr, reply.exit_code)
        }
        ObservationStyle::SweWorld => {
            format!(
                "[STDOUT]\n\n{}\n\n[STDERR]\n\n{}",
                reply.stdout, reply.stderr
            )
        }
    };
    bash_result(
        &output,
        &bash_error_code(reply.exit_code),
        observation_lines,
    )
}

/// The `execute_bash` result shown when no prediction could be had (exit code −1).
pub fn render_failure(style: ObservationStyle, observation_lines: usize) -> ToolResult {
    let output = match style {
        ObservationStyle::Swerve => format_bash_output("", FEEDBACK_FAILED, -1),
        ObservationStyle::SweWorld => format!("[STDOUT]\n\n\n\n[STDERR]\n\n{FEEDBACK_FAILED}"),
    };
    bash_result(&output, "-1", observation_lines)
}

/// The outcome of simulating one command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulatedOutcome {
    /// What the agent sees, as a real `execute_bash` call would return it.
    pub result: ToolResult,
    /// The parsed prediction, when there is one.
    pub reply: Option<SwtReply>,
    /// The model's answer (text, usage, cost), when the call returned.
    pub response: Option<ModelResponse>,
    /// Why the simulation failed (the result is then the failure observation).
    pub error: Option<String>,
}

impl SimulatedOutcome {
    /// The simulation failed and the agent saw the failure observation.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// Asks `model` what `context.command` prints, rendered as `execute_bash` renders a real
/// run (`observation_lines` is the tools' setting of that name). Never fails: a model
/// error or an unusable reply becomes the failure observation, with the error recorded.
pub async fn simulate_command(
    model: &dyn Model,
    context: &TransitionContext,
    config: &SwtConfig,
    observation_lines: usize,
) -> SimulatedOutcome {
    let request = ModelRequest::chat(context.messages()).with_sampling(config.sampling.clone());
    let failure = |error: String, response: Option<ModelResponse>| SimulatedOutcome {
        result: render_failure(config.style, observation_lines),
        reply: None,
        response,
        error: Some(error),
    };
    let response = match model.complete(&request).await {
        Ok(response) => response,
        Err(error) => return failure(format!("the transition model call failed: {error}"), None),
    };
    match parse_swt_reply(&response.content) {
        Ok(mut reply) => {
            if reply.reasoning.is_none() {
                reply.reasoning.clone_from(&response.reasoning_content);
            }
            SimulatedOutcome {
                result: render_reply(&reply, config.style, observation_lines),
                reply: Some(reply),
                response: Some(response),
                error: None,
            }
        }
        Err(error) => failure(
            format!("the transition model's reply cannot be used: {error}"),
            Some(response),
        ),
    }
}
