//! What each recorded step did and saw: the action to replay (a shell command, or a call of
//! one of swerve's tools) and the recorded result (return code, output), read per scaffold
//! from the imported step. Reading never fails: a step without an action, or an observation
//! in no known shape, is reported as such.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::ToolCall;
use swerve_core::trajectory::Step;
use swerve_tools::swe_agent::COMMANDS as SWE_AGENT_COMMANDS;

use crate::scaffold::Scaffold;

/// The action of one recorded step.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A shell command, run with the scaffold's shell semantics.
    Shell(String),
    /// A call of one of swerve's tools (file editor, SWE-agent commands, search, finish).
    Tool(ToolCall),
    /// A call that only logs (OpenHands' `think`): nothing runs.
    NoOp,
    /// The step has no action (the reply had a format error, or the scaffold ended).
    None,
}

impl Action {
    /// The action of `step` of a `scaffold` trajectory, with the recorded repository
    /// directory `root` rewritten to `mount_point` in its text.
    pub fn of(step: &Step, scaffold: Scaffold, root: Option<&str>, mount_point: &str) -> Self {
        let Some(call) = &step.tool_call else {
            return Self::None;
        };
        let call = rewrite_call(call, root, mount_point);
        let command = call
            .arguments
            .get("command")
            .or_else(|| call.arguments.get("cmd"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match (scaffold, call.name.as_str()) {
            (Scaffold::Swerve, _) => Self::Tool(call),
            (Scaffold::MiniSweAgent, _) => command.map_or(Self::None, Self::Shell),
            (Scaffold::SweAgent, _) => {
                let Some(command) = command else {
                    return Self::None;
                };
                let first = command.split_whitespace().next().unwrap_or_default();
                if SWE_AGENT_COMMANDS.contains(&first) {
                    Self::Tool(ToolCall::new(first).arg("command", command.trim_end()))
                } else {
                    Self::Shell(command)
                }
            }
            (_, "think") => Self::NoOp,
            (_, "execute_bash" | "bash") => command.map_or(Self::None, Self::Shell),
            _ => Self::Tool(call),
        }
    }

    /// The tool the action runs (`bash` for shell commands).
    pub fn tool(&self) -> &str {
        match self {
            Self::Shell(_) => "bash",
            Self::Tool(call) => &call.name,
            Self::NoOp => "think",
            Self::None => "",
        }
    }

    /// The action as text: the command, or the call's arguments.
    pub fn text(&self) -> String {
        match self {
            Self::Shell(command) => command.clone(),
            Self::Tool(call) => {
                serde_json::to_string(&call.arguments).unwrap_or_else(|_| call.name.clone())
            }
            Self::NoOp | Self::None => String::new(),
        }
    }
}

/// `call` with `root` replaced by `mount_point` in its string arguments.
fn rewrite_call(call: &ToolCall, root: Option<&str>, mount_point: &str) -> ToolCall {
    let mut call = call.clone();
    if let Some(root) = root.filter(|root| *root != mount_point && !root.is_empty()) {
        for value in call.arguments.values_mut() {
            if let Value::String(text) = value {
                *text = text.replace(root, mount_point);
            }
        }
    }
    call
}

/// What a recorded step's environment answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// The return code, when the scaffold recorded one.
    pub return_code: Option<i32>,
    /// The action timed out.
    pub timed_out: bool,
    /// The output, as comparable with the replayed one: the scaffold's decorations
    /// (return-code tags, step counters, truncation notices) removed, the recorded
    /// repository directory written as the replay's mount point.
    pub output: String,
}

static MINI_OUTPUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)^<returncode>(-?\d+)</returncode>\n(?:<output>\n(.*)</output>\s*$|.*?<output_head>\n(.*)\n</output_head>.*?<output_tail>\n(.*)\n</output_tail>\s*$)")
        .expect("a valid pattern")
});
static R2E_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Exit code: (?:Error: Exit code )?(-?\d+)\n").expect("a valid pattern")
});
/// The step counters R2E-Gym and swerve append to observations.
static STEP_COUNTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\n*(This is step \d+ of a maximum of \d+\. )?Steps Remaining: \d+\.?\s*$")
        .expect("a valid pattern")
});

/// The return code an R2E-Gym-style observation (`Exit code: …`) shows.
pub fn r2e_return_code(observation: &str) -> Option<i32> {
    R2E_CODE
        .captures(observation)
        .and_then(|found| found[1].parse().ok())
}

impl Recorded {
    /// The recorded result of `step` of a `scaffold` trajectory.
    pub fn of(step: &Step, scaffold: Scaffold, root: Option<&str>, mount_point: &str) -> Self {
        let observation = step.observation.clone().unwrap_or_default();
        let observation = match root.filter(|root| *root != mount_point && !root.is_empty()) {
            Some(root) => observation.replace(root, mount_point),
            None => observation,
        };
        match scaffold {
            Scaffold::MiniSweAgent => mini_result(&observation),
            Scaffold::OpenHands => Self {
                return_code: step
                    .extra
                    .get("observation_event")
                    .and_then(|event| event.pointer("/extras/metadata/exit_code"))
                    .and_then(Value::as_i64)
                    .and_then(|code| i32::try_from(code).ok()),
                timed_out: false,
                output: observation,
            },
            Scaffold::R2eGym | Scaffold::Swerve => {
                let output = STEP_COUNTER.replace(&observation, "").into_owned();
                Self {
                    return_code: r2e_return_code(&output),
                    timed_out: output.contains("The command took too long to execute"),
                    output,
                }
            }
            Scaffold::SweAgent => Self {
                return_code: None,
                timed_out: false,
                output: observation,
            },
        }
    }
}

/// mini-swe-agent's `<returncode>N</returncode><output>…</output>` (or, for a long output,
/// its head and tail), or its timeout notice.
fn mini_result(observation: &str) -> Recorded {
    if let Some(found) = MINI_OUTPUT.captures(observation) {
        let output = match (found.get(2), found.get(3), found.get(4)) {
            (Some(whole), _, _) => whole.as_str().to_owned(),
            (None, Some(head), Some(tail)) => head_and_tail(head.as_str(), tail.as_str()),
            _ => String::new(),
        };
        return Recorded {
            return_code: found[1].parse().ok(),
            timed_out: false,
            output,
        };
    }
    Recorded {
        return_code: None,
        timed_out: observation.contains("timed out and has been killed"),
        output: observation.to_owned(),
    }
}

/// mini-swe-agent shows an output of this many characters or more as head and tail only.
pub const MINI_LONG_OUTPUT: usize = 10_000;
/// The characters of the head (and of the tail) mini-swe-agent keeps of a long output.
pub const MINI_KEPT: usize = 5_000;

/// How a long output is compared: its head and tail, one marker line between.
pub fn head_and_tail(head: &str, tail: &str) -> String {
    format!("{head}\n<elided>\n{tail}")
}

/// `output` as mini-swe-agent shows it: whole, or (from [`MINI_LONG_OUTPUT`] characters)
/// as its first and last [`MINI_KEPT`] characters.
pub fn mini_shown(output: &str) -> String {
    let count = output.chars().count();
    if count < MINI_LONG_OUTPUT {
        return output.to_owned();
    }
    let head: String = output.chars().take(MINI_KEPT).collect();
    let tail: String = output.chars().skip(count - MINI_KEPT).collect();
    head_and_tail(&head, &tail)
}

/// mini-swe-agent's observation of an action that returned `code` with `output`
/// (the `action_observation_template` of its SWE-bench configuration).
pub fn mini_observation(code: i32, output: &str) -> String {
    let count = output.chars().count();
    if count < MINI_LONG_OUTPUT {
        return format!("<returncode>{code}</returncode>\n<output>\n{output}</output>");
    }
    let head: String = output.chars().take(MINI_KEPT).collect();
    let tail: String = output.chars().skip(count - MINI_KEPT).collect();
    format!(
        "<returncode>{code}</returncode>\n<warning>\nThe output of your last command was too long.\n</warning>\n<output_head>\n{head}\n</output_head>\n<elided_chars>\n{} characters elided\n</elided_chars>\n<output_tail>\n{tail}\n</output_tail>",
        count - 2 * MINI_KEPT
    )
}

/// mini-swe-agent's submission: the output of an action whose first line (after leading
/// whitespace) is its submit marker is the rest of that output.
pub fn mini_submission(output: &str) -> Option<String> {
    let trimmed = output.trim_start();
    let mut lines = trimmed.split_inclusive('\n');
    let first = lines.next()?.trim();
    matches!(
        first,
        "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" | "MINI_SWE_AGENT_FINAL_OUTPUT"
    )
    .then(|| lines.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mini_observations_give_code_and_output() {
        let recorded = mini_result("<returncode>1</returncode>\n<output>\nboom\n</output>");
        assert_eq!(recorded.return_code, Some(1));
        assert_eq!(recorded.output, "boom\n");
        let empty = mini_result("<returncode>0</returncode>\n<output>\n</output>");
        assert_eq!((empty.return_code, empty.output.as_str()), (Some(0), ""));
        let long = "x".repeat(12_000);
        let shown = mini_observation(0, &long);
        assert_eq!(mini_result(&shown).output, mini_shown(&long));
        let timeout = mini_result(
            "The last command <command>sleep 100</command> timed out and has been killed.",
        );
        assert!(timeout.timed_out);
        assert_eq!(timeout.return_code, None);
    }

    #[test]
    fn the_submission_is_the_output_after_the_marker() {
        assert_eq!(
            mini_submission("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\ndiff --git a b\n+x\n"),
            Some("diff --git a b\n+x\n".to_owned())
        );
        assert_eq!(mini_submission("hello\n"), None);
    }

    #[test]
    fn r2e_observations_lose_their_step_counter() {
        let step = Step {
            observation: Some(
                "Exit code: Error: Exit code 2\nExecution output of [execute_bash]:\nx\nThis is step 3 of a maximum of 100. Steps Remaining: 97.".into(),
            ),
            ..Step::default()
        };
        let recorded = Recorded::of(&step, Scaffold::R2eGym, Some("/testbed"), "/testbed");
        assert_eq!(recorded.return_code, Some(2));
        assert!(recorded.output.ends_with("]:\nx"), "{:?}", recorded.output);
    }
}
