//! [`HermesFormat`]: Hermes/Qwen `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
//! calls in the reply text, as Qwen2.5/Qwen3 chat templates and rLLM's `QwenToolParser`
//! write and read them.
//!
//! The tool prompt, the call and the result are written exactly as Qwen's chat template
//! renders native tools, tool calls and `role: tool` messages, so a prompt built with this
//! format gives the model the same tokens as the server-side template would. A block runs
//! from `<tool_call>` to the first `</tool_call>`; its content may sit in a code fence,
//! `arguments` may be a JSON string holding the object (or be spelled `parameters`), and
//! the last block's `</tool_call>` may be missing at the end of the reply.

use serde_json::{Value, json};
use swerve_core::ToolCall;

use super::error::{CallSyntax, FormatError, HERMES_LAYOUT};
use super::json::{arguments_from_value, kind, python_json};
use super::scan::Pick;
use super::scan::{
    Block, NextTag, call_region_start, is_cut_tail, join_thought, parse_text_reply, strip_fences,
};
use super::{AssistantMessage, ModelOutput, ParsedResponse, Rendered, ResultMessage, ToolFormat};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// Hermes/Qwen `<tool_call>` JSON calls (`hermes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HermesFormat;

impl ToolFormat for HermesFormat {
    fn name(&self) -> &'static str {
        "hermes"
    }

    /// Qwen's `# Tools` section: each schema as one line of JSON inside `<tools>`, then
    /// the call layout.
    fn render(&self, tools: &[Value]) -> Rendered {
        let schemas: String = tools
            .iter()
            .map(|tool| format!("\n{}", python_json(tool)))
            .collect();
        Rendered {
            system_text: Some(format!(
                "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>{schemas}\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n{HERMES_LAYOUT}"
            )),
            tools: None,
        }
    }

    fn parse(&self, output: &ModelOutput) -> Result<ParsedResponse, FormatError> {
        parse_text_reply(output, CallSyntax::Hermes, Pick::First, scan_blocks)
    }

    /// The thought, a line break, and `<tool_call>\n{"name": …, "arguments": …}\n
    /// </tool_call>` with Python's JSON spacing, as Qwen's template writes a tool call.
    fn render_call(&self, thought: &str, call: &ToolCall, _id: Option<&str>) -> AssistantMessage {
        let body = python_json(&json!({"name": call.name, "arguments": call.arguments}));
        AssistantMessage {
            content: join_thought(thought, "\n", &format!("{OPEN}\n{body}\n{CLOSE}")),
            tool_calls: Vec::new(),
        }
    }

    /// A user message `<tool_response>\n{observation}\n</tool_response>`: the text Qwen's
    /// template makes of a `role: tool` message, without needing a call id.
    fn render_result(&self, observation: &str, _call_id: Option<&str>) -> ResultMessage {
        ResultMessage::user(format!("<tool_response>\n{observation}\n</tool_response>"))
    }
}

/// The `<tool_call>` blocks after the reasoning, in order.
fn scan_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut position = call_region_start(text, |before| before.contains(OPEN));
    let (mut opens, mut closes) = (NextTag::new(OPEN), NextTag::new(CLOSE));
    while let Some(start) = opens.find(text, position) {
        let body_start = start + OPEN.len();
        let rest = &text[body_start..];
        let close = closes.find(text, body_start).map(|at| at - body_start);
        let block = match opens.find(text, body_start) {
            Some(next) if close.is_none_or(|close| next - body_start < close) => Block {
                start,
                end: next,
                name: String::new(),
                parsed: Err(FormatError::UnclosedBlock {
                    syntax: CallSyntax::Hermes,
                    name: String::new(),
                }),
            },
            _ => {
                let (body, end) = match close {
                    Some(close) => (&rest[..close], body_start + close + CLOSE.len()),
                    None => (cut_tail(rest), text.len()),
                };
                let parsed = parse_body(body);
                Block {
                    start,
                    end,
                    name: match &parsed {
                        Ok(call) => call.name.clone(),
                        Err(FormatError::BadArguments { function, .. }) => function.clone(),
                        Err(_) => String::new(),
                    },
                    parsed,
                }
            }
        };
        position = block.end;
        blocks.push(block);
    }
    blocks
}

/// The body of a block whose `</tool_call>` is missing, without what a stop sequence left
/// of that tag.
fn cut_tail(body: &str) -> &str {
    match body.rfind('<') {
        Some(at) if is_cut_tail(&body[at..], CLOSE) => &body[..at],
        _ => body,
    }
}

/// The call in one block's content.
fn parse_body(body: &str) -> Result<ToolCall, FormatError> {
    let body = strip_fences(body);
    if body.is_empty() {
        return Err(FormatError::InvalidJson {
            detail: "the block is empty".to_owned(),
        });
    }
    let value: Value = serde_json::from_str(body).map_err(|err| FormatError::InvalidJson {
        detail: err.to_string(),
    })?;
    let Value::Object(mut object) = value else {
        return Err(FormatError::InvalidJson {
            detail: format!("it is {}", kind(&value)),
        });
    };
    let name = match object.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => {
            return Err(FormatError::MissingName {
                syntax: CallSyntax::Hermes,
            });
        }
    };
    let bad_arguments = |detail: String| FormatError::BadArguments {
        syntax: CallSyntax::Hermes,
        function: name.clone(),
        detail,
    };
    let arguments = match (object.remove("arguments"), object.remove("parameters")) {
        (Some(_), Some(_)) => {
            return Err(bad_arguments(
                "both \"arguments\" and \"parameters\" are given".to_owned(),
            ));
        }
        (Some(arguments), None) | (None, Some(arguments)) => arguments,
        (None, None) => Value::Null,
    };
    let arguments = arguments_from_value(arguments).map_err(bad_arguments)?;
    Ok(ToolCall { name, arguments })
}
