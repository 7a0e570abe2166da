//! Configuration of the OpenAI-compatible HTTP backend, in a TOML-friendly
//! shape. Only the *name* of the environment variable holding the API key is
//! configured; the key itself is read when a request is sent and never stored.
//!
//! ```toml
//! base_url = "http://127.0.0.1:8000/v1"   # or https://…
//! name = "Qwen/Qwen3-8B"   # sent as the request's `model`
//! api_key_env = "VLLM_API_KEY"
//! # ca_cert = "/etc/ssl/corp-ca.pem"    # extra root certificates (PEM) for https
//! mode = "chat"            # or "completions" for prompt-rendered mode
//! timeout_secs = 600
//! max_retries = 5
//!
//! [sampling]
//! temperature = 0.6
//! max_tokens = 4096
//! # neutral = false       # send no neutral top_p/top_k/min_p/repetition_penalty
//!
//! [extra_body]             # merged into every request body
//! top_k = 20
//! ```

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::request::Sampling;

/// Which endpoint the backend talks to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiMode {
    /// `/chat/completions` with messages (the server applies the template).
    #[default]
    Chat,
    /// `/completions` with a prompt the caller rendered (prompt-rendered mode).
    Completions,
}

/// Settings of an [`HttpModel`](crate::HttpModel).
///
/// Every field has a default so a configuration can be assembled from layers (a file, a
/// preset, command-line overrides); [`HttpModel::new`](crate::HttpModel::new) rejects an empty
/// `base_url` or model name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpModelConfig {
    /// The API root including its version segment, e.g.
    /// `http://127.0.0.1:8000/v1`; `/chat/completions` or `/completions` is
    /// appended.
    pub base_url: String,
    /// The model name sent in each request and looked up in the price table
    /// (`name` in TOML and JSON).
    #[serde(rename = "name")]
    pub model: String,
    /// The environment variable holding the API key. When it is unset or
    /// empty no `Authorization` header is sent (fine for a local vLLM).
    pub api_key_env: String,
    /// A PEM file of extra root certificates to trust for an `https`
    /// `base_url`, on top of the system's: the CA of a corporate proxy, or a
    /// self-signed server certificate. Unset by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<PathBuf>,
    /// The GGUF file of the embedded model (`name = "embedded"`, run in swerve's own process
    /// on the CPU, see the `swerve-embedded` crate); unset, the default model in swerve's
    /// models directory. The HTTP backend does not use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// Chat or raw completions.
    pub mode: ApiMode,
    /// Limit for one attempt, from connecting until the whole body is read.
    pub timeout_secs: f64,
    /// Retries after the first attempt for transient failures (408, 429,
    /// 500, 502, 503, 504, connection errors, timeouts, bodies cut short);
    /// an untrusted TLS certificate is final.
    pub max_retries: u32,
    /// The first back-off ceiling; it doubles with each retry.
    pub backoff_base_secs: f64,
    /// The largest back-off, also the cap on a server's `Retry-After`.
    pub backoff_max_secs: f64,
    /// Default sampling parameters; a request's own values win.
    pub sampling: Sampling,
    /// Fields merged into every request body after the standard ones (so
    /// they can override them), e.g. `top_k` or `chat_template_kwargs`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
}

impl Default for HttpModelConfig {
    fn default() -> Self {
        Self::new("", "")
    }
}

impl HttpModelConfig {
    /// A configuration with every optional setting at its default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: default_api_key_env(),
            ca_cert: None,
            path: None,
            mode: ApiMode::default(),
            timeout_secs: default_timeout_secs(),
            max_retries: default_max_retries(),
            backoff_base_secs: default_backoff_base_secs(),
            backoff_max_secs: default_backoff_max_secs(),
            sampling: Sampling::default(),
            extra_body: Map::new(),
        }
    }
}

fn default_api_key_env() -> String {
    "OPENAI_API_KEY".to_owned()
}

fn default_timeout_secs() -> f64 {
    600.0
}

fn default_max_retries() -> u32 {
    5
}

fn default_backoff_base_secs() -> f64 {
    1.0
}

fn default_backoff_max_secs() -> f64 {
    60.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_with_defaults_and_extra_body() {
        let config: HttpModelConfig = toml::from_str(
            r#"
            base_url = "http://127.0.0.1:8000/v1"
            name = "m"
            mode = "completions"
            [sampling]
            temperature = 0.5
            stop = ["</s>"]
            [extra_body]
            top_k = 20
            chat_template_kwargs = { enable_thinking = false }
            "#,
        )
        .unwrap();
        assert_eq!(config.api_key_env, "OPENAI_API_KEY");
        assert_eq!(config.mode, ApiMode::Completions);
        assert_eq!(config.max_retries, 5);
        assert_eq!(config.sampling.temperature, Some(0.5));
        assert_eq!(config.extra_body["top_k"], 20);
        assert_eq!(
            config.extra_body["chat_template_kwargs"]["enable_thinking"],
            false
        );
        let mut expected = HttpModelConfig::new("http://127.0.0.1:8000/v1", "m");
        expected.mode = ApiMode::Completions;
        expected.sampling = config.sampling.clone();
        expected.extra_body = config.extra_body.clone();
        assert_eq!(config, expected);
    }

    #[test]
    fn ca_cert_and_path_are_optional_and_omitted_when_unset() {
        let config: HttpModelConfig = toml::from_str(
            "base_url = \"https://api.example.com/v1\"\nname = \"m\"\nca_cert = \"/etc/ca.pem\"\n",
        )
        .unwrap();
        assert_eq!(config.ca_cert, Some(PathBuf::from("/etc/ca.pem")));
        assert!(toml::to_string(&config).unwrap().contains("ca_cert"));
        let config = HttpModelConfig::new("https://api.example.com/v1", "m");
        assert_eq!(config.ca_cert, None);
        assert!(!toml::to_string(&config).unwrap().contains("ca_cert"));
        let config: HttpModelConfig =
            toml::from_str("name = \"embedded\"\npath = \"/models/m.gguf\"\n").unwrap();
        assert_eq!(config.path, Some(PathBuf::from("/models/m.gguf")));
        assert!(
            !toml::to_string(&HttpModelConfig::default())
                .unwrap()
                .contains("path")
        );
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let error =
            toml::from_str::<HttpModelConfig>("base_url = \"x\"\nname = \"m\"\napi_key = \"k\"\n")
                .unwrap_err();
        assert!(error.to_string().contains("api_key"), "{error}");
        let error = toml::from_str::<HttpModelConfig>(
            "base_url = \"x\"\nname = \"m\"\n[sampling]\ntemprature = 1\n",
        )
        .unwrap_err();
        assert!(error.to_string().contains("temprature"), "{error}");
    }
}
