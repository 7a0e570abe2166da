//! SWE-AGILE's optional `recall_thought(step_ids)` tool: the full reasoning of earlier steps,
//! for when a digest is not enough.
//!
//! It reads the conversation (each assistant turn is one step and holds its reasoning in
//! `reasoning_content`), so it runs in the agent loop, not in the sandboxed toolbox, and is
//! offered only with `agent.reasoning.recall_thought = true`. Its texts are SWE-AGILE's
//! (FORMATS a.6), quirks included: every recalled step is headed by the *whole* list asked
//! for (`STEP [0, 2]: …`), a step without reasoning recalls as `None`, the first step out of
//! range replaces everything with `Error: Step_id {i} exceed current past steps length
//! {n}!`, and a negative id counts from the end (Python indexing). Steps are numbered from 0
//! and the current step counts, as upstream appends a step before running its action.
//! Arguments upstream would crash on (no `step_ids`, or not a list of integers) get an
//! error text of swerve's; a single integer is taken as a list of one.

use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_core::trajectory::{Message, Role};

/// The tool's name.
pub const NAME: &str = "recall_thought";
/// Its one parameter.
const PARAMETER: &str = "step_ids";
/// The first line of every recall.
const BEGIN: &str = "=== RECALLED THOUGHT BEGIN ===\n";
/// Characters of an unreadable argument quoted back.
const QUOTED_CHARS: usize = 100;

/// The tool's schema, in the OpenAI function shape the tool-call formats render.
pub fn spec() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": NAME,
            "description": "Bring back the detailed reasoning of earlier steps. Only your most recent steps keep their detailed reasoning in the conversation; older steps keep only their digest. Call this when a digest leaves out something you need from the reasoning behind it. Steps are numbered from 0 in the order of your replies; the current reply is the last step.",
            "parameters": {
                "type": "object",
                "properties": {
                    PARAMETER: {
                        "description": "The numbers of the steps whose reasoning to bring back, as a JSON list, e.g. [0, 3].",
                        "type": "array",
                        "items": {"type": "integer"},
                    }
                },
                "required": [PARAMETER],
            },
        }
    })
}

/// What a recall shows the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recalled {
    /// The observation.
    pub text: String,
    /// Whether the call was wrong (a step out of range, unreadable ids).
    pub is_error: bool,
}

/// Runs `call` over `conversation`, whose assistant turns (the current one included) are
/// the steps so far.
pub fn recall(conversation: &[Message], call: &ToolCall) -> Recalled {
    let ids = match step_ids(call.arguments.get(PARAMETER)) {
        Ok(ids) => ids,
        Err(text) => {
            return Recalled {
                text,
                is_error: true,
            };
        }
    };
    let steps: Vec<&Message> = conversation
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .collect();
    let count = steps.len() as i128;
    let listed = format!(
        "[{}]",
        ids.iter()
            .map(i128::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut text = BEGIN.to_owned();
    for &id in &ids {
        let position = if id < 0 { count + id } else { id };
        let Some(step) = usize::try_from(position)
            .ok()
            .and_then(|position| steps.get(position))
        else {
            return Recalled {
                text: format!("Error: Step_id {id} exceed current past steps length {count}!"),
                is_error: true,
            };
        };
        let reasoning = step.reasoning_content.as_deref().unwrap_or("None");
        text.push_str(&format!("STEP {listed}: {reasoning}\n"));
    }
    Recalled {
        text,
        is_error: false,
    }
}

/// The step ids of the `step_ids` argument: a JSON list of integers, given as JSON or as
/// text holding JSON (text formats give every argument as a string); a single integer is a
/// list of one. Never panics; the error is the text the model is shown.
pub fn step_ids(argument: Option<&Value>) -> Result<Vec<i128>, String> {
    let example = "a JSON list of step numbers such as [0, 2]";
    let Some(argument) = argument else {
        return Err(format!("Error: {NAME} needs {PARAMETER}, {example}."));
    };
    let parsed;
    let value = match argument {
        Value::String(text) => {
            parsed = serde_json::from_str::<Value>(text.trim()).ok();
            parsed.as_ref()
        }
        other => Some(other),
    };
    let integer = |value: &Value| {
        value
            .as_i64()
            .map(i128::from)
            .or_else(|| value.as_u64().map(i128::from))
    };
    let ids = match value {
        Some(Value::Array(items)) => items.iter().map(integer).collect(),
        Some(single) => integer(single).map(|id| vec![id]),
        None => None,
    };
    ids.ok_or_else(|| {
        let given = match argument {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let mut quoted: String = given.chars().take(QUOTED_CHARS).collect();
        if given.chars().count() > QUOTED_CHARS {
            quoted.push('…');
        }
        format!("Error: {PARAMETER} must be {example}, not {quoted}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(reasoning: Option<&str>) -> Message {
        Message {
            reasoning_content: reasoning.map(str::to_owned),
            ..Message::assistant("digest and call")
        }
    }

    /// A task, three steps (the second without reasoning) and their observations.
    fn conversation() -> Vec<Message> {
        vec![
            Message::system("tools"),
            Message::user("task"),
            turn(Some("first")),
            Message::user("o0"),
            turn(None),
            Message::tool("call_1", "o1"),
            turn(Some("third")),
        ]
    }

    fn call(ids: Value) -> ToolCall {
        ToolCall::new(NAME).arg(PARAMETER, ids)
    }

    fn text(ids: Value) -> String {
        recall(&conversation(), &call(ids)).text
    }

    #[test]
    fn recalls_in_upstreams_words() {
        assert_eq!(
            text(json!("[0, 2]")),
            "=== RECALLED THOUGHT BEGIN ===\nSTEP [0, 2]: first\nSTEP [0, 2]: third\n"
        );
        // Native calls give the list itself; a step without reasoning is `None`; negative
        // ids count from the end.
        assert_eq!(
            text(json!([1, -1])),
            "=== RECALLED THOUGHT BEGIN ===\nSTEP [1, -1]: None\nSTEP [1, -1]: third\n"
        );
        assert_eq!(
            text(json!(" 2 ")),
            "=== RECALLED THOUGHT BEGIN ===\nSTEP [2]: third\n"
        );
        assert_eq!(text(json!([])), "=== RECALLED THOUGHT BEGIN ===\n");
    }

    #[test]
    fn a_step_out_of_range_is_upstreams_error() {
        for (ids, bad) in [
            (json!("[0, 3]"), "3"),
            (json!([-4]), "-4"),
            (json!([18446744073709551615u64]), "18446744073709551615"),
        ] {
            let recalled = recall(&conversation(), &call(ids));
            assert!(recalled.is_error);
            assert_eq!(
                recalled.text,
                format!("Error: Step_id {bad} exceed current past steps length 3!")
            );
        }
    }

    #[test]
    fn unreadable_ids_are_explained() {
        let missing = recall(&conversation(), &ToolCall::new(NAME));
        assert!(missing.is_error);
        assert!(missing.text.contains("needs step_ids"), "{}", missing.text);
        for bad in [json!("0, 2"), json!("[0.5]"), json!(["0"]), json!({"a": 1})] {
            let recalled = recall(&conversation(), &call(bad.clone()));
            assert!(recalled.is_error, "{bad}");
            assert!(
                recalled
                    .text
                    .starts_with("Error: step_ids must be a JSON list"),
                "{}",
                recalled.text
            );
        }
        let long = recall(&conversation(), &call(json!("x".repeat(500)))).text;
        assert!(long.ends_with("x…") && long.len() < 200, "{long}");
    }

    #[test]
    fn the_schema_names_the_tool_and_its_parameter() {
        let spec = spec();
        assert_eq!(spec["function"]["name"], NAME);
        assert_eq!(spec["function"]["parameters"]["required"][0], PARAMETER);
    }
}
