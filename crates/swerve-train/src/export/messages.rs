//! Whole conversations with per-message loss weights: SFT data of whole trajectories
//! (rejection fine-tuning). One row per trajectory: `id`, `instance_id`, `reward` (when
//! graded), `messages` (every turn of [`Trajectory::conversation`], assistant turns with
//! their reasoning in `reasoning_content`), each message with `loss_weight` and `train`
//! (axolotl; LLaMA-Factory v1 needs content blocks: [`super::llamafactory`]): 1 / true on assistant turns of positive weight, 0 / false
//! elsewhere, so a turn that caused a format error is not trained; `tools` as a JSON string
//! when the run used native calls (FORMATS g.8). Snapshot samples, one per step, are
//! `swerve data snapshots`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::trajectory::{Message, Role, Trajectory};

/// One message with its weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightedMessage {
    /// The message.
    #[serde(flatten)]
    pub message: Message,
    /// 1 when trained, else 0.
    pub loss_weight: f64,
    /// Whether it is trained.
    pub train: bool,
}

/// One trajectory's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagesRow {
    /// The trajectory id.
    pub id: String,
    /// The task instance.
    pub instance_id: String,
    /// The trajectory's reward, when it was graded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<f64>,
    /// The conversation, weighted.
    pub messages: Vec<WeightedMessage>,
    /// The tool schemas as a JSON string, with native function calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
}

/// The row of `trajectory`, whose conversation is `conversation`: assistant turn `k` gets
/// `weights[k]`.
pub fn row(
    trajectory: &Trajectory,
    conversation: Vec<Message>,
    weights: &[f64],
    reward: Option<f64>,
    tools: Option<&[Value]>,
) -> MessagesRow {
    let mut turn = 0;
    let messages = conversation
        .into_iter()
        .map(|message| {
            let weight = if message.role == Role::Assistant {
                turn += 1;
                weights.get(turn - 1).copied().unwrap_or(0.0)
            } else {
                0.0
            };
            WeightedMessage {
                message,
                loss_weight: weight,
                train: weight > 0.0,
            }
        })
        .collect();
    MessagesRow {
        id: trajectory.header.id.clone(),
        instance_id: trajectory.header.instance_id.clone(),
        reward,
        messages,
        tools: tools.map(|tools| Value::from(tools.to_vec()).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{conversation_of, fixture};
    use super::*;
    use crate::rft::turn_weights;

    #[test]
    fn assistant_turns_are_weighted_and_the_row_round_trips() {
        let trajectory = fixture::captured();
        let conversation = conversation_of(&trajectory).unwrap();
        let row = row(
            &trajectory,
            conversation,
            &turn_weights(&trajectory),
            Some(1.0),
            None,
        );
        let weights: Vec<(Role, f64, bool)> = row
            .messages
            .iter()
            .map(|m| (m.message.role, m.loss_weight, m.train))
            .collect();
        assert_eq!(
            weights,
            [
                (Role::System, 0.0, false),
                (Role::User, 0.0, false),
                (Role::Assistant, 1.0, true),
                (Role::User, 0.0, false),
                (Role::Assistant, 0.0, false),
                (Role::User, 0.0, false),
                (Role::Assistant, 1.0, true),
            ]
        );
        let line = serde_json::to_string(&row).unwrap();
        assert_eq!(serde_json::from_str::<MessagesRow>(&line).unwrap(), row);
        let first: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(first["messages"][2]["role"], "assistant");
        assert_eq!(first["messages"][2]["loss_weight"], 1.0);
    }
}
