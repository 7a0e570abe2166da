//! What can go wrong when asking a model, in kinds the agent loop maps to
//! termination reasons.
//!
//! Every message is safe to log or store in a trajectory: the HTTP backend
//! scrubs the API key out of anything the server or the transport said before
//! it builds one of these.

use std::time::Duration;

use thiserror::Error;

/// A failed model call. Transient kinds (`Timeout`, `RateLimited`, `Connection`,
/// 5xx `Server`) are only returned after the backend's retries ran out, except a
/// `Connection` error from a TLS handshake that cannot succeed on a retry (an untrusted
/// or mismatched certificate, plain HTTP behind an https URL), returned at once.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ModelError {
    /// No complete answer within the per-request timeout, on every attempt.
    #[error("model request timed out ({timeout:?} per attempt, {attempts} attempt(s))")]
    Timeout {
        /// Attempts made; the last one timed out.
        attempts: u32,
        /// The per-attempt timeout.
        timeout: Duration,
    },
    /// The server kept answering 429 until the retries ran out.
    #[error("model endpoint rate-limited the request (HTTP 429) on all {attempts} attempt(s)")]
    RateLimited {
        /// Attempts made.
        attempts: u32,
    },
    /// The server answered with an error status that is not a rate limit or a
    /// context-length error (5xx after retries, or a 4xx that is not retried).
    #[error("model endpoint answered HTTP {status}: {body}")]
    Server {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body, with any secret removed.
        body: String,
    },
    /// The connection could not be made or broke before a response arrived,
    /// on every attempt (or the TLS handshake failed for good).
    #[error("could not reach the model endpoint: {detail}")]
    Connection {
        /// What the transport reported.
        detail: String,
    },
    /// The response could not be used: not JSON, cut short, or missing a
    /// field this crate needs (including token ids that were asked for).
    #[error("malformed model response: {detail}")]
    MalformedResponse {
        /// What was wrong, naming the field where there is one.
        detail: String,
    },
    /// The prompt (plus `max_tokens`) does not fit the model's context window.
    /// Not retried: the same request would fail again.
    #[error("the request exceeds the model's context length: {detail}")]
    ContextLength {
        /// The server's message.
        detail: String,
    },
    /// The backend is misconfigured or was handed a request it cannot send.
    #[error("model configuration error: {detail}")]
    Config {
        /// What is wrong and what to change.
        detail: String,
    },
    /// A model that answers from a fixed list (scripted, replay) has nothing
    /// left to answer with.
    #[error("model has no responses left: {detail}")]
    Exhausted {
        /// Which model and how many responses it gave.
        detail: String,
    },
}

impl ModelError {
    /// Shorthand for a [`ModelError::Config`].
    pub fn config(detail: impl Into<String>) -> Self {
        Self::Config {
            detail: detail.into(),
        }
    }

    /// Shorthand for a [`ModelError::MalformedResponse`].
    pub fn malformed(detail: impl Into<String>) -> Self {
        Self::MalformedResponse {
            detail: detail.into(),
        }
    }
}
