//! LLaMA-Factory v1's SFT samples (`src/llamafactory/v1/utils/types.py`, `SFTSample`): one
//! row per trajectory, `messages` whose `content` is a list of typed blocks — `reasoning`
//! (the turn's `reasoning_content`), `text`, and one `tool_call` per native call, its value
//! the JSON text of `{"name", "arguments"}` with the arguments as an object — each message
//! with its `loss_weight` (v1 splits samples on it, so a turn that caused a format error is
//! not trained), and `tools` as a JSON string. Built from the weighted conversation of
//! [`super::messages`]; roles are v1's (`system`, `user`, `assistant`, `tool`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::messages::MessagesRow;
use swerve_core::trajectory::Message;

/// One content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// `text`, `reasoning` or `tool_call`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text, the reasoning, or a tool call as JSON text.
    pub value: String,
}

/// One message of a v1 sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct V1Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The content blocks.
    pub content: Vec<Block>,
    /// 1 when trained, else 0.
    pub loss_weight: f64,
}

/// One trajectory as a v1 SFT sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct V1Row {
    /// The conversation.
    pub messages: Vec<V1Message>,
    /// The tool schemas as a JSON string, with native function calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
    /// The trajectory's ids and reward, as JSON text (v1's `extra_info` is a string).
    pub extra_info: String,
}

/// `row` (the weighted conversation) as a v1 sample.
pub fn row(row: &MessagesRow) -> V1Row {
    V1Row {
        messages: row
            .messages
            .iter()
            .map(|weighted| V1Message {
                role: role(&weighted.message),
                content: blocks(&weighted.message),
                loss_weight: weighted.loss_weight,
            })
            .collect(),
        tools: row.tools.clone(),
        extra_info: json!({"id": row.id, "instance_id": row.instance_id, "reward": row.reward})
            .to_string(),
    }
}

fn role(message: &Message) -> String {
    match serde_json::to_value(message.role) {
        Ok(Value::String(role)) => role,
        _ => "user".into(),
    }
}

/// The message's blocks: reasoning, text, then its tool calls.
fn blocks(message: &Message) -> Vec<Block> {
    let mut blocks = Vec::new();
    if let Some(reasoning) = message.reasoning_content.as_ref().filter(|r| !r.is_empty()) {
        blocks.push(Block {
            kind: "reasoning".into(),
            value: reasoning.clone(),
        });
    }
    let text = message.text();
    if !text.is_empty() || message.tool_calls.is_empty() {
        blocks.push(Block {
            kind: "text".into(),
            value: text,
        });
    }
    for call in &message.tool_calls {
        let arguments = serde_json::from_str::<Value>(&call.function.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| Value::String(call.function.arguments.clone()));
        blocks.push(Block {
            kind: "tool_call".into(),
            value: json!({"name": call.function.name, "arguments": arguments}).to_string(),
        });
    }
    blocks
}

#[cfg(test)]
mod tests {
    use swerve_core::trajectory::{ChatToolCall, FunctionCall};

    use super::super::{conversation_of, fixture, messages};
    use super::*;
    use crate::rft::turn_weights;

    #[test]
    fn messages_become_typed_blocks_with_their_weights() {
        let trajectory = fixture::captured();
        let conversation = conversation_of(&trajectory).unwrap();
        let weighted = messages::row(
            &trajectory,
            conversation,
            &turn_weights(&trajectory),
            Some(1.0),
            None,
        );
        let v1 = row(&weighted);
        assert_eq!(v1.messages.len(), weighted.messages.len());
        for (v1, weighted) in v1.messages.iter().zip(&weighted.messages) {
            assert_eq!(v1.loss_weight, weighted.loss_weight);
            assert_eq!(v1.content.last().unwrap().value, weighted.message.text());
        }
        assert_eq!(v1.messages[2].role, "assistant");
        let extra: Value = serde_json::from_str(&v1.extra_info).unwrap();
        assert_eq!(extra["reward"], 1.0);
        let line = serde_json::to_string(&v1).unwrap();
        assert_eq!(serde_json::from_str::<V1Row>(&line).unwrap(), v1);
    }

    #[test]
    fn reasoning_and_native_calls_are_their_own_blocks() {
        let mut message = Message::assistant("");
        message.reasoning_content = Some("think".into());
        message.tool_calls.push(ChatToolCall {
            id: "c".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "execute_bash".into(),
                arguments: r#"{"cmd": "ls"}"#.into(),
            },
        });
        let blocks = blocks(&message);
        let kinds: Vec<&str> = blocks.iter().map(|block| block.kind.as_str()).collect();
        assert_eq!(kinds, ["reasoning", "tool_call"]);
        let call: Value = serde_json::from_str(&blocks[1].value).unwrap();
        assert_eq!(
            call,
            json!({"name": "execute_bash", "arguments": {"cmd": "ls"}})
        );
    }
}
