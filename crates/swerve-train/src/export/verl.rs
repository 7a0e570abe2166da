//! verl's agent-loop output (`AgentLoopOutput`, FORMATS g.3): one record per trajectory,
//! `prompt_ids` (the first request), `response_ids` (every generated token and, between
//! them, the tokens of tool observations), `response_mask` (1 generated, 0 observation),
//! `response_logprobs` (0 on observation tokens; `null` when not captured), `reward_score`,
//! `num_turns` (user, assistant and tool turns, as verl's tool agent loop counts them),
//! `metrics` (verl's `AgentLoopMetrics`, which has no default: timings are not recorded, so
//! zeros) and `extra_fields` (the trajectory's ids). [`VerlRecord::truncate`] cuts the
//! response to verl's `rollout.response_length`, as its agent loops do (its padding never
//! cuts, and a longer row breaks the batch).
//!
//! verl's loop is token-in/token-out over one growing sequence, so each request must extend
//! the previous request and reply. A run whose context was edited (a SWE-AGILE reasoning
//! window, a condensed history) is not: it is refused here and exported step-wise for
//! SkyRL instead.

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::Trajectory;

use super::{ExportError, StepTokens};

/// One trajectory as verl's agent loop returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerlRecord {
    /// The first request's token ids.
    pub prompt_ids: Vec<u32>,
    /// Generated and observation tokens, in order.
    pub response_ids: Vec<u32>,
    /// 1 on generated tokens, 0 on observation tokens.
    pub response_mask: Vec<u8>,
    /// Per response token: its log-probability, 0 on observation tokens.
    pub response_logprobs: Option<Vec<f64>>,
    /// The trajectory's reward.
    pub reward_score: f64,
    /// User, assistant and tool turns.
    pub num_turns: usize,
    /// verl's `AgentLoopMetrics` (a required field).
    #[serde(default)]
    pub metrics: VerlMetrics,
    /// The trajectory's ids.
    pub extra_fields: VerlExtra,
}

/// verl's `AgentLoopMetrics`: seconds spent generating and in tools (0: not recorded).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerlMetrics {
    /// Seconds generating.
    pub generate_sequences: f64,
    /// Seconds in tools.
    pub tool_calls: f64,
}

impl VerlRecord {
    /// Cuts the response (ids, mask, logprobs) to `max` tokens; true when it was longer.
    pub fn truncate(&mut self, max: usize) -> bool {
        if self.response_ids.len() <= max {
            return false;
        }
        self.response_ids.truncate(max);
        self.response_mask.truncate(max);
        if let Some(logprobs) = &mut self.response_logprobs {
            logprobs.truncate(max);
        }
        self.extra_fields.truncated = true;
        true
    }

    /// The generated tokens: the response ids under mask 1, in order.
    pub fn generated_ids(&self) -> Vec<u32> {
        self.response_ids
            .iter()
            .zip(&self.response_mask)
            .filter(|(_, mask)| **mask == 1)
            .map(|(id, _)| *id)
            .collect()
    }
}

/// `extra_fields` of a [`VerlRecord`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerlExtra {
    /// The trajectory id.
    pub trajectory_id: String,
    /// The task instance.
    pub instance_id: String,
    /// The response was cut to the maximum length.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The record of `trajectory`, whose steps have `tokens`, rewarded `reward`.
pub fn record(
    trajectory: &Trajectory,
    tokens: &[StepTokens],
    reward: f64,
) -> Result<VerlRecord, ExportError> {
    let Some(first) = tokens.first() else {
        return Err(ExportError::invalid(trajectory, "no steps to export"));
    };
    let captured_logprobs = tokens.iter().all(|step| step.logprobs.is_some());
    let mut response_ids = Vec::new();
    let mut response_mask = Vec::new();
    let mut logprobs = Vec::new();
    for (index, step) in tokens.iter().enumerate() {
        if index > 0 {
            let so_far = first.prompt_ids.len() + response_ids.len();
            let extends = step.prompt_ids.len() >= so_far
                && step.prompt_ids[..first.prompt_ids.len()] == first.prompt_ids[..]
                && step.prompt_ids[first.prompt_ids.len()..so_far] == response_ids[..];
            if !extends {
                return Err(ExportError::invalid(
                    trajectory,
                    format!(
                        "step {index}: its prompt does not extend the previous prompt and \
                         reply (the context was edited, e.g. by a reasoning window), but \
                         verl's agent loop needs one growing sequence; export it step-wise \
                         with --format skyrl"
                    ),
                ));
            }
            let observation = &step.prompt_ids[so_far..];
            response_ids.extend_from_slice(observation);
            response_mask.extend(std::iter::repeat_n(0, observation.len()));
            logprobs.extend(std::iter::repeat_n(0.0, observation.len()));
        }
        response_ids.extend_from_slice(&step.response_ids);
        response_mask.extend(std::iter::repeat_n(1, step.response_ids.len()));
        match &step.logprobs {
            Some(step_logprobs) => logprobs.extend_from_slice(step_logprobs),
            None => logprobs.extend(std::iter::repeat_n(0.0, step.response_ids.len())),
        }
    }
    Ok(VerlRecord {
        prompt_ids: first.prompt_ids.clone(),
        response_ids,
        response_mask,
        response_logprobs: captured_logprobs.then_some(logprobs),
        reward_score: reward,
        num_turns: 2 * tokens.len(),
        metrics: VerlMetrics::default(),
        extra_fields: VerlExtra {
            trajectory_id: trajectory.header.id.clone(),
            instance_id: trajectory.header.instance_id.clone(),
            truncated: false,
        },
    })
}

/// Checks a record as verl reads it: mask and logprobs as long as the response, and the
/// response starting with generated tokens.
pub fn check(record: &VerlRecord) -> Result<(), String> {
    let length = record.response_ids.len();
    if record.response_mask.len() != length {
        return Err("response_mask must be as long as response_ids".into());
    }
    if record
        .response_logprobs
        .as_ref()
        .is_some_and(|l| l.len() != length)
    {
        return Err("response_logprobs must be as long as response_ids".into());
    }
    if record.response_mask.first() != Some(&1) {
        return Err("the response must start with generated tokens".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{fixture, step_tokens};
    use super::*;

    #[test]
    fn an_append_only_run_becomes_one_sequence() {
        let trajectory = fixture::captured();
        let tokens = step_tokens(&trajectory, None).unwrap();
        let record = record(&trajectory, &tokens, 1.0).unwrap();
        check(&record).unwrap();
        assert_eq!(record.prompt_ids, vec![1, 2, 3]);
        // reply 0, observation 0, reply 1, observation 1, reply 2.
        assert_eq!(
            record.response_ids,
            vec![100, 200, 10, 11, 101, 201, 11, 11, 102, 202]
        );
        assert_eq!(record.response_mask, vec![1, 1, 0, 0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(
            record.response_logprobs.as_deref().unwrap(),
            [-0.5, -0.25, 0.0, 0.0, -0.5, -0.25, 0.0, 0.0, -0.5, -0.25]
        );
        assert_eq!((record.reward_score, record.num_turns), (1.0, 6));
        // The generated tokens, read back through the mask, are the captured ones.
        let generated = record.generated_ids();
        let captured: Vec<u32> = trajectory
            .steps
            .iter()
            .flat_map(|step| step.tokens.as_ref().unwrap().completion_ids.clone())
            .collect();
        assert_eq!(generated, captured);
        let line = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<VerlRecord>(&line).unwrap(), record);
    }

    #[test]
    fn records_carry_metrics_and_are_cut_to_the_response_length() {
        let trajectory = fixture::captured();
        let tokens = step_tokens(&trajectory, None).unwrap();
        let mut record = record(&trajectory, &tokens, 1.0).unwrap();
        let line: serde_json::Value = serde_json::to_value(&record).unwrap();
        assert_eq!(
            line["metrics"],
            serde_json::json!({"generate_sequences": 0.0, "tool_calls": 0.0})
        );
        assert!(line["extra_fields"].get("truncated").is_none());
        assert!(!record.truncate(10));
        assert!(record.truncate(7));
        assert_eq!(record.response_ids, vec![100, 200, 10, 11, 101, 201, 11]);
        assert_eq!(record.response_mask.len(), 7);
        assert_eq!(record.response_logprobs.as_ref().map(Vec::len), Some(7));
        check(&record).unwrap();
        let line: serde_json::Value = serde_json::to_value(&record).unwrap();
        assert_eq!(line["extra_fields"]["truncated"], true);
    }

    #[test]
    fn an_edited_context_is_refused_with_what_to_do() {
        let mut trajectory = fixture::captured();
        let capture = trajectory.steps[2].tokens.as_mut().unwrap();
        capture.prompt_ids.remove(4);
        let tokens = step_tokens(&trajectory, None).unwrap();
        let error = record(&trajectory, &tokens, 0.0).unwrap_err().to_string();
        assert!(
            error.starts_with("trajectory calc-1__2: step 2:"),
            "{error}"
        );
        assert!(error.contains("--format skyrl"), "{error}");
    }
}
