//! SWR, the reward model as an evaluator: M calls (concurrently) on one evaluation
//! context, each reply parsed into `{test_report, reward}`, the score the mean reward of
//! the usable replies. An empty patch scores 0 without a call, as in SWE-World.
//! [`grader::SwrGrader`] grades patches this way behind swerve-eval's `Grader` seam.

pub mod grader;

use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use swerve_llm::{Model, ModelRequest, ModelResponse, Sampling};

use crate::context::SwrContext;
use crate::reply::{ReplyError, find_object, integer_field, split_reasoning, text_field};

/// Settings of the reward model's calls (the `[world.swr]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwrConfig {
    /// Calls per patch, M (SWE-World's test-time scaling: 3).
    pub votes: usize,
    /// Sampling of each call (SWE-World: temperature 0.7).
    pub sampling: Sampling,
    /// The mean reward at which a patch counts as resolved in reports.
    pub threshold: f64,
}

impl Default for SwrConfig {
    fn default() -> Self {
        Self {
            votes: 3,
            sampling: Sampling {
                temperature: Some(0.7),
                ..Sampling::default()
            },
            threshold: 0.5,
        }
    }
}

/// A reward model's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwrReply {
    /// 1 when every FAIL_TO_PASS and PASS_TO_PASS test passes, else 0.
    pub reward: u8,
    /// The simulated test report.
    pub test_report: String,
    /// The reasoning before the answer, if any.
    pub reasoning: Option<String>,
}

/// Reads a reward model's reply: optional `<think>…</think>`, then a JSON object with
/// `reward` (and `test_report`) anywhere in the rest. The reward must be 0 or 1: an
/// integer, an integral number, a string of one, or a boolean.
pub fn parse_swr_reply(text: &str) -> Result<SwrReply, ReplyError> {
    let (reasoning, answer) = split_reasoning(text);
    let map = find_object(answer, &["reward"], "`reward`")?;
    let value = map.get("reward").unwrap_or(&serde_json::Value::Null);
    let reward = match value {
        serde_json::Value::Bool(passed) => Some(u8::from(*passed)),
        other => integer_field(other).and_then(|reward| match reward {
            0 => Some(0),
            1 => Some(1),
            _ => None,
        }),
    };
    let reward = reward.ok_or_else(|| ReplyError::Field {
        field: "reward",
        problem: format!("must be 0 or 1, got {value}"),
    })?;
    Ok(SwrReply {
        reward,
        test_report: text_field(&map, "test_report"),
        reasoning: reasoning.map(str::to_owned),
    })
}

/// One usable reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwrVote {
    /// The verdict.
    pub reply: SwrReply,
    /// The model's answer.
    pub response: ModelResponse,
}

/// One call that gave no verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwrFailure {
    /// What went wrong.
    pub error: String,
    /// The model's answer, when the call returned.
    pub response: Option<ModelResponse>,
}

/// The reward model's score of one patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwrScore {
    /// The usable replies.
    pub votes: Vec<SwrVote>,
    /// The calls that gave no verdict.
    pub failures: Vec<SwrFailure>,
    /// The mean reward of the votes; `None` when there is none (every call failed, or
    /// M = 0). An empty patch scores `Some(0.0)` without votes.
    pub mean: Option<f64>,
    /// The patch was empty, so no call was made.
    pub empty_patch: bool,
}

impl SwrScore {
    /// Whether the score counts as resolved: a mean of at least `threshold`.
    pub fn resolved(&self, threshold: f64) -> bool {
        self.mean.is_some_and(|mean| mean >= threshold)
    }

    /// The calls whose reply could not be read (as opposed to calls that failed).
    pub fn parse_failures(&self) -> usize {
        self.failures
            .iter()
            .filter(|failure| failure.response.is_some())
            .count()
    }
}

/// Scores `context`'s patch with `m` calls of `model`. Never fails: each call that
/// errors or gives an unusable reply is a recorded failure.
pub async fn score(
    model: &dyn Model,
    context: &SwrContext,
    m: usize,
    sampling: &Sampling,
) -> SwrScore {
    if context.issue.agent_patch.trim().is_empty() {
        return SwrScore {
            votes: Vec::new(),
            failures: Vec::new(),
            mean: Some(0.0),
            empty_patch: true,
        };
    }
    let request = ModelRequest::chat(context.messages()).with_sampling(sampling.clone());
    let answers = join_all((0..m).map(|_| model.complete(&request))).await;
    let mut votes = Vec::new();
    let mut failures = Vec::new();
    for answer in answers {
        match answer {
            Ok(response) => match parse_swr_reply(&response.content) {
                Ok(mut reply) => {
                    if reply.reasoning.is_none() {
                        reply.reasoning.clone_from(&response.reasoning_content);
                    }
                    votes.push(SwrVote { reply, response });
                }
                Err(error) => failures.push(SwrFailure {
                    error: format!("the reward model's reply cannot be used: {error}"),
                    response: Some(response),
                }),
            },
            Err(error) => failures.push(SwrFailure {
                error: format!("the reward model call failed: {error}"),
                response: None,
            }),
        }
    }
    let total: u32 = votes.iter().map(|vote| u32::from(vote.reply.reward)).sum();
    let mean = (!votes.is_empty()).then(|| f64::from(total) / votes.len() as f64);
    SwrScore {
        votes,
        failures,
        mean,
        empty_patch: false,
    }
}
