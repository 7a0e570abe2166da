//! Reading one model reply: the SWE-AGILE structure when it is required, then the tool
//! call, into what the conversation keeps, what the trajectory records and what the model
//! is told.

use serde_json::json;
use swerve_core::ToolCall;
use swerve_core::trajectory::{ChatToolCall, FunctionCall, Message, Role};
use swerve_llm::ModelResponse;
use swerve_tools::formats::{
    FALLBACK_CALL_ID, FormatError, ModelOutput, NativeToolCall, ParsedResponse, ResultMessage,
    ToolFormat,
};

use crate::agile::{ErrorPolicy, ReasoningConfig, structure};

/// A reply, read.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The reasoning: the structure's, or the server's reasoning channel.
    pub reasoning: Option<String>,
    /// The digest, when the structure was read.
    pub digest: Option<String>,
    /// The assistant message the conversation keeps: the reasoning apart, the digest and
    /// the call (as the format writes it) as content.
    pub message: Message,
    /// The call, or why there is none.
    pub call: Result<ParsedResponse, Rejection>,
}

/// Why a reply has no call to run.
#[derive(Debug)]
pub(crate) struct Rejection {
    /// What is wrong, in the words the model is told.
    pub text: String,
    /// The message that tells the model.
    pub told: ResultMessage,
    /// When the episode ends instead of telling the model: the exit detail.
    pub ends_episode: Option<String>,
}

/// Reads `response` with `format`, requiring the structure when `config` says so.
pub(crate) fn read(
    format: &dyn ToolFormat,
    config: &ReasoningConfig,
    response: &ModelResponse,
) -> Reply {
    let tool_calls: Vec<NativeToolCall> = response.tool_calls.iter().map(native_call).collect();
    if !config.required {
        let reasoning = response.reasoning_content.clone();
        return read_call(
            format,
            reasoning,
            None,
            response.content.clone(),
            tool_calls,
        );
    }
    match structure::parse(
        &response.content,
        response.reasoning_content.as_deref(),
        |segment| has_call(format, segment),
    ) {
        Ok(structured) => read_call(
            format,
            Some(structured.reasoning),
            Some(structured.digest),
            structured.action,
            tool_calls,
        ),
        Err(malformed) => {
            // Keep at most the first native call, and answer it, so that every call id in
            // the conversation has its answer (as `NativeFormat::render_call` keeps one).
            let first_call: Vec<NativeToolCall> = tool_calls.into_iter().take(1).collect();
            let call_id = first_call.first().map(|call| {
                call.id
                    .clone()
                    .unwrap_or_else(|| FALLBACK_CALL_ID.to_owned())
            });
            let text = malformed.error.to_string();
            let ends_episode = (config.on_error.policy(&malformed.error) == ErrorPolicy::Terminate)
                .then(|| {
                    format!(
                        "{} (agent.reasoning.on_error.{} = \"terminate\"): {text}",
                        malformed.error.key(),
                        malformed.error.key()
                    )
                });
            let told = match &call_id {
                Some(id) => format.render_result(&text, Some(id)),
                None => ResultMessage::user(text.clone()),
            };
            Reply {
                message: assistant(malformed.rest, malformed.reasoning.clone(), first_call),
                reasoning: malformed.reasoning,
                digest: None,
                call: Err(Rejection {
                    told,
                    text,
                    ends_episode,
                }),
            }
        }
    }
}

/// Whether a tool call starts in `segment`, as `format` reads text.
pub(crate) fn has_call(format: &dyn ToolFormat, segment: &str) -> bool {
    !matches!(
        format.parse(&ModelOutput::from_text(segment)),
        Err(FormatError::NoCall { .. })
    )
}

/// Reads the call of `text` and `tool_calls` (the action, after any digest).
fn read_call(
    format: &dyn ToolFormat,
    reasoning: Option<String>,
    digest: Option<String>,
    text: String,
    tool_calls: Vec<NativeToolCall>,
) -> Reply {
    let with_digest = |content: String| match &digest {
        Some(digest) => structure::content(digest, &content),
        None => content,
    };
    let output = ModelOutput { text, tool_calls };
    match format.parse(&output) {
        Ok(parsed) => {
            let rendered =
                format.render_call(&parsed.thought, &parsed.call, parsed.call_id.as_deref());
            Reply {
                message: assistant(
                    with_digest(rendered.content),
                    reasoning.clone(),
                    rendered.tool_calls,
                ),
                reasoning,
                digest,
                call: Ok(parsed),
            }
        }
        Err(error) => Reply {
            message: assistant(
                with_digest(output.text),
                reasoning.clone(),
                output.tool_calls,
            ),
            reasoning,
            digest,
            call: Err(Rejection {
                text: error.to_string(),
                told: format.render_error(&error),
                ends_episode: None,
            }),
        },
    }
}

/// The reply a model would have written for `call` (the call as `format` writes it, no
/// thought) and that reply read: the call is `call` exactly as given, not the written text
/// parsed back, since parsing a text format normalizes values (XML strips them). Its call
/// text (what repeated calls are compared by) is what parsing the written reply records:
/// the written block for text formats, the call's JSON for native calls.
pub(crate) fn given(format: &dyn ToolFormat, call: ToolCall) -> (ModelResponse, Reply) {
    let written = format.render_call("", &call, None);
    let call_id = written.tool_calls.first().map(|native| {
        native
            .id
            .clone()
            .unwrap_or_else(|| FALLBACK_CALL_ID.to_owned())
    });
    let call_text = match call_id {
        Some(_) => json!({"name": call.name, "arguments": call.arguments}).to_string(),
        None => written.content.trim_end().to_owned(),
    };
    let mut response = ModelResponse::text(written.content.clone());
    let message = assistant(written.content, None, written.tool_calls);
    response.tool_calls = message.tool_calls.clone();
    let reply = Reply {
        reasoning: None,
        digest: None,
        message,
        call: Ok(ParsedResponse {
            thought: String::new(),
            call,
            call_text,
            call_id,
            note: None,
        }),
    };
    (response, reply)
}

fn native_call(call: &ChatToolCall) -> NativeToolCall {
    NativeToolCall {
        id: Some(call.id.clone()),
        name: call.function.name.clone(),
        arguments: call.function.arguments.clone(),
    }
}

/// An assistant message with `content`, `reasoning` apart, and native `tool_calls`.
fn assistant(
    content: String,
    reasoning: Option<String>,
    tool_calls: Vec<NativeToolCall>,
) -> Message {
    let mut message = Message::new(Role::Assistant, content);
    message.reasoning_content = reasoning;
    message.tool_calls = tool_calls
        .into_iter()
        .map(|call| ChatToolCall {
            id: call.id.unwrap_or_else(|| FALLBACK_CALL_ID.to_owned()),
            kind: "function".into(),
            function: FunctionCall {
                name: call.name,
                arguments: call.arguments,
            },
        })
        .collect();
    message
}
