//! [`Outcome`]: how a run ended, its patch and totals, and slots for evaluation.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::step::Timings;
use super::usage::Usage;

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitReason {
    /// The agent submitted (or finished) on its own.
    Submitted,
    /// The step limit was reached.
    MaxSteps,
    /// The conversation no longer fit the context window or the prompt budget.
    ContextLimit,
    /// A reply or the run exceeded a token budget (e.g. a reply cut at `max_tokens`).
    TokenLimit,
    /// The cost limit was reached.
    CostLimit,
    /// A wall-clock limit was reached.
    TimeLimit,
    /// Too many replies in a row could not be parsed into a tool call.
    FormatErrors,
    /// The agent repeated the same action too often.
    Repeating,
    /// The model could not be called (API errors, after retries).
    ModelError,
    /// The environment failed (sandbox, container, command timeouts).
    EnvError,
    /// The agent gave up without submitting.
    Forfeited,
    /// Any other error, such as an unclassified exception of an imported scaffold.
    Error,
}

impl ExitReason {
    /// The JSON name, e.g. `max_steps`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExitReason::Submitted => "submitted",
            ExitReason::MaxSteps => "max_steps",
            ExitReason::ContextLimit => "context_limit",
            ExitReason::TokenLimit => "token_limit",
            ExitReason::CostLimit => "cost_limit",
            ExitReason::TimeLimit => "time_limit",
            ExitReason::FormatErrors => "format_errors",
            ExitReason::Repeating => "repeating",
            ExitReason::ModelError => "model_error",
            ExitReason::EnvError => "env_error",
            ExitReason::Forfeited => "forfeited",
            ExitReason::Error => "error",
        }
    }
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Why the run stopped.
    pub exit_reason: ExitReason,
    /// Details: an error message, or an imported scaffold's own exit status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_detail: Option<String>,
    /// The final patch (`git diff` of the workspace); empty when there is none.
    pub patch: String,
    /// The run's total cost in US dollars, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The run's total token counts, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The run's total model and environment time.
    #[serde(skip_serializing_if = "Timings::is_empty")]
    pub timings: Timings,
    /// The evaluation report (e.g. SWE-bench's per-instance report), once graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_report: Option<Value>,
    /// The reward, once computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// Anything else, such as fields of an imported format with no place above.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Outcome {
    /// An outcome with its reason and patch and nothing else.
    pub fn new(exit_reason: ExitReason, patch: impl Into<String>) -> Self {
        Self {
            exit_reason,
            exit_detail: None,
            patch: patch.into(),
            cost: None,
            usage: None,
            timings: Timings::default(),
            eval_report: None,
            reward: None,
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_str_matches_serde_names() {
        for reason in [
            ExitReason::Submitted,
            ExitReason::MaxSteps,
            ExitReason::ContextLimit,
            ExitReason::TokenLimit,
            ExitReason::CostLimit,
            ExitReason::TimeLimit,
            ExitReason::FormatErrors,
            ExitReason::Repeating,
            ExitReason::ModelError,
            ExitReason::EnvError,
            ExitReason::Forfeited,
            ExitReason::Error,
        ] {
            assert_eq!(
                serde_json::to_value(reason).unwrap(),
                Value::from(reason.as_str())
            );
        }
    }
}
