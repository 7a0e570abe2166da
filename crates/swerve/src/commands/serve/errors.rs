//! The service's error answers: an HTTP status and a JSON body
//! `{"error": {"message": …, "field": …}}` naming the request field at fault, and reading
//! request bodies into typed requests with errors of that shape.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::json;

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// The request field at fault (a dotted path such as `overrides.agent.max_steps`).
    pub field: Option<String>,
    /// Seconds for `Retry-After` (429 and 503 answers).
    pub retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            field: None,
            retry_after: None,
        }
    }

    /// 400: the request's `field` is wrong, as `message` says.
    pub fn bad_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(StatusCode::BAD_REQUEST, message)
        }
    }

    /// 401: no token, or the wrong one.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token \
             the service reads from its serve.token_env variable",
        )
    }

    /// 404 for `what` (e.g. `rollout "x"`).
    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("no {what}"))
    }

    /// 409: the request conflicts with what exists, as `message` says.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 413: the body is larger than `limit` bytes.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {limit} bytes (serve.max_body_bytes)"),
        )
    }

    /// 429: every slot of `what` is taken; try again after `retry_after` seconds.
    pub fn busy(what: &str, retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("the service is at its limit of {what}; retry after {retry_after} s"),
            )
        }
    }

    /// 503: the service is shutting down.
    pub fn shutting_down() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the service is shutting down and takes no new work",
        )
    }

    /// 500: something failed on the service's side.
    pub fn internal(error: &anyhow::Error) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{error:#}"))
    }

    /// The JSON body of this error.
    pub fn body(&self) -> serde_json::Value {
        json!({"error": {"message": self.message, "field": self.field}})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Reads `body` (at most `limit` bytes) as JSON into `T`; errors name the field.
pub async fn read_json<T: DeserializeOwned>(body: Body, limit: usize) -> Result<T, ApiError> {
    let bytes = axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| ApiError::too_large(limit))?;
    parse_json(&bytes)
}

/// `bytes` as JSON into `T`: a syntax error gives its line and column, a wrong or missing
/// field its dotted path.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let not_json = |error: &serde_json::Error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("the request body is not valid JSON: {error}"),
        )
    };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let error = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => {
            return match deserializer.end() {
                Ok(()) => Ok(value),
                Err(error) => Err(not_json(&error)),
            };
        }
        Err(error) => error,
    };
    let inner = error.inner();
    if inner.is_syntax() || inner.is_eof() {
        return Err(not_json(inner));
    }
    let path = error.path().to_string();
    let field = if path == "." { "body".to_owned() } else { path };
    Err(ApiError::bad_field(
        field.clone(),
        format!("request field `{field}`: {inner}"),
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Request {
        model: String,
        #[serde(default)]
        overrides: BTreeMap<String, u32>,
    }

    #[test]
    fn errors_name_the_field() {
        let error = parse_json::<Request>(br#"{"model": 3}"#).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        assert_eq!(error.field.as_deref(), Some("model"));
        assert!(error.message.contains("invalid type"), "{}", error.message);

        let error =
            parse_json::<Request>(br#"{"model": "m", "overrides": {"a": "x"}}"#).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("overrides.a"));

        let error = parse_json::<Request>(br#"{"modle": "m"}"#).unwrap_err();
        assert!(
            error.message.contains("unknown field `modle`"),
            "{}",
            error.message
        );

        let error = parse_json::<Request>(br#"{}"#).unwrap_err();
        assert!(
            error.message.contains("missing field `model`"),
            "{}",
            error.message
        );
        assert_eq!(error.field.as_deref(), Some("body"));

        let error = parse_json::<Request>(b"{\"model\": ").unwrap_err();
        assert!(
            error.message.contains("not valid JSON"),
            "{}",
            error.message
        );
        assert_eq!(error.field, None);

        let error = parse_json::<Request>(br#"{"model": "m"} trailing"#).unwrap_err();
        assert!(
            error.message.contains("not valid JSON"),
            "{}",
            error.message
        );
    }

    proptest! {
        /// Any bytes give a value or a 400, never a panic.
        #[test]
        fn any_body_is_answered(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Err(error) = parse_json::<Request>(&bytes) {
                prop_assert_eq!(error.status, StatusCode::BAD_REQUEST);
                prop_assert!(!error.message.is_empty());
            }
        }
    }
}
