//! [`XmlFormat`]: R2E-Gym's `<function=NAME><parameter=KEY>VALUE</parameter></function>`
//! calls in the reply text.
//!
//! A block runs from its `<function=…>` tag to the first `</function>` after it, and a
//! parameter value to the first `</parameter>` after its tag, as R2E-Gym's regexes read
//! them; a valid block gives exactly the [`ToolCall`] of [`crate::xml::parse_xml`] (all
//! values strings, keys and values stripped). On top of R2E-Gym, this parser:
//! - ignores blocks drafted in reasoning, before `</think>`;
//! - accepts a last block whose `</function>` is missing or cut short at the end of the
//!   reply (a stop sequence), even inside a code fence;
//! - reports, instead of guessing: several differing calls, a block not closed before the
//!   next one, a parameter without `</parameter>`, text between parameters, a parameter
//!   given twice with different values, and names that are not plain names.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use swerve_core::ToolCall;

use super::error::{CallSyntax, FormatError};
use super::scan::{
    Block, NextTag, Pick, call_region_start, is_cut_tail, join_thought, parse_text_reply, shorten,
};
use super::{AssistantMessage, ModelOutput, ParsedResponse, Rendered, ResultMessage, ToolFormat};
use crate::pytext::py_strip;

/// A `<function=…>` tag anywhere (the name may be empty or malformed; checked later).
static FUNCTION_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<function\s*=\s*([^>]*)>").expect("valid regex"));
/// A `<function=…>` tag at the start of the text.
static FUNCTION_TAG_HERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A<function\s*=\s*([^>]*)>").expect("valid regex"));
/// A `<parameter=…>` tag at the start of the text.
static PARAMETER_TAG_HERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A<parameter\s*=\s*([^>]*)>").expect("valid regex"));

const FUNCTION_END: &str = "</function>";
const PARAMETER_END: &str = "</parameter>";
/// The longest excerpt of a malformed tag or stray text quoted back to the model.
const EXCERPT_CHARS: usize = 80;

/// The end of R2E-Gym's XML system prompt: the call layout and its rules.
const INSTRUCTIONS: &str = "
If you choose to call a function ONLY reply in the following format with NO suffix:

<function=example_function_name>
<parameter=example_parameter_1>value_1</parameter>
<parameter=example_parameter_2>
This is the value for the second parameter
that can span
multiple lines
</parameter>
</function>

<IMPORTANT>
Reminder:
- Function calls MUST follow the specified format, start with <function= and end with </function>
- Required parameters MUST be specified
- Only call one function at a time
- VERY IMPORTANT: Each response must include both reasoning (as natural text) and function call (in above format) to solve the task.
</IMPORTANT>";

/// R2E-Gym XML calls (`xml` with [`Pick::First`], `xml_last` with [`Pick::Last`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XmlFormat {
    /// Which block is the call.
    pub pick: Pick,
}

impl XmlFormat {
    /// The format choosing blocks with `pick`.
    pub fn new(pick: Pick) -> Self {
        Self { pick }
    }
}

impl ToolFormat for XmlFormat {
    fn name(&self) -> &'static str {
        match self.pick {
            Pick::First => "xml",
            Pick::Last => "xml_last",
        }
    }

    /// Documents each tool in the layout R2E-Gym's XML prompt uses (`---- BEGIN FUNCTION
    /// #1: NAME ----`, a description, numbered parameters), then the call layout.
    fn render(&self, tools: &[Value]) -> Rendered {
        Rendered {
            system_text: Some(render_docs(tools)),
            tools: None,
        }
    }

    fn parse(&self, output: &ModelOutput) -> Result<ParsedResponse, FormatError> {
        parse_text_reply(output, CallSyntax::Xml, self.pick, scan_blocks)
    }

    /// The thought, a blank line, and the call as R2E-Gym's `Action.to_xml_string` writes
    /// it (non-string values as JSON).
    fn render_call(&self, thought: &str, call: &ToolCall, _id: Option<&str>) -> AssistantMessage {
        AssistantMessage {
            content: join_thought(thought, "\n\n", &crate::xml::to_xml(call)),
            tool_calls: Vec::new(),
        }
    }

    /// A user message holding the observation.
    fn render_result(&self, observation: &str, _call_id: Option<&str>) -> ResultMessage {
        ResultMessage::user(observation)
    }
}

/// The tool documentation and call layout for the system prompt.
fn render_docs(tools: &[Value]) -> String {
    let mut docs = String::from("You have access to the following functions:\n\n");
    for (index, tool) in tools.iter().enumerate() {
        let function = tool.get("function").unwrap_or(tool);
        let number = index + 1;
        let name = function["name"].as_str().unwrap_or_default();
        if index > 0 {
            docs.push('\n');
        }
        docs.push_str(&format!("---- BEGIN FUNCTION #{number}: {name} ----\n"));
        let description = function["description"].as_str().unwrap_or_default().trim();
        let description = description
            .strip_prefix("Description:")
            .map_or(description, str::trim_start);
        docs.push_str(&format!("Description: {description}\n"));
        match function.get("parameters") {
            Some(parameters) => {
                docs.push_str("Parameters:\n");
                let required: Vec<&str> = parameters["required"]
                    .as_array()
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let properties = parameters["properties"].as_object().into_iter().flatten();
                for (position, (key, info)) in properties.enumerate() {
                    let kind = info["type"].as_str().unwrap_or("string");
                    let status = if required.contains(&key.as_str()) {
                        "required"
                    } else {
                        "optional"
                    };
                    let mut text = info["description"]
                        .as_str()
                        .unwrap_or("No description provided")
                        .to_owned();
                    if let Some(values) = info["enum"].as_array() {
                        let values: Vec<String> = values
                            .iter()
                            .map(|value| match value {
                                Value::String(value) => format!("`{value}`"),
                                other => format!("`{other}`"),
                            })
                            .collect();
                        text.push_str(&format!("\nAllowed values: [{}]", values.join(", ")));
                    }
                    docs.push_str(&format!(
                        "  ({}) {key} ({kind}, {status}): {text}\n",
                        position + 1
                    ));
                }
            }
            None => docs.push_str("No parameters are required for this function.\n"),
        }
        docs.push_str(&format!("---- END FUNCTION #{number} ----\n"));
    }
    docs.push_str(INSTRUCTIONS);
    docs
}

/// True for names made of ASCII letters, digits, `_`, `-` and `.`.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The `<function=…>` blocks after the reasoning, in order.
fn scan_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut position = call_region_start(text, |before| FUNCTION_TAG.is_match(before));
    let mut function_end = NextTag::new(FUNCTION_END);
    while let Some(tag) = FUNCTION_TAG.captures_at(text, position) {
        let whole = tag.get(0).expect("match");
        let close = function_end.find(text, whole.end());
        let block = scan_block(text, whole.start(), whole.end(), &tag[1], close);
        position = block.end;
        blocks.push(block);
    }
    blocks
}

/// Reads the block whose `<function=raw_name>` tag spans `start..body_start`, and whose
/// `</function>` is at `close`.
fn scan_block(
    text: &str,
    start: usize,
    body_start: usize,
    raw_name: &str,
    close: Option<usize>,
) -> Block {
    let name = py_strip(raw_name);
    let body_end = close.unwrap_or(text.len());
    let mut end = close.map_or(text.len(), |at| at + FUNCTION_END.len());

    let mut parameters: Vec<(&str, &str)> = Vec::new();
    let mut malformed_key: Option<&str> = None;
    let mut unclosed_key: Option<&str> = None;
    let mut stray: Option<&str> = None;
    let mut next_block = false;
    let mut position = body_start;
    loop {
        let rest = text[position..body_end].trim_start();
        position = body_end - rest.len();
        if rest.is_empty() {
            break;
        }
        if let Some(tag) = PARAMETER_TAG_HERE.captures(rest) {
            let key = py_strip(tag.get(1).expect("group").as_str());
            let tag_length = tag.get(0).expect("match").len();
            let value_start = position + tag_length;
            let Some(length) = text[value_start..body_end].find(PARAMETER_END) else {
                unclosed_key = Some(key);
                break;
            };
            if !is_plain_name(key) && malformed_key.is_none() {
                malformed_key = Some(&rest[..tag_length]);
            }
            parameters.push((key, py_strip(&text[value_start..value_start + length])));
            position = value_start + length + PARAMETER_END.len();
        } else if FUNCTION_TAG_HERE.is_match(rest) {
            next_block = true;
            end = position;
            break;
        } else if close.is_none() && is_cut_tail(rest, FUNCTION_END) {
            break;
        } else {
            // Stray text runs to the next tag.
            let first = rest.chars().next().map_or(1, char::len_utf8);
            let length = rest[first..].find('<').map_or(rest.len(), |at| at + first);
            stray.get_or_insert(&rest[..length]);
            position += length;
        }
    }

    let problem = if name.is_empty() {
        Some(FormatError::MissingName {
            syntax: CallSyntax::Xml,
        })
    } else if !is_plain_name(name) {
        Some(FormatError::MalformedTag {
            tag: shorten(&text[start..body_start], EXCERPT_CHARS),
        })
    } else if next_block {
        Some(FormatError::UnclosedBlock {
            syntax: CallSyntax::Xml,
            name: name.to_owned(),
        })
    } else if let Some(tag) = malformed_key {
        Some(FormatError::MalformedTag {
            tag: shorten(tag, EXCERPT_CHARS),
        })
    } else if let Some(key) = unclosed_key {
        Some(FormatError::UnclosedParameter {
            function: name.to_owned(),
            key: key.to_owned(),
        })
    } else if let Some(stray) = stray {
        Some(FormatError::StrayText {
            function: name.to_owned(),
            text: shorten(stray, EXCERPT_CHARS),
        })
    } else {
        duplicate_key(&parameters).map(|key| FormatError::DuplicateParameter {
            function: name.to_owned(),
            key: key.to_owned(),
        })
    };
    Block {
        start,
        end,
        name: name.to_owned(),
        parsed: match problem {
            Some(problem) => Err(problem),
            None => Ok(crate::xml::parse_xml(&text[start..end])),
        },
    }
}

/// The first parameter given twice with different values.
fn duplicate_key<'a>(parameters: &[(&'a str, &str)]) -> Option<&'a str> {
    let mut seen = HashMap::new();
    parameters.iter().find_map(|&(key, value)| {
        let first = *seen.entry(key).or_insert(value);
        (first != value).then_some(key)
    })
}
