//! Tool-call formats: how tools are described to a model, how its reply is read back into
//! one [`ToolCall`], and how calls and results are written into the conversation.
//!
//! Three formats implement [`ToolFormat`]:
//! - [`XmlFormat`]: `<function=NAME><parameter=KEY>VALUE</parameter>…</function>` in the
//!   reply text, as R2E-Gym ([`Pick::First`]) and SWE-AGILE ([`Pick::Last`]) read it;
//! - [`NativeFormat`]: OpenAI `tools` in the request, `tool_calls` in the reply, results
//!   as `role: tool` messages;
//! - [`HermesFormat`]: Hermes/Qwen `<tool_call>{"name": …, "arguments": {…}}</tool_call>`
//!   in the reply text, results wrapped in `<tool_response>…</tool_response>`;
//! - [`FencedFormat`]: SWE-agent's discussion and one command in a fenced code block.
//!
//! Parsing tolerates real model noise (prose around the call, code fences, CRLF line ends,
//! a closing tag cut off by a stop sequence, calls drafted inside `<think>…</think>`) but
//! never guesses: anything ambiguous or malformed is a [`FormatError`] whose text is the
//! observation the model sees next. [`FormatErrorBudget`] ends a run after too many format
//! errors in a row.

mod budget;
mod error;
mod fenced;
mod hermes;
mod json;
mod native;
mod scan;
mod xml;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use swerve_core::ToolCall;

pub use budget::FormatErrorBudget;
pub use error::{CallSyntax, FormatError};
pub use fenced::{FencedFormat, command_call};
pub use hermes::HermesFormat;
pub use native::{FALLBACK_CALL_ID, NativeFormat};
pub use scan::Pick;
pub use xml::XmlFormat;

/// The names [`from_name`] accepts, one per format: R2E-Gym XML (first block), SWE-AGILE
/// XML (last block), native OpenAI tool calls, Hermes/Qwen `<tool_call>` JSON, and
/// SWE-agent's fenced command.
pub const FORMAT_NAMES: [&str; 5] = ["xml", "xml_last", "native", "hermes", "fenced"];

/// The format called `name` (one of [`FORMAT_NAMES`]), or `None` for any other name.
pub fn from_name(name: &str) -> Option<Box<dyn ToolFormat>> {
    Some(match name {
        "xml" => Box::new(XmlFormat::new(Pick::First)),
        "xml_last" => Box::new(XmlFormat::new(Pick::Last)),
        "native" => Box::new(NativeFormat),
        "hermes" => Box::new(HermesFormat),
        "fenced" => Box::new(FencedFormat),
        _ => return None,
    })
}

/// One way of exchanging tool calls with a model.
pub trait ToolFormat: Send + Sync + std::fmt::Debug {
    /// The format's name, one of [`FORMAT_NAMES`].
    fn name(&self) -> &'static str;

    /// What describes `tools` (OpenAI function schemas, as [`crate::tool_specs`] gives
    /// them) to the model: documentation for the system prompt (text formats) or the
    /// request's `tools` (native).
    fn render(&self, tools: &[Value]) -> Rendered;

    /// Reads the one tool call of a reply, or says precisely what is wrong with it.
    fn parse(&self, output: &ModelOutput) -> Result<ParsedResponse, FormatError>;

    /// The assistant message holding `thought` and `call`, written the way this format
    /// expects (the reverse of [`ToolFormat::parse`]). `id` is the native call id.
    fn render_call(&self, thought: &str, call: &ToolCall, id: Option<&str>) -> AssistantMessage;

    /// The message that carries a tool's `observation` back to the model; `call_id` is
    /// [`ParsedResponse::call_id`].
    fn render_result(&self, observation: &str, call_id: Option<&str>) -> ResultMessage;

    /// The message that tells the model about a format error: a user message holding the
    /// error's text (there is no call to answer).
    fn render_error(&self, error: &FormatError) -> ResultMessage {
        ResultMessage::user(error.to_string())
    }
}

/// A tool call as an OpenAI-compatible server returns it in `message.tool_calls`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeToolCall {
    /// The call's id, answered by the `tool_call_id` of the result message.
    pub id: Option<String>,
    /// `function.name`.
    pub name: String,
    /// `function.arguments`: JSON text, unparsed.
    pub arguments: String,
}

impl NativeToolCall {
    /// Reads one entry of `message.tool_calls`
    /// (`{"id", "type": "function", "function": {"name", "arguments"}}`). Missing fields
    /// become empty, so that [`ToolFormat::parse`] can report them; `arguments` given as a
    /// JSON value rather than as text are serialized.
    pub fn from_openai(value: &Value) -> Self {
        let function = &value["function"];
        let arguments = match &function["arguments"] {
            Value::Null => String::new(),
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        Self {
            id: value["id"].as_str().map(str::to_owned),
            name: function["name"].as_str().unwrap_or_default().to_owned(),
            arguments,
        }
    }

    /// The entry of `message.tool_calls` for this call.
    pub fn to_openai(&self) -> Value {
        json!({
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        })
    }
}

/// One reply of the model, as the server returned it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelOutput {
    /// `message.content` (or the raw completion text); empty when there is none.
    pub text: String,
    /// `message.tool_calls`; only [`NativeFormat`] reads them.
    #[serde(default)]
    pub tool_calls: Vec<NativeToolCall>,
}

impl ModelOutput {
    /// A reply that is only text.
    pub fn from_text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }
}

/// A reply read by [`ToolFormat::parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedResponse {
    /// The text before the call, trimmed (for native calls: the whole text content). A
    /// code-fence line that opens right before the call is left out; text after a text
    /// call is dropped, as R2E-Gym and SWE-AGILE do.
    pub thought: String,
    /// The call.
    pub call: ToolCall,
    /// The call exactly as written (CRLF normalized), for repeat detection. Native calls
    /// have no text, so this is `{"name": …, "arguments": {…}}` as compact JSON.
    pub call_text: String,
    /// The native call id, to answer in the result message.
    pub call_id: Option<String>,
    /// Something the model should be told with the observation, though the call was run:
    /// for native replies with several calls, that only the first one was.
    pub note: Option<String>,
}

/// How a format describes the tools: one of the two fields is set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    /// Tool documentation to append to the system prompt, after a blank line (text
    /// formats).
    pub system_text: Option<String>,
    /// The request's `tools` (native format).
    pub tools: Option<Vec<Value>>,
}

/// An assistant message: text, plus native tool calls for [`NativeFormat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantMessage {
    /// The message text; for text formats it holds the call.
    pub content: String,
    /// Native tool calls; empty for text formats.
    pub tool_calls: Vec<NativeToolCall>,
}

impl AssistantMessage {
    /// The message in OpenAI chat form. `content` is `null` when it is empty and there are
    /// tool calls.
    pub fn to_openai(&self) -> Value {
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.tool_calls.is_empty() {
            if self.content.is_empty() {
                message["content"] = Value::Null;
            }
            message["tool_calls"] = self
                .tool_calls
                .iter()
                .map(NativeToolCall::to_openai)
                .collect();
        }
        message
    }
}

/// Who speaks a [`ResultMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultRole {
    /// `role: user`.
    User,
    /// `role: tool`, answering a native call.
    Tool,
}

impl ResultRole {
    /// `"user"` or `"tool"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Tool => "tool",
        }
    }
}

/// The message that brings an observation (or a format error) back to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultMessage {
    /// `user`, or `tool` for the answer to a native call.
    pub role: ResultRole,
    /// The message text.
    pub content: String,
    /// The id of the native call answered (only with [`ResultRole::Tool`]).
    pub tool_call_id: Option<String>,
}

impl ResultMessage {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: ResultRole::User,
            content: content.into(),
            tool_call_id: None,
        }
    }

    /// The message in OpenAI chat form.
    pub fn to_openai(&self) -> Value {
        let mut message = json!({"role": self.role.as_str(), "content": self.content});
        if let Some(id) = &self.tool_call_id {
            message["tool_call_id"] = Value::String(id.clone());
        }
        message
    }
}
