//! Which failed attempts are retried, how long to wait before the next one
//! (exponential back-off with full jitter, honouring `Retry-After` up to the
//! back-off cap), and which [`ModelError`] a final failure becomes.

use std::time::Duration;

use crate::error::ModelError;
use crate::wire::is_context_length_message;

/// Longest error-body excerpt kept in an error, in characters.
const MAX_ERROR_BODY_CHARS: usize = 2000;

/// Why one HTTP attempt did not produce a usable 2xx body.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No complete answer within the per-attempt timeout.
    Timeout,
    /// The request could not be sent or no response head arrived.
    Connection(String),
    /// The TLS handshake failed for a reason another attempt would meet
    /// again (an untrusted certificate, no TLS on the port); the text says
    /// what to change.
    Tls(String),
    /// A 2xx head arrived but its body broke off.
    Truncated(String),
    /// A non-2xx status.
    Status {
        status: u16,
        body: String,
        retry_after: Option<Duration>,
    },
}

impl Failure {
    /// Whether another attempt may succeed.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            Failure::Timeout | Failure::Connection(_) | Failure::Truncated(_) => true,
            Failure::Tls(_) => false,
            Failure::Status { status, .. } => matches!(status, 408 | 429 | 500 | 502 | 503 | 504),
        }
    }

    /// The wait the server asked for, if any.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The error reported when this was the last attempt.
    pub(crate) fn into_error(self, attempts: u32, timeout: Duration) -> ModelError {
        match self {
            Failure::Timeout => ModelError::Timeout { attempts, timeout },
            Failure::Connection(detail) | Failure::Tls(detail) => ModelError::Connection { detail },
            Failure::Truncated(detail) => {
                ModelError::malformed(format!("the response body was cut short: {detail}"))
            }
            Failure::Status { status: 429, .. } => ModelError::RateLimited { attempts },
            Failure::Status { status, body, .. } => {
                let body = excerpt(&body);
                if matches!(status, 400 | 413 | 422) && is_context_length_message(&body) {
                    ModelError::ContextLength { detail: body }
                } else {
                    ModelError::Server { status, body }
                }
            }
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout => f.write_str("timed out"),
            Failure::Connection(detail) => write!(f, "connection failed: {detail}"),
            Failure::Tls(detail) => write!(f, "TLS failed: {detail}"),
            Failure::Truncated(detail) => write!(f, "body cut short: {detail}"),
            Failure::Status { status, body, .. } => write!(f, "HTTP {status}: {}", excerpt(body)),
        }
    }
}

/// The back-off schedule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The wait after failed attempt number `attempt` (1-based): a uniform
    /// random time up to `base × 2^(attempt-1)` (capped at `max`), but at
    /// least the server's `Retry-After`, itself capped at `max`.
    pub(crate) fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exponent = attempt.saturating_sub(1).min(30);
        let ceiling = self.base.saturating_mul(1 << exponent).min(self.max);
        let jittered = ceiling.mul_f64(rand::random::<f64>());
        match retry_after {
            Some(asked) => jittered.max(asked.min(self.max)),
            None => jittered,
        }
    }
}

/// Parses a `Retry-After` header given in seconds (the HTTP-date form is
/// ignored: the jittered back-off applies instead).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    Duration::try_from_secs_f64(secs).ok()
}

/// At most [`MAX_ERROR_BODY_CHARS`] characters of an error body.
fn excerpt(body: &str) -> String {
    let mut cut: String = body.chars().take(MAX_ERROR_BODY_CHARS).collect();
    if cut.len() < body.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, body: &str) -> Failure {
        Failure::Status {
            status,
            body: body.to_owned(),
            retry_after: None,
        }
    }

    #[test]
    fn transient_statuses() {
        for code in [408, 429, 500, 502, 503, 504] {
            assert!(status(code, "").is_transient(), "{code}");
        }
        for code in [400, 401, 403, 404, 413, 422, 501] {
            assert!(!status(code, "").is_transient(), "{code}");
        }
        assert!(Failure::Timeout.is_transient());
        assert!(Failure::Truncated(String::new()).is_transient());
        assert!(!Failure::Tls(String::new()).is_transient());
    }

    #[test]
    fn final_errors_by_kind() {
        let timeout = Duration::from_secs(1);
        assert_eq!(
            status(429, "slow down").into_error(6, timeout),
            ModelError::RateLimited { attempts: 6 }
        );
        let context = status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens"}}"#,
        );
        assert!(matches!(
            context.into_error(1, timeout),
            ModelError::ContextLength { .. }
        ));
        assert_eq!(
            status(400, "bad").into_error(1, timeout),
            ModelError::Server {
                status: 400,
                body: "bad".into()
            }
        );
        let long = status(500, &"x".repeat(5000)).into_error(1, timeout);
        assert!(long.to_string().len() < 2100);
    }

    #[test]
    fn backoff_is_bounded_and_honours_retry_after() {
        let backoff = Backoff {
            base: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        for attempt in 1..100 {
            let ceiling = Duration::from_millis(100 << (attempt - 1).min(20)).min(backoff.max);
            assert!(backoff.delay(attempt, None) <= ceiling);
        }
        assert!(backoff.delay(1, Some(Duration::from_millis(700))) >= Duration::from_millis(700));
        assert_eq!(
            backoff.delay(1, Some(Duration::from_secs(3600))),
            backoff.max
        );
    }

    #[test]
    fn retry_after_seconds_only() {
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
