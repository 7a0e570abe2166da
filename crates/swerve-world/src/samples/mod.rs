//! World-model training samples, recorded from runs with real execution and real grading:
//! the chat messages SWT or SWR is prompted with, then the real answer as the assistant
//! turn (SWE-World's SFT data: the SWT target is `{"stdout", "stderr", "exit_code"}`, the
//! SWR target `{"test_report", "reward"}`), with the real and, when the world model was
//! asked too, the simulated result beside them for fidelity reports. [`files`] reads them
//! back, balances them and turns them into SFT rows; [`distill`] has a teacher write their
//! reverse-reasoning CoT.

pub mod distill;
pub mod files;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use swerve_llm::Message;

use crate::context::{SwrContext, TransitionContext};
use crate::fidelity::CommandResult;
use crate::tokens::{TokenCounter, fit};

/// Recording samples from a run with real execution (the `[world.record]` table).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordConfig {
    /// Where the samples go (`swt/` and `swr/`, one JSON-lines file per rollout); nothing
    /// is recorded when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// Also ask the transition and reward models, recording their predictions beside the
    /// real results (for `swerve world fidelity`).
    pub simulate: bool,
}

/// One recorded sample (a JSON line; `kind` tells which).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorldSample {
    /// A command the router would simulate, run for real.
    Swt(SwtSample),
    /// A final patch, graded for real.
    Swr(SwrSample),
}

impl WorldSample {
    /// The system, user and assistant messages to train on.
    pub fn messages(&self) -> &[Message] {
        match self {
            Self::Swt(sample) => &sample.messages,
            Self::Swr(sample) => &sample.messages,
        }
    }

    /// The task's id.
    pub fn instance_id(&self) -> &str {
        match self {
            Self::Swt(sample) => &sample.context.issue.instance_id,
            Self::Swr(sample) => &sample.context.issue.instance_id,
        }
    }
}

/// A command's transition context and its real result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwtSample {
    /// The rollout it came from (`<instance_id>__<sample>`).
    pub rollout: String,
    /// The transition model's messages, then the real result as the assistant's answer.
    pub messages: Vec<Message>,
    /// What the command really printed.
    pub real: CommandResult,
    /// What the transition model predicted, when it was asked too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated: Option<CommandResult>,
    /// Why the transition model gave no prediction, when it was asked and failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation_error: Option<String>,
    /// The context the messages were rendered from.
    pub context: TransitionContext,
}

impl SwtSample {
    /// The sample of `context`'s command, which really gave `real`.
    pub fn new(rollout: &str, context: TransitionContext, real: CommandResult) -> Self {
        let target = serde_json::json!({
            "stdout": real.stdout,
            "stderr": real.stderr,
            "exit_code": real.exit_code,
        });
        Self {
            rollout: rollout.to_owned(),
            messages: answered(context.messages(), &target),
            real,
            simulated: None,
            simulation_error: None,
            context,
        }
    }
}

/// The real grade of a patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RealGrade {
    /// 1 when the task was resolved, else 0.
    pub reward: u8,
    /// The test output, cut as [`test_report`] cuts it.
    pub test_report: String,
}

/// The reward model's grade of a patch, for comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PredictedGrade {
    /// The mean reward of the usable votes (`None`: no usable vote).
    pub mean: Option<f64>,
    /// The rewards voted.
    pub votes: Vec<u8>,
    /// Calls that gave no usable vote.
    pub failures: usize,
    /// The mean reached the threshold the run grades with.
    pub resolved: bool,
}

/// An evaluation context and the real grade.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwrSample {
    /// The rollout it came from.
    pub rollout: String,
    /// The reward model's messages, then the real grade as the assistant's answer.
    pub messages: Vec<Message>,
    /// The real grade.
    pub real: RealGrade,
    /// The reward model's grade, when it was asked too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated: Option<PredictedGrade>,
    /// The context the messages were rendered from.
    pub context: SwrContext,
}

impl SwrSample {
    /// The sample of `context`'s patch, which really earned `real`.
    pub fn new(rollout: &str, context: SwrContext, real: RealGrade) -> Self {
        let target = serde_json::json!({
            "test_report": real.test_report,
            "reward": real.reward,
        });
        Self {
            rollout: rollout.to_owned(),
            messages: answered(context.messages(), &target),
            real,
            simulated: None,
            context,
        }
    }
}

/// A world model's `prompt`, then `target` (the real answer, as JSON) as the assistant's turn.
fn answered(mut prompt: Vec<Message>, target: &serde_json::Value) -> Vec<Message> {
    prompt.push(Message::assistant(target.to_string()));
    prompt
}

/// The test report of a real test log, as SWE-World cuts it: from pytest's `test session
/// starts` line when there is one, else between SWE-bench's `>>>>> Start Test Output` and
/// `>>>>> End Test Output` markers when they are there, else the whole log; then cut to
/// `budget` tokens.
pub fn test_report(log: &str, budget: usize, counter: &dyn TokenCounter) -> String {
    const START: &str = ">>>>> Start Test Output";
    const END: &str = ">>>>> End Test Output";
    let report = if let Some(at) = log.find("test session starts") {
        let line_start = log[..at].rfind('\n').map_or(0, |newline| newline + 1);
        &log[line_start..]
    } else if let Some(at) = log.find(START) {
        let after = log[at..]
            .find('\n')
            .map_or(log.len(), |newline| at + newline + 1);
        let end = log[after..].find(END).map_or(log.len(), |end| after + end);
        // The marker is echoed on a line of its own: drop that line's start too.
        let end = log[after..end]
            .rfind('\n')
            .map_or(after, |newline| after + newline + 1);
        &log[after..end]
    } else {
        log
    };
    fit(report.trim(), budget, counter).0.into_owned()
}
