//! What the agent asks a model: chat messages (with native tool schemas) or a
//! rendered prompt, plus sampling overrides, the trajectory id for sticky
//! routing and whether to capture token ids; and the neutral sampling values
//! ([`neutral_sampling`]) a served model gets for the filters nothing sets.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use swerve_core::trajectory::Message;

/// Sampling parameters. Every field is optional: a request's values override
/// the backend's configured defaults field by field, and a field unset in
/// both is not sent, so the server's own default applies, except for the
/// filters that `neutral` covers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Most tokens to generate (sent as `max_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Vec<String>>,
    /// Sampling seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Whether a served model is sent the [`neutral_sampling`] values of the filters
    /// nothing else sets (here or in `extra_body`), so that the server's own defaults
    /// (vLLM's and SGLang's come from the model's `generation_config`) cannot truncate or
    /// reweight the distribution. Unset means yes; the HTTP backend never sends them to
    /// endpoints that reject unknown fields (OpenAI's, Azure OpenAI's). Not a field of the
    /// request body itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neutral: Option<bool>,
}

/// The sampling values that filter and reweight nothing, so that a server samples from the
/// model's own distribution at the request's temperature: `top_p = 1`, `top_k = -1`,
/// `min_p = 0`, `repetition_penalty = 1`, as vLLM and SGLang read them. The long-context RL
/// seed samples its rollouts this way ("explicitly disabling all other decoding
/// parameters", App. C): a vLLM upgrade that began applying the model's `top_k` and `min_p`
/// by default biased its importance ratios and degraded training (§5.2).
pub fn neutral_sampling() -> [(&'static str, Value); 4] {
    [
        ("top_p", json!(1.0)),
        ("top_k", json!(-1)),
        ("min_p", json!(0.0)),
        ("repetition_penalty", json!(1.0)),
    ]
}

impl Sampling {
    /// These values, with every unset field taken from `defaults`.
    pub fn or(&self, defaults: &Sampling) -> Sampling {
        Sampling {
            temperature: self.temperature.or(defaults.temperature),
            top_p: self.top_p.or(defaults.top_p),
            max_tokens: self.max_tokens.or(defaults.max_tokens),
            stop: self.stop.clone().or_else(|| defaults.stop.clone()),
            seed: self.seed.or(defaults.seed),
            neutral: self.neutral.or(defaults.neutral),
        }
    }
}

/// The input of one model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelInput {
    /// Chat mode: messages for `/v1/chat/completions`.
    Chat {
        /// The conversation so far.
        messages: Vec<Message>,
        /// Tool schemas for native function calling, each an OpenAI tool
        /// object (`{"type":"function","function":{…}}`). Not sent when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<Value>,
    },
    /// Prompt-rendered mode: a prompt the caller already rendered with the
    /// model's chat template, for `/v1/completions`.
    Prompt(String),
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    /// Messages or a rendered prompt.
    pub input: ModelInput,
    /// Per-request sampling overrides.
    #[serde(default)]
    pub sampling: Sampling,
    /// The trajectory id, sent as `X-Session-ID` so routers keep a trajectory
    /// on one server (warm prefix cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Ask the server for prompt and completion token ids and per-token
    /// logprobs (vLLM's `return_token_ids` and `logprobs`).
    #[serde(default)]
    pub capture_tokens: bool,
}

impl ModelRequest {
    /// A chat request without tools.
    pub fn chat(messages: Vec<Message>) -> Self {
        Self::from_input(ModelInput::Chat {
            messages,
            tools: Vec::new(),
        })
    }

    /// A prompt-rendered (raw completions) request.
    pub fn prompt(prompt: impl Into<String>) -> Self {
        Self::from_input(ModelInput::Prompt(prompt.into()))
    }

    fn from_input(input: ModelInput) -> Self {
        Self {
            input,
            sampling: Sampling::default(),
            session_id: None,
            capture_tokens: false,
        }
    }

    /// Sets the tool schemas of a chat request (ignored for a prompt request).
    pub fn with_tools(mut self, schemas: Vec<Value>) -> Self {
        if let ModelInput::Chat { tools, .. } = &mut self.input {
            *tools = schemas;
        }
        self
    }

    /// Sets the sampling overrides.
    pub fn with_sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// Sets the trajectory id sent as `X-Session-ID`.
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }

    /// Asks for token ids and logprobs.
    pub fn capturing_tokens(mut self) -> Self {
        self.capture_tokens = true;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_values_override_defaults_field_by_field() {
        let defaults = Sampling {
            temperature: Some(0.7),
            max_tokens: Some(100),
            stop: Some(vec!["</s>".into()]),
            ..Sampling::default()
        };
        let request = Sampling {
            temperature: Some(0.0),
            seed: Some(3),
            neutral: Some(false),
            ..Sampling::default()
        };
        let merged = request.or(&defaults);
        assert_eq!(merged.temperature, Some(0.0));
        assert_eq!(merged.max_tokens, Some(100));
        assert_eq!(merged.stop, Some(vec!["</s>".to_owned()]));
        assert_eq!(merged.seed, Some(3));
        assert_eq!(merged.neutral, Some(false));
        assert_eq!(merged.top_p, None);
        assert_eq!(Sampling::default().or(&request).neutral, Some(false));
    }

    #[test]
    fn with_tools_only_touches_chat_requests() {
        let tools = vec![serde_json::json!({"type": "function"})];
        let chat = ModelRequest::chat(vec![]).with_tools(tools.clone());
        assert!(matches!(chat.input, ModelInput::Chat { tools: t, .. } if t == tools));
        let prompt = ModelRequest::prompt("p").with_tools(tools);
        assert_eq!(prompt.input, ModelInput::Prompt("p".into()));
    }
}
