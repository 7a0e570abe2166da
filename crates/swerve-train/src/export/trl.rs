//! TRL's conversational prompt/completion rows (FORMATS g.6): one row per trained step,
//! `prompt` (the messages the step was sent), `completion` (its assistant turn as the model
//! wrote it: reasoning in `reasoning_content`, native calls in `tool_calls`) and, when the
//! run used native calls, `tools` (the schemas, as one JSON string).
//! `completion_only_loss` is TRL's default for this shape, so only the turn is trained.
//! Steps of weight 0 (format errors, see [`crate::rft`]) have no row.
//!
//! As TRL's dataset formats document: tool-call `arguments` are JSON *objects* (chat
//! templates such as Qwen2.5's apply `tojson` to them, so a string would be encoded twice;
//! Llama 3.1's iterates their items), and `tools` is a JSON string (as a list of objects,
//! `datasets` infers one struct over every schema and fills the keys a tool lacks with
//! nulls, which end up in the rendered prompt). Arguments that are not a JSON object stay
//! the text the model wrote.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::trajectory::{Message, Trajectory};

use super::sent_messages;

/// One prompt/completion row: messages as OpenAI objects, tool-call arguments as objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrlRow {
    /// What the step was sent.
    pub prompt: Vec<Value>,
    /// The step's assistant turn, alone.
    pub completion: Vec<Value>,
    /// The tool schemas as a JSON string, with native function calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
}

/// `message` as a TRL row holds it: its tool calls' `arguments` parsed into the JSON object
/// the model wrote (left as text when they are not one).
pub fn trl_message(message: &Message) -> Value {
    let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
    if let Some(calls) = value.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for call in calls {
            let Some(arguments) = call.pointer_mut("/function/arguments") else {
                continue;
            };
            if let Some(Ok(object @ Value::Object(_))) =
                arguments.as_str().map(serde_json::from_str::<Value>)
            {
                *arguments = object;
            }
        }
    }
    value
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
            prompt: sent_messages(trajectory, index, Some(conversation))
                .iter()
                .map(trl_message)
                .collect(),
            completion: vec![trl_message(&step.reply_turn())],
            tools: tools.map(|tools| Value::from(tools.to_vec()).to_string()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
        assert_eq!(rows[1].completion[0]["role"], "assistant");
        assert_eq!(rows[1].completion[0]["content"], "reply 2");
        for row in &rows {
            let line = serde_json::to_string(row).unwrap();
            assert!(!line.contains("\"tools\""));
            assert_eq!(&serde_json::from_str::<TrlRow>(&line).unwrap(), row);
        }
        let tools = [serde_json::json!({"type": "function", "function": {"name": "finish"}})];
        let with_tools = super::rows(&trajectory, &conversation, &weights, Some(&tools));
        let written: Value = serde_json::from_str(with_tools[0].tools.as_deref().unwrap()).unwrap();
        assert_eq!(written, Value::from(tools.to_vec()));
    }

    #[test]
    fn tool_call_arguments_become_objects_unless_they_are_not_json_objects() {
        let mut message = Message::assistant("");
        for (id, arguments) in [("a", r#"{"cmd": "ls"}"#), ("b", "not json"), ("c", "[1]")] {
            message
                .tool_calls
                .push(swerve_core::trajectory::ChatToolCall {
                    id: id.into(),
                    kind: "function".into(),
                    function: swerve_core::trajectory::FunctionCall {
                        name: "execute_bash".into(),
                        arguments: arguments.into(),
                    },
                });
        }
        let value = trl_message(&message);
        assert_eq!(value["role"], "assistant");
        assert_eq!(value["tool_calls"][0]["function"]["arguments"]["cmd"], "ls");
        assert_eq!(value["tool_calls"][1]["function"]["arguments"], "not json");
        assert_eq!(value["tool_calls"][2]["function"]["arguments"], "[1]");
    }
}
