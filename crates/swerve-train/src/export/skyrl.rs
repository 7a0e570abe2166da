//! SkyRL's step-wise generator output (`generator.step_wise_trajectories = true`; FORMATS
//! g.2): one record per step, a trajectory's steps contiguous, each with the fields of
//! `GeneratorOutput` for one element: `prompt_token_ids`, `response_ids`, `loss_masks`
//! (all 1), `rewards` (per token: 0 everywhere except the last token of the last step,
//! which holds the trajectory's reward), `rollout_logprobs` (`null` when not captured),
//! `trajectory_ids` (`TrajectoryID(instance_id, repetition_id)`) and `is_last_step`. SkyRL
//! computes advantages on last steps and broadcasts them.

use serde::{Deserialize, Serialize};

use super::{StepTokens, TrajectoryId};

/// One step as SkyRL's generator returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkyrlStep {
    /// The prompt's token ids.
    pub prompt_token_ids: Vec<u32>,
    /// The generated token ids.
    pub response_ids: Vec<u32>,
    /// 1 per response token (every generated token is trained).
    pub loss_masks: Vec<u8>,
    /// Per response token: the reward on the last token of the last step, else 0.
    pub rewards: Vec<f64>,
    /// The log-probability of each response token, when captured.
    pub rollout_logprobs: Option<Vec<f64>>,
    /// Which task and sample the step belongs to.
    pub trajectory_ids: TrajectoryId,
    /// Whether it is its trajectory's last step.
    pub is_last_step: bool,
}

/// The records of the trajectory `id` (its id in the export, see [`super::Repetitions`]),
/// whose steps have `tokens`, rewarded `reward`.
pub fn steps(id: TrajectoryId, tokens: &[StepTokens], reward: f64) -> Vec<SkyrlStep> {
    let last = tokens.len().saturating_sub(1);
    tokens
        .iter()
        .enumerate()
        .map(|(index, step)| {
            let length = step.response_ids.len();
            let mut rewards = vec![0.0; length];
            if index == last && length > 0 {
                rewards[length - 1] = reward;
            }
            SkyrlStep {
                prompt_token_ids: step.prompt_ids.clone(),
                response_ids: step.response_ids.clone(),
                loss_masks: vec![1; length],
                rewards,
                rollout_logprobs: step.logprobs.clone(),
                trajectory_ids: id.clone(),
                is_last_step: index == last,
            }
        })
        .collect()
}

/// Checks records as SkyRL reads them: per-token lists as long as the response,
/// `is_last_step` exactly where the trajectory changes and at the end, rewards only on the
/// last token of last steps. The error names the record (from 0).
pub fn check(records: &[SkyrlStep]) -> Result<(), String> {
    for (index, record) in records.iter().enumerate() {
        let length = record.response_ids.len();
        let fail = |what: &str| Err(format!("record {index}: {what}"));
        if length == 0 {
            return fail("empty response_ids");
        }
        if record.loss_masks.len() != length || record.rewards.len() != length {
            return fail("loss_masks and rewards must be as long as response_ids");
        }
        if record
            .rollout_logprobs
            .as_ref()
            .is_some_and(|l| l.len() != length)
        {
            return fail("rollout_logprobs must be as long as response_ids");
        }
        let changes = records
            .get(index + 1)
            .is_none_or(|next| next.trajectory_ids != record.trajectory_ids);
        if record.is_last_step != changes {
            return fail("is_last_step must be true exactly where trajectory_ids changes");
        }
        let early = if record.is_last_step {
            length - 1
        } else {
            length
        };
        if record.rewards[..early].iter().any(|reward| *reward != 0.0) {
            return fail("rewards must be 0 except on the last token of a last step");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{fixture, step_tokens};
    use super::*;

    #[test]
    fn records_round_trip_and_hold_the_captured_ids() {
        let trajectory = fixture::captured();
        let tokens = step_tokens(&trajectory, None).unwrap();
        let records = steps(TrajectoryId::of(&trajectory.header), &tokens, 1.0);
        check(&records).unwrap();
        assert_eq!(records.len(), 3);
        for (record, step) in records.iter().zip(&trajectory.steps) {
            let captured = step.tokens.as_ref().unwrap();
            assert_eq!(record.prompt_token_ids, captured.prompt_ids);
            assert_eq!(record.response_ids, captured.completion_ids);
            assert_eq!(record.rollout_logprobs, captured.logprobs);
            assert_eq!(record.loss_masks, vec![1, 1]);
        }
        assert_eq!(records[2].rewards, vec![0.0, 1.0]);
        assert_eq!(records[0].rewards, vec![0.0, 0.0]);
        assert_eq!(
            records[0].trajectory_ids,
            TrajectoryId {
                instance_id: "calc-1".into(),
                repetition_id: 2
            }
        );
        let lines: Vec<String> = records
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        let back: Vec<SkyrlStep> = lines
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(back, records);
        let keys: Vec<String> =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&lines[0])
                .unwrap()
                .keys()
                .cloned()
                .collect();
        assert_eq!(
            keys,
            [
                "prompt_token_ids",
                "response_ids",
                "loss_masks",
                "rewards",
                "rollout_logprobs",
                "trajectory_ids",
                "is_last_step"
            ]
        );
    }

    #[test]
    fn check_catches_broken_records() {
        let trajectory = fixture::captured();
        let tokens = step_tokens(&trajectory, None).unwrap();
        let good = steps(TrajectoryId::of(&trajectory.header), &tokens, 0.5);
        let mut early_last = good.clone();
        early_last[0].is_last_step = true;
        assert!(check(&early_last).unwrap_err().contains("record 0"));
        let mut early_reward = good.clone();
        early_reward[1].rewards[1] = 1.0;
        assert!(check(&early_reward).unwrap_err().contains("record 1"));
        let mut short = good;
        short[2].loss_masks.pop();
        assert!(check(&short).is_err());
    }
}
