//! The API key travels only in the `Authorization` header: it is read from
//! the configured environment variable, and never shows up in logs, error
//! messages or `Debug` output, even when the server echoes it back.
//!
//! This binary holds a single test because it sets an environment variable,
//! which must not race with other threads.

use crate::support;

use std::time::Duration;

use support::{ModelServer, Reply, bounded, capture_logs};
use swerve_llm::{HttpModel, HttpModelConfig, Message, Model, ModelError, ModelRequest};

const VAR: &str = "SWERVE_LLM_TEST_API_KEY";
const KEY: &str = "sk-test-5ecret-value-0123456789";

#[test]
fn api_key_is_sent_but_never_logged_or_shown() {
    // SAFETY: this is the only test in this binary and no other thread
    // exists yet.
    unsafe { std::env::set_var(VAR, KEY) };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}

async fn run() {
    let (_guard, logs) = capture_logs();
    let echo = format!("{{\"error\": \"invalid api key {KEY}\"}}");
    let server = ModelServer::scripted([
        Reply::Status {
            status: 503,
            body: echo.clone(),
            headers: vec![],
        },
        Reply::Status {
            status: 401,
            body: echo,
            headers: vec![],
        },
        Reply::RawOk(format!("not json {KEY}").into_bytes()),
    ]);
    let config = HttpModelConfig {
        api_key_env: VAR.into(),
        timeout_secs: 2.0,
        backoff_base_secs: 0.01,
        backoff_max_secs: 0.02,
        ..HttpModelConfig::new(server.url(), "test-model")
    };
    let model = HttpModel::new(config).unwrap();
    let request = ModelRequest::chat(vec![Message::user("hi")]).with_session_id("traj-7");
    let limit = Duration::from_secs(20);

    let unauthorized = bounded(limit, model.complete(&request)).await.unwrap_err();
    assert!(matches!(
        unauthorized,
        ModelError::Server { status: 401, .. }
    ));
    let malformed = bounded(limit, model.complete(&request)).await.unwrap_err();
    assert!(matches!(malformed, ModelError::MalformedResponse { .. }));
    let response = bounded(limit, model.complete(&request)).await.unwrap();

    for sent in server.requests() {
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(sent.header("x-session-id"), Some("traj-7"));
    }
    let shown = [
        unauthorized.to_string(),
        format!("{unauthorized:?}"),
        malformed.to_string(),
        format!("{malformed:?}"),
        format!("{model:?}"),
        format!("{:?}", model.config()),
        toml::to_string(model.config()).unwrap(),
        serde_json::to_string(&response).unwrap(),
        logs.text(),
    ];
    for text in shown {
        assert!(!text.contains(KEY), "the API key leaked into: {text}");
    }
    assert!(unauthorized.to_string().contains("[REDACTED]"));
    assert!(logs.text().contains("retrying"), "{}", logs.text());
}
