//! swerve's [`Message`]s as the dicts chat templates read.
//!
//! The shape is OpenAI's, as vLLM's server hands it to a template and transformers passes it
//! on:
//! - `content`: the text, or the list of content parts as it is; no content becomes `""`
//!   (vLLM does the same; transformers would drop the key, and Qwen3's template then fails).
//! - `tool_calls`: `{"id", "type", "function": {"name", "arguments"}}` with `arguments`
//!   parsed from its JSON text into an object (vLLM does this; templates such as Llama 3.1's
//!   `tojson` it, Qwen3's accepts both). Empty arguments become `{}`; text that is not JSON
//!   stays a string. Absent when the message has no calls.
//! - `reasoning_content`, and `thinking` first with the same text (transformers 5 adds it
//!   for templates that read that name); `tool_call_id` and `name` when set.

use serde_json::{Map, Value};
use swerve_core::trajectory::{ChatToolCall, Content, Message, Role};

/// The messages as template values, in order.
pub(crate) fn template_messages(messages: &[Message]) -> Vec<Value> {
    messages.iter().map(template_message).collect()
}

fn template_message(message: &Message) -> Value {
    let mut dict = Map::new();
    if let Some(reasoning) = &message.reasoning_content {
        dict.insert("thinking".to_owned(), Value::from(reasoning.as_str()));
    }
    dict.insert("role".to_owned(), Value::from(role_name(message.role)));
    let content = match &message.content {
        None => Value::from(""),
        Some(Content::Text(text)) => Value::from(text.as_str()),
        Some(Content::Parts(parts)) => Value::Array(parts.clone()),
    };
    dict.insert("content".to_owned(), content);
    if let Some(reasoning) = &message.reasoning_content {
        dict.insert(
            "reasoning_content".to_owned(),
            Value::from(reasoning.as_str()),
        );
    }
    if !message.tool_calls.is_empty() {
        let calls = message.tool_calls.iter().map(tool_call).collect();
        dict.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    if let Some(id) = &message.tool_call_id {
        dict.insert("tool_call_id".to_owned(), Value::from(id.as_str()));
    }
    if let Some(name) = &message.name {
        dict.insert("name".to_owned(), Value::from(name.as_str()));
    }
    Value::Object(dict)
}

fn tool_call(call: &ChatToolCall) -> Value {
    let raw = &call.function.arguments;
    let arguments = if raw.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw.as_str()))
    };
    serde_json::json!({
        "id": call.id,
        "type": call.kind,
        "function": {"name": call.function.name, "arguments": arguments},
    })
}

/// The role as templates spell it.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::Developer => "developer",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_the_openai_dict_shape_with_parsed_arguments() {
        let assistant = Message {
            content: None,
            reasoning_content: Some("think".into()),
            tool_calls: vec![
                ChatToolCall::new("c1", "bash", r#"{"command": "ls", "n": 1.0}"#),
                ChatToolCall::new("c2", "finish", ""),
                ChatToolCall::new("c3", "broken", "{not json"),
            ],
            ..Message::assistant("")
        };
        let values = template_messages(&[assistant, Message::tool("c1", "out")]);
        assert_eq!(
            serde_json::to_string(&values[0]).unwrap(),
            concat!(
                r#"{"thinking":"think","role":"assistant","content":"","reasoning_content":"think","tool_calls":["#,
                r#"{"id":"c1","type":"function","function":{"name":"bash","arguments":{"command":"ls","n":1.0}}},"#,
                r#"{"id":"c2","type":"function","function":{"name":"finish","arguments":{}}},"#,
                r#"{"id":"c3","type":"function","function":{"name":"broken","arguments":"{not json"}}]}"#
            )
        );
        assert_eq!(
            values[1],
            serde_json::json!({"role": "tool", "content": "out", "tool_call_id": "c1"})
        );
    }

    #[test]
    fn content_parts_are_passed_as_they_are() {
        let parts = vec![serde_json::json!({"type": "text", "text": "a"})];
        let message = Message {
            content: Some(Content::Parts(parts.clone())),
            name: Some("alice".into()),
            ..Message::user("")
        };
        assert_eq!(
            template_messages(&[message])[0],
            serde_json::json!({"role": "user", "content": parts, "name": "alice"})
        );
    }
}
