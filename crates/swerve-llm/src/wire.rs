//! The OpenAI-compatible wire format: request bodies for `/chat/completions`
//! and `/completions` (with the neutral sampling values of the filters nothing
//! sets, where the endpoint takes them), and a response parser that accepts
//! vLLM's extra fields (`prompt_token_ids`, `token_ids`, `reasoning_content` /
//! `reasoning`) and turns any body it cannot use into a [`ModelError`], never a
//! panic.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};
use swerve_core::trajectory::ChatToolCall;

use crate::config::ApiMode;
use crate::error::ModelError;
use crate::request::{ModelInput, ModelRequest, Sampling, neutral_sampling};
use swerve_core::trajectory::Usage;

/// The path appended to the base URL for `mode`.
pub(crate) fn endpoint(mode: ApiMode) -> &'static str {
    match mode {
        ApiMode::Chat => "chat/completions",
        ApiMode::Completions => "completions",
    }
}

/// A request body, encoded, and the neutral sampling values it was given.
pub(crate) struct Encoded {
    /// The JSON body.
    pub bytes: Vec<u8>,
    /// The keys of [`neutral_sampling`] it carries because nothing else set them.
    pub neutral: Vec<&'static str>,
}

/// The JSON body for `request`, encoded: model and input, sampling (the request's values
/// over `defaults`), then, when `takes_neutral` (the endpoint accepts them) and the sampling's
/// `neutral` is not `false`, the [`neutral_sampling`] values of the keys that neither the
/// sampling nor `extra_body` sets, then `extra_body`, then the token-capture flags, a later
/// key replacing an earlier one in place. The conversation is serialized straight from the
/// request, not copied into a JSON tree first: it is most of the body and grows with every
/// step.
pub(crate) fn request_body(
    model: &str,
    request: &ModelRequest,
    defaults: &Sampling,
    extra_body: &Map<String, Value>,
    takes_neutral: bool,
) -> Result<Encoded, serde_json::Error> {
    let sampling = request.sampling.or(defaults);
    let mut settings = match serde_json::to_value(&sampling)? {
        Value::Object(sampling) => sampling,
        _ => Map::new(),
    };
    // swerve's own switch, not a server field.
    settings.remove("neutral");
    let mut neutral = Vec::new();
    if takes_neutral && sampling.neutral != Some(false) {
        for (key, value) in neutral_sampling() {
            if !settings.contains_key(key) && !extra_body.contains_key(key) {
                settings.insert(key.into(), value);
                neutral.push(key);
            }
        }
    }
    settings.extend(extra_body.clone());
    if request.capture_tokens {
        // Chat takes a boolean; completions takes the number of top
        // alternatives per token (1 is the smallest every server accepts).
        let logprobs = match request.input {
            ModelInput::Chat { .. } => json!(true),
            ModelInput::Prompt(_) => json!(1),
        };
        settings.insert("logprobs".into(), logprobs);
        settings.insert("return_token_ids".into(), json!(true));
    }
    let bytes = serde_json::to_vec(&Body {
        model,
        input: &request.input,
        settings,
    })?;
    Ok(Encoded { bytes, neutral })
}

/// A request body: the leading fields borrowed from the request, then the settings.
struct Body<'a> {
    model: &'a str,
    input: &'a ModelInput,
    settings: Map<String, Value>,
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut leading = vec!["model"];
        self.entry(&mut map, "model", self.model)?;
        match self.input {
            ModelInput::Chat { messages, tools } => {
                leading.push("messages");
                self.entry(&mut map, "messages", messages)?;
                if !tools.is_empty() {
                    leading.push("tools");
                    self.entry(&mut map, "tools", tools)?;
                }
            }
            ModelInput::Prompt(prompt) => {
                leading.push("prompt");
                self.entry(&mut map, "prompt", prompt)?;
            }
        }
        for (key, value) in &self.settings {
            if !leading.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl Body<'_> {
    /// Writes `key` with `value`, or with the settings' value for it when they set one.
    fn entry<M: SerializeMap, T: Serialize + ?Sized>(
        &self,
        map: &mut M,
        key: &str,
        value: &T,
    ) -> Result<(), M::Error> {
        match self.settings.get(key) {
            Some(replacement) => map.serialize_entry(key, replacement),
            None => map.serialize_entry(key, value),
        }
    }
}

/// The useful part of a successful response.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub content: String,
    pub reasoning_content: Option<String>,
    pub tool_calls: Vec<ChatToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Usage,
    pub prompt_token_ids: Option<Vec<u32>>,
    pub completion_token_ids: Option<Vec<u32>>,
    pub logprobs: Option<Vec<f64>>,
}

/// Parses a 2xx response body. With `capture`, prompt and completion token
/// ids and one logprob per completion token must all be present.
pub(crate) fn parse_response(
    body: &[u8],
    mode: ApiMode,
    capture: bool,
) -> Result<Parsed, ModelError> {
    let root: Value = serde_json::from_slice(body).map_err(|error| {
        ModelError::malformed(format!(
            "body is not JSON ({error}); it starts with {}",
            snippet(body)
        ))
    })?;
    let Some(root) = root.as_object() else {
        return Err(ModelError::malformed(format!(
            "body is not a JSON object; it starts with {}",
            snippet(body)
        )));
    };
    if let (None, Some(error)) = (root.get("choices"), root.get("error")) {
        let text = error.to_string();
        return Err(if is_context_length_message(&text) {
            ModelError::ContextLength { detail: text }
        } else {
            ModelError::malformed(format!("body carries an error instead of choices: {text}"))
        });
    }
    let choice = root
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .and_then(Value::as_object)
        .ok_or_else(|| ModelError::malformed("missing `choices[0]`"))?;

    let mut parsed = Parsed {
        finish_reason: optional_string(choice.get("finish_reason"), "choices[0].finish_reason")?,
        usage: parse_usage(root.get("usage"))?,
        ..Parsed::default()
    };
    match mode {
        ApiMode::Chat => {
            let message = choice
                .get("message")
                .and_then(Value::as_object)
                .ok_or_else(|| ModelError::malformed("missing `choices[0].message`"))?;
            parsed.content = optional_string(message.get("content"), "choices[0].message.content")?
                .unwrap_or_default();
            parsed.reasoning_content = match optional_string(
                message.get("reasoning_content"),
                "choices[0].message.reasoning_content",
            )? {
                Some(reasoning) => Some(reasoning),
                None => optional_string(message.get("reasoning"), "choices[0].message.reasoning")?,
            };
            parsed.tool_calls = match message.get("tool_calls") {
                None | Some(Value::Null) => Vec::new(),
                Some(calls) => parse_tool_calls(calls)?,
            };
        }
        ApiMode::Completions => {
            parsed.content = optional_string(choice.get("text"), "choices[0].text")?
                .ok_or_else(|| ModelError::malformed("missing `choices[0].text`"))?;
        }
    }
    if capture {
        capture_tokens(root, choice, mode, &mut parsed)?;
    }
    Ok(parsed)
}

/// Native tool calls as the model produced them. The arguments stay the raw
/// string the model wrote (it may not even be valid JSON); a server that sends
/// them as a JSON object instead is accepted, the object kept as its JSON text,
/// and `null` arguments read as `""`.
fn parse_tool_calls(calls: &Value) -> Result<Vec<ChatToolCall>, ModelError> {
    let mut calls = calls.clone();
    if let Some(list) = calls.as_array_mut() {
        let arguments = list
            .iter_mut()
            .filter_map(|call| call.get_mut("function")?.get_mut("arguments"));
        for arguments in arguments {
            match arguments {
                Value::String(_) => {}
                Value::Null => *arguments = Value::from(""),
                other => *other = Value::from(other.to_string()),
            }
        }
    }
    serde_json::from_value(calls)
        .map_err(|error| ModelError::malformed(format!("`choices[0].message.tool_calls`: {error}")))
}

fn capture_tokens(
    root: &Map<String, Value>,
    choice: &Map<String, Value>,
    mode: ApiMode,
    parsed: &mut Parsed,
) -> Result<(), ModelError> {
    let missing = |field: &str| {
        ModelError::malformed(format!(
            "token capture was requested but `{field}` is missing; the server must support \
             vLLM's `return_token_ids` and `logprobs`"
        ))
    };
    let prompt_ids = match (root.get("prompt_token_ids"), choice.get("prompt_token_ids")) {
        (Some(ids), _) if !ids.is_null() => token_ids(ids, "prompt_token_ids")?,
        (_, Some(ids)) if !ids.is_null() => token_ids(ids, "choices[0].prompt_token_ids")?,
        _ => return Err(missing("prompt_token_ids")),
    };
    let completion_ids = match choice.get("token_ids") {
        Some(ids) if !ids.is_null() => token_ids(ids, "choices[0].token_ids")?,
        _ => return Err(missing("choices[0].token_ids")),
    };
    let (items, field) = match mode {
        ApiMode::Chat => (
            choice.get("logprobs").and_then(|l| l.get("content")),
            "choices[0].logprobs.content",
        ),
        ApiMode::Completions => (
            choice.get("logprobs").and_then(|l| l.get("token_logprobs")),
            "choices[0].logprobs.token_logprobs",
        ),
    };
    let items = items
        .and_then(Value::as_array)
        .ok_or_else(|| missing(field))?;
    let logprobs = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let value = match mode {
                ApiMode::Chat => item.get("logprob"),
                ApiMode::Completions => Some(item),
            };
            value.and_then(Value::as_f64).ok_or_else(|| {
                ModelError::malformed(format!("`{field}[{index}]` has no numeric logprob"))
            })
        })
        .collect::<Result<Vec<f64>, _>>()?;
    if logprobs.len() != completion_ids.len() {
        return Err(ModelError::malformed(format!(
            "`{field}` has {} entries but `choices[0].token_ids` has {}",
            logprobs.len(),
            completion_ids.len()
        )));
    }
    parsed.prompt_token_ids = Some(prompt_ids);
    parsed.completion_token_ids = Some(completion_ids);
    parsed.logprobs = Some(logprobs);
    Ok(())
}

fn token_ids(value: &Value, field: &str) -> Result<Vec<u32>, ModelError> {
    let bad = || ModelError::malformed(format!("`{field}` is not a list of token ids"));
    value
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|id| {
            id.as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(bad)
        })
        .collect()
}

pub(crate) fn parse_usage(usage: Option<&Value>) -> Result<Usage, ModelError> {
    let Some(usage) = usage.filter(|usage| !usage.is_null()) else {
        return Ok(Usage::default());
    };
    let Some(usage) = usage.as_object() else {
        return Err(ModelError::malformed("`usage` is not an object"));
    };
    let count = |value: Option<&Value>, field: &str| match value {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value
            .as_u64()
            .ok_or_else(|| ModelError::malformed(format!("`{field}` is not a token count"))),
    };
    Ok(Usage {
        prompt_tokens: count(usage.get("prompt_tokens"), "usage.prompt_tokens")?,
        completion_tokens: count(usage.get("completion_tokens"), "usage.completion_tokens")?,
        cached_tokens: count(
            usage
                .get("prompt_tokens_details")
                .and_then(|d| d.get("cached_tokens")),
            "usage.prompt_tokens_details.cached_tokens",
        )?,
        reasoning_tokens: count(
            usage
                .get("completion_tokens_details")
                .and_then(|d| d.get("reasoning_tokens")),
            "usage.completion_tokens_details.reasoning_tokens",
        )?,
    })
}

fn optional_string(value: Option<&Value>, field: &str) -> Result<Option<String>, ModelError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(ModelError::malformed(format!("`{field}` is not a string"))),
    }
}

/// Whether an error message says the prompt does not fit the context window
/// (vLLM: "maximum context length", OpenAI: `context_length_exceeded`).
pub(crate) fn is_context_length_message(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "context window",
        "prompt is too long",
        "input is too long",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// The start of a body, for error messages: at most 200 characters.
pub(crate) fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use swerve_core::trajectory::{Content, Message};

    fn parse(value: Value, mode: ApiMode, capture: bool) -> Result<Parsed, ModelError> {
        parse_response(value.to_string().as_bytes(), mode, capture)
    }

    #[test]
    fn chat_body_has_sampling_extra_and_capture_flags() {
        let request = ModelRequest::chat(vec![Message::user("hi")])
            .with_tools(vec![json!({"type": "function"})])
            .with_sampling(Sampling {
                temperature: Some(0.0),
                ..Sampling::default()
            })
            .capturing_tokens();
        let defaults = Sampling {
            temperature: Some(1.0),
            max_tokens: Some(64),
            ..Sampling::default()
        };
        let mut extra = Map::new();
        extra.insert("top_k".into(), json!(20));
        extra.insert("max_tokens".into(), json!(32));
        let encoded = request_body("m", &request, &defaults, &extra, true).unwrap();
        let body: Value = serde_json::from_slice(&encoded.bytes).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function"}],
                "temperature": 0.0,
                "max_tokens": 32,
                "top_p": 1.0,
                "min_p": 0.0,
                "repetition_penalty": 1.0,
                "top_k": 20,
                "logprobs": true,
                "return_token_ids": true,
            })
        );
        assert_eq!(encoded.neutral, ["top_p", "min_p", "repetition_penalty"]);
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys[..3], ["model", "messages", "tools"]);
    }

    /// The exact bytes sent for a conversation with every message feature:
    /// `null` content, reasoning, raw tool-call arguments, tool results, a
    /// participant name and OpenAI content parts.
    #[test]
    fn chat_messages_serialize_byte_for_byte() {
        let assistant = Message {
            content: None,
            reasoning_content: Some("think \"hard\"\n".into()),
            tool_calls: vec![
                ChatToolCall::new("call_1", "bash", "{\"command\": \"ls -la\"}"),
                ChatToolCall::new("call_2", "finish", "not json"),
            ],
            name: Some("agent".into()),
            ..Message::assistant("")
        };
        let parts = Message {
            content: Some(Content::Parts(vec![
                json!({"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}),
                json!({"type": "image_url", "image_url": {"url": "data:,"}}),
            ])),
            ..Message::user("")
        };
        let request = ModelRequest::chat(vec![
            Message::system("You are helpful. é ✓ \u{1}"),
            Message::user("Fix </tag> & 'quote'"),
            assistant,
            Message::tool("call_1", "total 0\n"),
            Message::tool("call_2", ""),
            parts,
            Message::assistant("done"),
        ])
        .with_tools(vec![
            json!({"type": "function", "function": {"name": "bash"}}),
        ])
        .capturing_tokens();
        let body = request_body("m", &request, &Sampling::default(), &Map::new(), false).unwrap();
        assert_eq!(
            String::from_utf8(body.bytes).unwrap(),
            concat!(
                r#"{"model":"m","messages":["#,
                r#"{"role":"system","content":"You are helpful. é ✓ \u0001"},"#,
                r#"{"role":"user","content":"Fix </tag> & 'quote'"},"#,
                r#"{"role":"assistant","content":null,"reasoning_content":"think \"hard\"\n","#,
                r#""tool_calls":[{"id":"call_1","type":"function","#,
                r#""function":{"name":"bash","arguments":"{\"command\": \"ls -la\"}"}},"#,
                r#"{"id":"call_2","type":"function","function":{"name":"finish","arguments":"not json"}}],"#,
                r#""name":"agent"},"#,
                r#"{"role":"tool","content":"total 0\n","tool_call_id":"call_1"},"#,
                r#"{"role":"tool","content":"","tool_call_id":"call_2"},"#,
                r#"{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},"#,
                r#"{"type":"image_url","image_url":{"url":"data:,"}}]},"#,
                r#"{"role":"assistant","content":"done"}],"#,
                r#""tools":[{"type":"function","function":{"name":"bash"}}],"#,
                r#""logprobs":true,"return_token_ids":true}"#,
            )
        );
    }

    #[test]
    fn extra_body_replaces_a_leading_field_in_place() {
        let request = ModelRequest::chat(vec![Message::user("hi")]);
        let mut extra = Map::new();
        extra.insert("model".into(), json!("served-name"));
        extra.insert("seed".into(), json!(7));
        let body = request_body("m", &request, &Sampling::default(), &extra, false).unwrap();
        assert_eq!(
            String::from_utf8(body.bytes).unwrap(),
            r#"{"model":"served-name","messages":[{"role":"user","content":"hi"}],"seed":7}"#
        );
    }

    /// The neutral values fill exactly the filters nothing set: a sampling field or an
    /// `extra_body` key wins, `neutral = false` (configured or per request) sends none, and
    /// neither does an endpoint that does not take them. `neutral` itself is never sent.
    #[test]
    fn neutral_values_fill_only_the_filters_nothing_set() {
        let body =
            |request: &ModelRequest, defaults: &Sampling, extra: &Map<String, Value>, takes| {
                let encoded = request_body("m", request, defaults, extra, takes).unwrap();
                let body: Value = serde_json::from_slice(&encoded.bytes).unwrap();
                (body, encoded.neutral)
            };
        let chat = ModelRequest::chat(vec![Message::user("hi")]);
        let (all, filled) = body(&chat, &Sampling::default(), &Map::new(), true);
        assert_eq!(
            all,
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                   "top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0})
        );
        assert_eq!(filled, ["top_p", "top_k", "min_p", "repetition_penalty"]);

        let defaults = Sampling {
            top_p: Some(0.95),
            neutral: Some(true),
            ..Sampling::default()
        };
        let mut extra = Map::new();
        extra.insert("repetition_penalty".into(), json!(1.15));
        let (own, filled) = body(&chat, &defaults, &extra, true);
        assert_eq!(
            (
                &own["top_p"],
                &own["repetition_penalty"],
                &own["top_k"],
                &own["min_p"]
            ),
            (&json!(0.95), &json!(1.15), &json!(-1), &json!(0.0))
        );
        assert_eq!(own.get("neutral"), None);
        assert_eq!(filled, ["top_k", "min_p"]);

        let off = chat.clone().with_sampling(Sampling {
            neutral: Some(false),
            ..Sampling::default()
        });
        let (plain, filled) = body(&off, &defaults, &Map::new(), true);
        assert_eq!(
            plain,
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "top_p": 0.95})
        );
        assert!(filled.is_empty());
        let prompt = ModelRequest::prompt("p");
        let (hosted, filled) = body(&prompt, &Sampling::default(), &Map::new(), false);
        assert_eq!(hosted, json!({"model": "m", "prompt": "p"}));
        assert!(filled.is_empty());
    }

    #[test]
    fn completions_body_uses_prompt_and_integer_logprobs() {
        let request = ModelRequest::prompt("<|im_start|>user").capturing_tokens();
        let body: Value = serde_json::from_slice(
            &request_body("m", &request, &Sampling::default(), &Map::new(), false)
                .unwrap()
                .bytes,
        )
        .unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "prompt": "<|im_start|>user", "logprobs": 1, "return_token_ids": true})
        );
    }

    #[test]
    fn parses_vllm_chat_with_tokens_reasoning_and_tools() {
        let parsed = parse(
            json!({
                "id": "x", "object": "chat.completion",
                "prompt_token_ids": [1, 2, 3],
                "choices": [{
                    "index": 0,
                    "message": {
                        "role": "assistant", "content": null, "reasoning": "think",
                        "tool_calls": [{"id": "c1", "type": "function",
                                        "function": {"name": "finish", "arguments": "{}"}}]
                    },
                    "logprobs": {"content": [{"token": "a", "logprob": -0.5}, {"token": "b", "logprob": 0.0}]},
                    "finish_reason": "tool_calls",
                    "token_ids": [7, 8]
                }],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5,
                          "prompt_tokens_details": {"cached_tokens": 2},
                          "completion_tokens_details": null}
            }),
            ApiMode::Chat,
            true,
        )
        .unwrap();
        assert_eq!(parsed.content, "");
        assert_eq!(parsed.reasoning_content.as_deref(), Some("think"));
        assert_eq!(
            parsed.tool_calls,
            vec![ChatToolCall::new("c1", "finish", "{}")]
        );
        assert_eq!(parsed.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            parsed.usage,
            Usage {
                prompt_tokens: 3,
                completion_tokens: 2,
                cached_tokens: 2,
                reasoning_tokens: 0
            }
        );
        assert_eq!(parsed.prompt_token_ids, Some(vec![1, 2, 3]));
        assert_eq!(parsed.completion_token_ids, Some(vec![7, 8]));
        assert_eq!(parsed.logprobs, Some(vec![-0.5, 0.0]));
    }

    #[test]
    fn parses_vllm_completions_tokens_from_the_choice() {
        let parsed = parse(
            json!({"choices": [{"text": "hi", "finish_reason": "length",
                                "prompt_token_ids": [4], "token_ids": [5],
                                "logprobs": {"tokens": ["hi"], "token_logprobs": [-1.25]}}]}),
            ApiMode::Completions,
            true,
        )
        .unwrap();
        assert_eq!(parsed.content, "hi");
        assert_eq!(parsed.prompt_token_ids, Some(vec![4]));
        assert_eq!(parsed.logprobs, Some(vec![-1.25]));
        assert_eq!(parsed.usage, Usage::default());
    }

    #[test]
    fn tool_call_arguments_that_are_not_strings_are_kept_as_text() {
        let parsed = parse(
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"id": "c1", "function": {"name": "search", "arguments": {"term": "x"}}},
                {"id": "c2", "type": "function", "function": {"name": "finish", "arguments": null}},
                {"id": "c3", "function": {"name": "noop"}}
            ]}}]}),
            ApiMode::Chat,
            false,
        )
        .unwrap();
        assert_eq!(
            parsed.tool_calls,
            vec![
                ChatToolCall::new("c1", "search", r#"{"term":"x"}"#),
                ChatToolCall::new("c2", "finish", ""),
                ChatToolCall::new("c3", "noop", ""),
            ]
        );
        let error = parse(
            json!({"choices": [{"message": {"tool_calls": [{"id": "c1"}]}}]}),
            ApiMode::Chat,
            false,
        )
        .unwrap_err();
        assert!(error.to_string().contains("tool_calls"), "{error}");
    }

    #[test]
    fn token_fields_are_ignored_unless_asked_and_required_when_asked() {
        let body = json!({"choices": [{"message": {"content": "x"}}]});
        assert_eq!(
            parse(body.clone(), ApiMode::Chat, false)
                .unwrap()
                .completion_token_ids,
            None
        );
        let error = parse(body, ApiMode::Chat, true).unwrap_err();
        assert!(error.to_string().contains("prompt_token_ids"), "{error}");

        let mismatch = json!({"prompt_token_ids": [1], "choices": [{
            "message": {"content": "x"}, "token_ids": [1, 2],
            "logprobs": {"content": [{"logprob": -1.0}]}}]});
        let error = parse(mismatch, ApiMode::Chat, true).unwrap_err();
        assert!(error.to_string().contains("1 entries"), "{error}");
    }

    #[test]
    fn malformed_bodies_name_what_is_wrong() {
        let cases = [
            (json!([]), "not a JSON object"),
            (json!({"choices": []}), "choices[0]"),
            (json!({"choices": [{"text": "x"}]}), "choices[0].message"),
            (
                json!({"choices": [{"message": {"content": 3}}]}),
                "message.content",
            ),
            (
                json!({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}}),
                "usage.prompt_tokens",
            ),
            (json!({"error": {"message": "boom"}}), "boom"),
        ];
        for (body, needle) in cases {
            let error = parse(body, ApiMode::Chat, false).unwrap_err();
            assert!(
                matches!(error, ModelError::MalformedResponse { .. }),
                "{error}"
            );
            assert!(error.to_string().contains(needle), "{error} lacks {needle}");
        }
        let error = parse_response(b"{\"choices\": [", ApiMode::Chat, false).unwrap_err();
        assert!(error.to_string().contains("not JSON"), "{error}");
    }

    #[test]
    fn error_object_about_context_length_is_classified() {
        let body =
            json!({"error": {"message": "This model's maximum context length is 4096 tokens."}});
        assert!(matches!(
            parse(body, ApiMode::Chat, false),
            Err(ModelError::ContextLength { .. })
        ));
    }

    #[test]
    fn snippet_is_bounded_and_char_safe() {
        let long = "é".repeat(500);
        let cut = snippet(long.as_bytes());
        assert!(cut.chars().count() < 210);
        assert!(cut.ends_with("…\""));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(body in proptest::collection::vec(any::<u8>(), 0..512),
                                       capture in any::<bool>()) {
            let _ = parse_response(&body, ApiMode::Chat, capture);
            let _ = parse_response(&body, ApiMode::Completions, capture);
        }

        #[test]
        fn arbitrary_json_never_panics(body in arbitrary_json(), capture in any::<bool>()) {
            let bytes = body.to_string().into_bytes();
            let _ = parse_response(&bytes, ApiMode::Chat, capture);
            let _ = parse_response(&bytes, ApiMode::Completions, capture);
        }
    }

    /// JSON values biased towards the keys the parser looks at, so the
    /// property reaches deep into the response shape.
    fn arbitrary_json() -> impl Strategy<Value = Value> {
        let key = prop_oneof![
            Just("choices".to_owned()),
            Just("message".to_owned()),
            Just("content".to_owned()),
            Just("text".to_owned()),
            Just("tool_calls".to_owned()),
            Just("usage".to_owned()),
            Just("prompt_token_ids".to_owned()),
            Just("token_ids".to_owned()),
            Just("logprobs".to_owned()),
            Just("logprob".to_owned()),
            Just("token_logprobs".to_owned()),
            Just("error".to_owned()),
            "[a-z_]{1,8}",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z ]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }
}
