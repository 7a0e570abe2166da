//! [`Step`]: one model call and what the agent did with its answer.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::messages_sent::MessagesSent;
use super::subagent::SubTrajectory;
use super::usage::Usage;
use crate::tool_call::ToolCall;

/// One step of a run: the request, the model's answer, how it was parsed, the tool's
/// observation, and what it cost.
///
/// Optional fields are left out of the JSON when `None` (and `extra`, `timings` when
/// empty). Non-finite numbers cannot be written to JSON and come back as absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Step {
    /// The step's position in the run, from 0.
    pub index: usize,
    /// The exact messages sent to the model; `None` when the source did not record them
    /// (some imports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_sent: Option<MessagesSent>,
    /// The model's answer as returned (for imports: as close as the source keeps it).
    pub response_text: String,
    /// The reasoning: the provider's reasoning channel, or the `<think>` block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// The reasoning digest (SWE-AGILE's `<reasoning_digest>`), kept when reasoning is dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The tool call parsed from the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ToolCall>,
    /// The call as the model wrote it: the XML block, the fenced command, or a native call's
    /// JSON arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_text: Option<String>,
    /// Why the answer could not be turned into a tool call, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format_error: Option<String>,
    /// What the model is shown next: the tool's output, or the format-error message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// Token counts of the model call, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Time spent in the model and in the environment.
    #[serde(skip_serializing_if = "Timings::is_empty")]
    pub timings: Timings,
    /// What the model call cost, in US dollars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Token ids and log-probabilities, when the model server returned them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenCapture>,
    /// An error that hit this step (model call failed, tool crashed), as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The subagents the step's tool call ran (SWE-Edit's viewer and editor), each with its
    /// own model calls, usage and cost. Not counted in [`Step::usage`] and [`Step::cost`],
    /// which are the main model's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<SubTrajectory>,
    /// Anything else, such as fields of an imported format with no place above.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Step {
    /// A step with its index and answer and nothing else.
    pub fn new(index: usize, response_text: impl Into<String>) -> Self {
        Self {
            index,
            response_text: response_text.into(),
            ..Self::default()
        }
    }
}

/// Where the time went, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timings {
    /// Waiting for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_seconds: Option<f64>,
    /// Running the tool in the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_seconds: Option<f64>,
}

impl Timings {
    /// True when neither time is known.
    pub fn is_empty(&self) -> bool {
        self.model_seconds.is_none() && self.env_seconds.is_none()
    }
}

/// Token ids and log-probabilities of one model call (vLLM's `return_token_ids` and
/// `logprobs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenCapture {
    /// The request's token ids (`prompt_token_ids`).
    #[serde(default)]
    pub prompt_ids: Vec<u32>,
    /// The answer's token ids (`choices[0].token_ids`).
    #[serde(default)]
    pub completion_ids: Vec<u32>,
    /// The log-probability of each answer token, when requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<f64>>,
}
