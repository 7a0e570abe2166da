//! [`SubTrajectory`]: the model calls a subagent made on behalf of one step's tool call
//! (SWE-Edit's viewer and editor, a judge), recorded inside that step with their own
//! messages, usage and cost.

use serde::{Deserialize, Serialize};

use super::message::Message;
use super::usage::Usage;

/// One subagent's work for one tool call: who it was, which model served it, every model
/// call it made and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubTrajectory {
    /// The subagent's role, e.g. `viewer` or `editor`.
    pub agent: String,
    /// The model that served it.
    pub model: String,
    /// Its model calls, in order.
    #[serde(default)]
    pub calls: Vec<SubagentCall>,
    /// How its work ended, in the subagent's own terms (swerve-edit: `applied`,
    /// `format_error`, `match_failure`, …; see `docs/edit.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// One model call of a subagent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentCall {
    /// The exact messages sent.
    pub messages: Vec<Message>,
    /// The answer as returned; empty when the call failed.
    #[serde(default)]
    pub response_text: String,
    /// The provider's separate reasoning text, when it returned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Token counts, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What the call cost, in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Time spent waiting for the model, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_seconds: Option<f64>,
    /// Why the call failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SubTrajectory {
    /// The token counts of all its calls.
    pub fn usage(&self) -> Usage {
        let mut total = Usage::default();
        for usage in self.calls.iter().filter_map(|call| call.usage) {
            total += usage;
        }
        total
    }

    /// The cost of all its calls (unknown costs count as 0).
    pub fn cost(&self) -> f64 {
        self.calls.iter().filter_map(|call| call.cost).sum()
    }
}
