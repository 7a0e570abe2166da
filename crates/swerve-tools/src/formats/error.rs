//! [`FormatError`]: why a reply holds no usable tool call. Its `Display` text is exactly
//! the observation the model sees next, so each message names what was wrong and how to
//! write the call instead.

use std::fmt;

use crate::observation::CONTINUE_MSG;

/// How the calls of a format are written, to phrase its error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallSyntax {
    /// `<function=NAME><parameter=KEY>VALUE</parameter></function>`.
    Xml,
    /// `<tool_call>{"name": …, "arguments": {…}}</tool_call>`.
    Hermes,
    /// OpenAI `tool_calls`.
    Native,
    /// SWE-agent's discussion and one command in a fenced code block.
    Fenced,
}

/// SWE-agent's format-error text (its `format_error_template`), for every fenced error.
const FENCED_ERROR: &str = "Your output was not formatted correctly. You must always include one discussion and one command as part of your response. Make sure you do not have multiple discussion/command tags.
Please make sure your output precisely matches the following format:
DISCUSSION
Discuss here with yourself about what your planning and what you're going to do in this step.

```
command(s) that you're going to run
```";

/// The Hermes call layout, as Qwen's tool prompt shows it.
pub(super) const HERMES_LAYOUT: &str =
    "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>";

/// How many tool names [`FormatError::MultipleCalls`] lists before `…`.
const MAX_NAMES_SHOWN: usize = 5;

/// Why a reply holds no usable tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// No call at all. XML and native replies get R2E-Gym's [`CONTINUE_MSG`], which
    /// R2E-Gym-trained models know; Hermes replies get the Hermes layout.
    NoCall {
        /// The format's call syntax.
        syntax: CallSyntax,
    },
    /// Several calls that differ (identical repeats count as one call).
    MultipleCalls {
        /// The format's call syntax.
        syntax: CallSyntax,
        /// The tool names of the calls, in order, as written (empty when unreadable,
        /// shown as `unnamed`); the message lists the first five.
        names: Vec<String>,
    },
    /// A call block that is not closed before the next one opens.
    UnclosedBlock {
        /// The format's call syntax.
        syntax: CallSyntax,
        /// The tool name of the unclosed XML block (empty for Hermes).
        name: String,
    },
    /// A call without a tool name.
    MissingName {
        /// The format's call syntax.
        syntax: CallSyntax,
    },
    /// An XML `<function=…>` or `<parameter=…>` tag whose name is not a plain name
    /// (letters, digits, `_`, `-`, `.`), e.g. because its `>` is missing.
    MalformedTag {
        /// The tag as written (shortened).
        tag: String,
    },
    /// An XML `<parameter=KEY>` without its `</parameter>`.
    UnclosedParameter {
        /// The tool name.
        function: String,
        /// The parameter name.
        key: String,
    },
    /// Text inside an XML `<function=…>` block but outside its parameters.
    StrayText {
        /// The tool name.
        function: String,
        /// The first stray text (shortened).
        text: String,
    },
    /// An XML parameter given twice with different values.
    DuplicateParameter {
        /// The tool name.
        function: String,
        /// The parameter name.
        key: String,
    },
    /// A Hermes `<tool_call>` block that does not hold one JSON object.
    InvalidJson {
        /// What is wrong, e.g. serde_json's message with line and column.
        detail: String,
    },
    /// Hermes or native arguments that are not a JSON object.
    BadArguments {
        /// The format's call syntax.
        syntax: CallSyntax,
        /// The tool name.
        function: String,
        /// What they are instead, phrased to follow "but": e.g. `they are a JSON array`.
        detail: String,
    },
}

impl std::error::Error for FormatError {}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoCall {
                syntax: CallSyntax::Fenced,
            }
            | Self::MissingName {
                syntax: CallSyntax::Fenced,
            }
            | Self::UnclosedBlock {
                syntax: CallSyntax::Fenced,
                ..
            } => f.write_str(FENCED_ERROR),
            Self::MultipleCalls {
                syntax: CallSyntax::Fenced,
                names,
            } => write!(
                f,
                "Your response contains {} commands in separate code blocks, but only a *SINGLE* command per response is allowed.\n{FENCED_ERROR}",
                names.len()
            ),
            Self::NoCall {
                syntax: CallSyntax::Hermes,
            } => write!(
                f,
                "Your response contains no tool call. Call exactly one tool in each response, written as:\n{HERMES_LAYOUT}"
            ),
            Self::NoCall { .. } => f.write_str(CONTINUE_MSG),
            Self::MultipleCalls { syntax, names } => {
                let (kind, block) = match syntax {
                    CallSyntax::Hermes => ("tool", "<tool_call>…</tool_call>"),
                    _ => ("function", "<function=NAME>…</function>"),
                };
                let mut shown: Vec<&str> = names
                    .iter()
                    .take(MAX_NAMES_SHOWN)
                    .map(|name| if name.is_empty() { "unnamed" } else { name })
                    .collect();
                if names.len() > MAX_NAMES_SHOWN {
                    shown.push("…");
                }
                write!(
                    f,
                    "Your response contains {} different {kind} calls ({}), but only one call per response is allowed. Reply again with exactly one {block} block.",
                    names.len(),
                    shown.join(", ")
                )
            }
            Self::UnclosedBlock {
                syntax: CallSyntax::Hermes,
                ..
            } => f.write_str(
                "Your <tool_call> block is not closed: a new <tool_call> starts before its </tool_call>. Reply again with exactly one complete <tool_call>…</tool_call> block.",
            ),
            Self::UnclosedBlock { name, .. } => write!(
                f,
                "Your <function={name}> block is not closed: a new <function=…> tag starts before its </function>. Reply again with exactly one complete <function=NAME>…</function> block."
            ),
            Self::MissingName {
                syntax: CallSyntax::Xml,
            } => f.write_str(
                "Your <function=…> tag has no tool name. Write <function=NAME>, where NAME is the tool to call.",
            ),
            Self::MissingName {
                syntax: CallSyntax::Hermes,
            } => write!(
                f,
                "The JSON object in your <tool_call> block has no \"name\" string. Write the call as:\n{HERMES_LAYOUT}"
            ),
            Self::MissingName {
                syntax: CallSyntax::Native,
            } => f.write_str(
                "Your tool call has no function name. Call exactly one tool, by its name.",
            ),
            Self::MalformedTag { tag } => write!(
                f,
                "Your tag \"{tag}\" is malformed: write <function=NAME> and <parameter=KEY>, where NAME and KEY use only letters, digits, '_', '-' and '.', and close each tag with '>'."
            ),
            Self::UnclosedParameter { function, key } => write!(
                f,
                "In your <function={function}> call, <parameter={key}> has no closing </parameter> tag. Write every argument as <parameter=KEY>VALUE</parameter> inside the <function=…>…</function> block."
            ),
            Self::StrayText { function, text } => write!(
                f,
                "Your <function={function}> call contains text outside <parameter=…> tags: \"{text}\". Inside <function=…>…</function>, write only <parameter=KEY>VALUE</parameter> tags."
            ),
            Self::DuplicateParameter { function, key } => write!(
                f,
                "Your <function={function}> call gives <parameter={key}> more than once, with different values. Give each parameter once."
            ),
            Self::InvalidJson { detail } => write!(
                f,
                "The content of your <tool_call> block is not a valid JSON object: {detail}. Write exactly one JSON object per block:\n{HERMES_LAYOUT}"
            ),
            Self::BadArguments {
                syntax: CallSyntax::Hermes,
                function,
                detail,
            } => write!(
                f,
                "The \"arguments\" of your {function} call must be a JSON object of parameter names and values, but {detail}."
            ),
            Self::BadArguments {
                function, detail, ..
            } => write!(
                f,
                "The arguments of your {function} tool call must be a JSON object of parameter names and values, but {detail}."
            ),
        }
    }
}
