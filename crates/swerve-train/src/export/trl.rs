//! TRL's conversational prompt/completion rows (FORMATS g.6): one row per trained step,
//! `prompt` (the messages the step was sent), `completion` (its assistant turn as the model
//! wrote it: reasoning in `reasoning_content`, native calls in `tool_calls` with their
//! arguments as strings) and, when the run used native calls, `tools` (the schemas).
//! `completion_only_loss` is TRL's default for this shape, so only the turn is trained.
//! Steps of weight 0 (format errors, see [`crate::rft`]) have no row.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::trajectory::{Message, Trajectory};

use super::sent_messages;

/// One prompt/completion row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrlRow {
    /// What the step was sent.
    pub prompt: Vec<Message>,
    /// The step's assistant turn, alone.
    pub completion: Vec<Message>,
    /// The tool schemas, with native function calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
}

/// The rows of `trajectory`: its steps whose weight in `weights` is positive.
/// `conversation` stands in for requests an import did not record.
pub fn rows(
    trajectory: &Trajectory,
    conversation: &[Message],
    weights: &[f64],
    tools: Option<&[Value]>,
) -> Vec<TrlRow> {
    trajectory
        .steps
        .iter()
        .enumerate()
        .filter(|(index, _)| weights.get(*index).is_some_and(|weight| *weight > 0.0))
        .map(|(index, step)| TrlRow {
            prompt: sent_messages(trajectory, index, Some(conversation)),
            completion: vec![step.reply_turn()],
            tools: tools.map(<[Value]>::to_vec),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use swerve_core::trajectory::Role;

    use super::super::{conversation_of, fixture};
    use super::*;
    use crate::rft::turn_weights;

    #[test]
    fn one_row_per_trained_step_round_trips() {
        let trajectory = fixture::captured();
        let conversation = conversation_of(&trajectory).unwrap();
        let weights = turn_weights(&trajectory);
        let rows = rows(&trajectory, &conversation, &weights, None);
        // Step 1 had a format error: no row.
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].prompt.len(), 6);
        assert_eq!(rows[1].completion[0].role, Role::Assistant);
        assert_eq!(rows[1].completion[0].text(), "reply 2");
        for row in &rows {
            let line = serde_json::to_string(row).unwrap();
            assert!(!line.contains("\"tools\""));
            assert_eq!(&serde_json::from_str::<TrlRow>(&line).unwrap(), row);
        }
        let tools = [serde_json::json!({"type": "function", "function": {"name": "finish"}})];
        let with_tools = super::rows(&trajectory, &conversation, &weights, Some(&tools));
        assert_eq!(with_tools[0].tools.as_deref(), Some(&tools[..]));
    }
}
