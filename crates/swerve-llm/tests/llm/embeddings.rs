//! `HttpEmbedder` against a real HTTP server on loopback: the request it posts to
//! `/embeddings`, the vectors, usage and cost it reads, retries of transient failures, and
//! an API key that is sent but never logged or shown.
//!
//! This binary holds a single test because it sets an environment variable, which must not
//! race with other threads.

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::{ModelServer, Reply, bounded, capture_logs};
use swerve_llm::{HttpEmbedder, HttpModelConfig, ModelError, Price, PriceTable};

const VAR: &str = "SWERVE_LLM_TEST_EMBEDDINGS_KEY";
const KEY: &str = "sk-embed-5ecret-0123456789";

#[test]
fn embeds_through_the_shared_client() {
    // SAFETY: this is the only test in this binary and no other thread exists yet.
    unsafe { std::env::set_var(VAR, KEY) };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}

async fn run() {
    let (_guard, logs) = capture_logs();
    let answer = json!({"object": "list", "model": "embedder",
        "data": [{"object": "embedding", "index": 1, "embedding": [0.0, 1.0]},
                 {"object": "embedding", "index": 0, "embedding": [0.6, 0.8]}],
        "usage": {"prompt_tokens": 1000, "total_tokens": 1000}});
    let server = ModelServer::scripted([
        Reply::Status {
            status: 503,
            body: format!("{{\"error\": \"busy {KEY}\"}}"),
            headers: vec![],
        },
        Reply::Json(200, answer),
        Reply::Status {
            status: 400,
            body: format!("{{\"error\": \"bad input for {KEY}\"}}"),
            headers: vec![],
        },
    ]);
    let mut config = HttpModelConfig {
        api_key_env: VAR.into(),
        timeout_secs: 2.0,
        backoff_base_secs: 0.01,
        backoff_max_secs: 0.02,
        ..HttpModelConfig::new(format!("{}/", server.url()), "embedder")
    };
    config.extra_body.insert("dimensions".into(), json!(2));
    let mut prices = PriceTable::default();
    prices.models.insert(
        "embedder".into(),
        Price {
            input: 0.02,
            output: 0.0,
            cached_input: None,
        },
    );
    let embedder = HttpEmbedder::new(config).unwrap().with_prices(prices);
    assert_eq!(embedder.url().path(), "/v1/embeddings");
    assert_eq!(embedder.name(), "embedder");
    let inputs = vec!["a query".to_owned(), "fn main() {}".to_owned()];
    let limit = Duration::from_secs(20);

    let embeddings = bounded(limit, embedder.embed(&inputs)).await.unwrap();
    assert_eq!(embeddings.vectors, [vec![0.6, 0.8], vec![0.0, 1.0]]);
    assert_eq!(embeddings.usage.prompt_tokens, 1000);
    assert!(
        (embeddings.cost - 0.00002).abs() < 1e-12,
        "{}",
        embeddings.cost
    );
    assert_eq!(embeddings.attempts, 2, "the 503 was retried");

    let error = bounded(limit, embedder.embed(&inputs)).await.unwrap_err();
    assert!(matches!(error, ModelError::Server { status: 400, .. }));
    assert!(error.to_string().contains("[REDACTED]"), "{error}");

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "400 is not retried");
    for sent in &requests {
        assert_eq!(sent.method, "POST");
        assert_eq!(sent.path, "/v1/embeddings");
        assert_eq!(
            sent.body,
            json!({"model": "embedder", "input": ["a query", "fn main() {}"], "dimensions": 2})
        );
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    for text in [
        error.to_string(),
        format!("{error:?}"),
        format!("{embedder:?}"),
        logs.text(),
    ] {
        assert!(!text.contains(KEY), "the API key leaked into: {text}");
    }
    assert!(logs.text().contains("retrying"), "{}", logs.text());
}
