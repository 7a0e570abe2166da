//! End-to-end tests of `HttpModel` against a real HTTP server on loopback that
//! answers like vLLM, with injected faults. Every call must finish — with a
//! response or with the right error kind — within a bounded time.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{
    COMPLETION_IDS, CONTENT, LOGPROBS, ModelServer, PROMPT_IDS, REASONING, Reply, bounded,
    capture_logs,
};
use swerve_llm::{
    ApiMode, ChatToolCall, HttpModel, HttpModelConfig, Message, Model, ModelError, ModelRequest,
    Price, PriceTable, Sampling, Usage,
};

/// Generous ceiling for any single test call; hangs fail instead of blocking.
const LIMIT: Duration = Duration::from_secs(20);

/// A config for `server` with fast timeouts and back-off.
fn config(server: &ModelServer) -> HttpModelConfig {
    HttpModelConfig {
        api_key_env: "SWERVE_LLM_TEST_UNSET_KEY_VAR".into(),
        timeout_secs: 0.5,
        max_retries: 2,
        backoff_base_secs: 0.01,
        backoff_max_secs: 0.05,
        ..HttpModelConfig::new(server.url(), "test-model")
    }
}

fn model(config: HttpModelConfig) -> HttpModel {
    HttpModel::new(config).unwrap()
}

fn chat() -> ModelRequest {
    ModelRequest::chat(vec![
        Message::system("You are helpful."),
        Message::user("Hi"),
    ])
}

fn status(code: u16, body: &str) -> Reply {
    Reply::Status {
        status: code,
        body: body.into(),
        headers: vec![],
    }
}

#[tokio::test]
async fn chat_call_captures_usage_reasoning_tokens_and_cost() {
    let server = ModelServer::scripted([]);
    let mut config = config(&server);
    config.sampling = Sampling {
        temperature: Some(0.6),
        max_tokens: Some(512),
        ..Sampling::default()
    };
    config.extra_body.insert("top_k".into(), json!(20));
    let mut prices = PriceTable::default();
    prices.models.insert(
        "test-model".into(),
        Price {
            input: 1.0,
            output: 4.0,
            cached_input: Some(0.1),
        },
    );
    let model = model(config).with_prices(prices);
    let request = chat()
        .with_tools(vec![
            json!({"type": "function", "function": {"name": "finish", "parameters": {}}}),
        ])
        .with_sampling(Sampling {
            temperature: Some(0.0),
            seed: Some(7),
            ..Sampling::default()
        })
        .with_session_id("traj-42")
        .capturing_tokens();

    let response = bounded(LIMIT, model.complete(&request)).await.unwrap();

    assert_eq!(response.content, CONTENT);
    assert_eq!(response.reasoning_content.as_deref(), Some(REASONING));
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        response.usage,
        Usage {
            prompt_tokens: 1200,
            completion_tokens: 300,
            cached_tokens: 1000,
            reasoning_tokens: 100
        }
    );
    // 200 uncached × 1 + 1000 cached × 0.1 + 300 × 4, per million.
    assert!(
        (response.cost - 1500.0 / 1e6).abs() < 1e-12,
        "{}",
        response.cost
    );
    assert_eq!(response.attempts, 1);
    assert!(response.latency > Duration::ZERO && response.latency < LIMIT);
    assert_eq!(response.prompt_token_ids.as_deref(), Some(&PROMPT_IDS[..]));
    assert_eq!(
        response.completion_token_ids.as_deref(),
        Some(&COMPLETION_IDS[..])
    );
    assert_eq!(response.logprobs.as_deref(), Some(&LOGPROBS[..]));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("x-session-id"), Some("traj-42"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("authorization"), None, "no key is configured");
    assert_eq!(
        sent.body,
        json!({
            "model": "test-model",
            "messages": [{"role": "system", "content": "You are helpful."},
                         {"role": "user", "content": "Hi"}],
            "tools": [{"type": "function", "function": {"name": "finish", "parameters": {}}}],
            "temperature": 0.0,
            "max_tokens": 512,
            "seed": 7,
            "top_p": 1.0,
            "min_p": 0.0,
            "repetition_penalty": 1.0,
            "top_k": 20,
            "logprobs": true,
            "return_token_ids": true,
        }),
        "neutral values for the filters left unset; extra_body's top_k wins"
    );
}

#[tokio::test]
async fn completions_mode_reads_tokens_from_the_choice() {
    let server = ModelServer::scripted([]);
    let mut config = config(&server);
    config.mode = ApiMode::Completions;
    let model = model(config);
    let request = ModelRequest::prompt("<|im_start|>user\nHi<|im_end|>\n").capturing_tokens();

    let response = bounded(LIMIT, model.complete(&request)).await.unwrap();

    assert_eq!(response.content, CONTENT);
    assert_eq!(response.reasoning_content, None);
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
    assert_eq!(response.prompt_token_ids.as_deref(), Some(&PROMPT_IDS[..]));
    assert_eq!(response.logprobs.as_deref(), Some(&LOGPROBS[..]));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/completions");
    assert_eq!(sent.body["prompt"], "<|im_start|>user\nHi<|im_end|>\n");
    assert_eq!(sent.body["logprobs"], 1);
    assert_eq!(sent.header("x-session-id"), None);
}

#[tokio::test]
async fn native_tool_calls_are_returned_raw() {
    let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_0", "type": "function",
         "function": {"name": "execute_bash", "arguments": "{\"command\": \"ls\""}}
    ]}, "finish_reason": "tool_calls"}]});
    let server = ModelServer::scripted([Reply::Json(200, body)]);
    let response = bounded(LIMIT, model(config(&server)).complete(&chat()))
        .await
        .unwrap();
    assert_eq!(
        response.tool_calls,
        vec![ChatToolCall::new(
            "call_0",
            "execute_bash",
            "{\"command\": \"ls\""
        )]
    );
    assert_eq!(response.content, "");
    assert_eq!(response.usage, Usage::default());
    assert_eq!(response.to_message().content, None);
}

#[tokio::test]
async fn retries_429_and_500_then_succeeds() {
    let server = ModelServer::scripted([status(429, "slow down"), status(500, "oops")]);
    let response = bounded(LIMIT, model(config(&server)).complete(&chat()))
        .await
        .unwrap();
    assert_eq!(response.content, CONTENT);
    assert_eq!(response.attempts, 3);
    assert_eq!(server.requests().len(), 3);
}

/// For each fault: what one fault followed by a good answer gives, and what
/// the fault on every attempt gives. Transient faults are retried; the rest
/// fail at once with their own kind.
#[tokio::test]
async fn every_fault_ends_in_a_response_or_the_right_error() {
    type Check = fn(&ModelError) -> bool;
    let cases: Vec<(&str, Reply, bool, Check)> = vec![
        ("429", status(429, "{}"), true, |e| {
            *e == ModelError::RateLimited { attempts: 3 }
        }),
        ("408", status(408, "{}"), true, |e| {
            matches!(e, ModelError::Server { status: 408, .. })
        }),
        ("500", status(500, "{}"), true, |e| {
            matches!(e, ModelError::Server { status: 500, .. })
        }),
        (
            "502",
            status(502, "bad gateway"),
            true,
            |e| matches!(e, ModelError::Server { status: 502, body } if body == "bad gateway"),
        ),
        ("503", status(503, "{}"), true, |e| {
            matches!(e, ModelError::Server { status: 503, .. })
        }),
        ("504", status(504, "{}"), true, |e| {
            matches!(e, ModelError::Server { status: 504, .. })
        }),
        ("401", status(401, "invalid key"), false, |e| {
            matches!(e, ModelError::Server { status: 401, .. })
        }),
        ("404", status(404, "no such model"), false, |e| {
            matches!(e, ModelError::Server { status: 404, .. })
        }),
        (
            "context length",
            Reply::Json(
                400,
                json!({"object": "error", "message": "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.", "type": "BadRequestError", "code": 400}),
            ),
            false,
            |e| matches!(e, ModelError::ContextLength { detail } if detail.contains("32768")),
        ),
        (
            "a neutral sampling field refused",
            Reply::Json(
                400,
                json!({"error": {"message": "Unrecognized request argument supplied: top_k", "type": "invalid_request_error"}}),
            ),
            false,
            |e| {
                matches!(e, ModelError::Config { detail }
                    if detail.contains("supplied: top_k") && detail.contains("model.sampling.neutral=false"))
            },
        ),
        (
            "malformed JSON",
            Reply::RawOk(b"{\"choices\": [{\"mess".to_vec()),
            false,
            |e| matches!(e, ModelError::MalformedResponse { detail } if detail.contains("not JSON")),
        ),
        (
            "HTML instead of JSON",
            Reply::RawOk(b"<html>502</html>".to_vec()),
            false,
            |e| matches!(e, ModelError::MalformedResponse { .. }),
        ),
        (
            "missing choices",
            Reply::Json(200, json!({"id": "x"})),
            false,
            |e| matches!(e, ModelError::MalformedResponse { detail } if detail.contains("choices")),
        ),
        (
            "Content-Length too small",
            Reply::ShortContentLength,
            false,
            |e| matches!(e, ModelError::MalformedResponse { .. }),
        ),
        (
            "closed mid-body",
            Reply::CloseMidBody,
            true,
            |e| matches!(e, ModelError::MalformedResponse { detail } if detail.contains("cut short")),
        ),
        ("stalled mid-body", Reply::StallMidBody, true, |e| {
            matches!(e, ModelError::Timeout { attempts: 3, .. })
        }),
        ("no answer", Reply::Hang, true, |e| {
            matches!(e, ModelError::Timeout { attempts: 3, .. })
        }),
        ("closed without answer", Reply::Close, true, |e| {
            matches!(e, ModelError::Connection { .. })
        }),
    ];
    for (name, fault, transient, check) in cases {
        let started = Instant::now();

        let server = ModelServer::scripted([fault.clone()]);
        let once = bounded(LIMIT, model(config(&server)).complete(&chat())).await;
        if transient {
            let response = once.unwrap_or_else(|e| panic!("{name}: one fault then ok gave {e}"));
            assert_eq!(response.attempts, 2, "{name}");
            assert_eq!(server.requests().len(), 2, "{name}");
        } else {
            let error = once.expect_err(name);
            assert!(check(&error), "{name}: unexpected {error:?}");
            assert_eq!(server.requests().len(), 1, "{name}: must not be retried");
        }

        let server = ModelServer::scripted(vec![fault; 3]);
        let error = bounded(LIMIT, model(config(&server)).complete(&chat()))
            .await
            .expect_err(name);
        assert!(check(&error), "{name}: unexpected {error:?}");
        let expected_requests = if transient { 3 } else { 1 };
        assert_eq!(server.requests().len(), expected_requests, "{name}");

        // About 2 s: three attempts of 0.5 s each plus back-off; room for a loaded machine.
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn retry_after_is_honoured_and_capped() {
    let retry_after = |secs: &str| Reply::Status {
        status: 429,
        body: "{}".into(),
        headers: vec![("Retry-After".into(), secs.into())],
    };
    let server = ModelServer::scripted([retry_after("1")]);
    let mut slow_cap = config(&server);
    slow_cap.backoff_max_secs = 5.0;
    let started = Instant::now();
    let response = bounded(LIMIT, model(slow_cap).complete(&chat()))
        .await
        .unwrap();
    assert_eq!(response.attempts, 2);
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(response.latency >= Duration::from_secs(1));

    let server = ModelServer::scripted([retry_after("3600")]);
    let started = Instant::now();
    bounded(LIMIT, model(config(&server)).complete(&chat()))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_server_that_stops_answering_ends_in_a_connection_error() {
    let server = ModelServer::scripted([]);
    let model = model(config(&server));
    bounded(LIMIT, model.complete(&chat())).await.unwrap();
    server.stop();
    let error = bounded(LIMIT, model.complete(&chat())).await.unwrap_err();
    assert!(matches!(error, ModelError::Connection { .. }), "{error:?}");
}

#[tokio::test]
async fn a_listener_that_never_accepts_ends_in_a_timeout() {
    // The kernel completes the handshake and buffers the request, but nobody
    // ever reads it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut config = HttpModelConfig {
        timeout_secs: 0.3,
        max_retries: 1,
        backoff_base_secs: 0.01,
        ..HttpModelConfig::new(format!("http://{}/v1", listener.local_addr().unwrap()), "m")
    };
    config.api_key_env = String::new();
    let started = Instant::now();
    let error = bounded(LIMIT, model(config).complete(&chat()))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ModelError::Timeout {
            attempts: 2,
            timeout: Duration::from_millis(300)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    drop(listener);
}

#[tokio::test]
async fn concurrent_calls_through_a_shared_dyn_model() {
    let server = ModelServer::scripted([status(503, "{}"), status(429, "{}")]);
    let model: Arc<dyn Model> = Arc::new(model(config(&server)));
    let calls = (0..8).map(|i| {
        let model = model.clone();
        tokio::spawn(async move {
            let request = chat().with_session_id(format!("traj-{i}"));
            model.complete(&request).await
        })
    });
    for call in calls {
        let response = bounded(LIMIT, call).await.unwrap().unwrap();
        assert_eq!(response.content, CONTENT);
    }
    let mut sessions: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|r| r.header("x-session-id").map(str::to_owned))
        .collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 8);
    assert_eq!(model.name(), "test-model");
}

#[tokio::test]
async fn token_capture_fails_loudly_when_the_server_ignores_it() {
    let plain = json!({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]});
    let server = ModelServer::scripted([Reply::Json(200, plain)]);
    let error = bounded(
        LIMIT,
        model(config(&server)).complete(&chat().capturing_tokens()),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&error, ModelError::MalformedResponse { detail } if detail.contains("return_token_ids")),
        "{error:?}"
    );
}

#[tokio::test]
async fn mode_mismatch_is_a_config_error_and_sends_nothing() {
    let server = ModelServer::scripted([]);
    let error = bounded(
        LIMIT,
        model(config(&server)).complete(&ModelRequest::prompt("p")),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, ModelError::Config { .. }), "{error:?}");
    let error = bounded(
        LIMIT,
        model(config(&server)).complete(&chat().with_session_id("bad\nid")),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, ModelError::Config { .. }), "{error:?}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn unknown_model_costs_nothing_and_warns_once() {
    let (_guard, logs) = capture_logs();
    let server = ModelServer::scripted([]);
    let mut config = config(&server);
    config.model = "unpriced-model-for-warning-test".into();
    let model = model(config);
    for _ in 0..3 {
        let response = bounded(LIMIT, model.complete(&chat())).await.unwrap();
        assert_eq!(response.cost, 0.0);
    }
    let usage = Usage {
        prompt_tokens: 10,
        ..Usage::default()
    };
    assert_eq!(
        PriceTable::builtin().cost("unpriced-model-for-warning-test", &usage),
        0.0
    );
    let text = logs.text();
    let warnings = text
        .lines()
        .filter(|line| line.contains("WARN") && line.contains("price table"))
        .count();
    assert_eq!(warnings, 1, "{text}");
}

#[test]
fn price_file_overrides_the_builtin_table() {
    let dir = std::env::temp_dir().join(format!("swerve-llm-prices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("prices.toml");
    std::fs::write(
        &path,
        "[models.\"gpt-4o\"]\ninput = 1.0\noutput = 2.0\n\n[models.\"my/local\"]\ninput = 0\noutput = 0\n",
    )
    .unwrap();
    let table = PriceTable::builtin().overridden_by(PriceTable::load(&path).unwrap());
    let usage = Usage {
        prompt_tokens: 1_000_000,
        completion_tokens: 1_000_000,
        cached_tokens: 500_000,
        reasoning_tokens: 0,
    };
    // No cached price in the override: cached tokens cost the input price.
    assert!((table.cost("gpt-4o", &usage) - 3.0).abs() < 1e-9);
    assert_eq!(table.cost("my/local", &usage), 0.0);
    assert!(table.get("gpt-4o-mini").is_some());

    std::fs::write(&path, "[models.x]\ninput = \"cheap\"\noutput = 1\n").unwrap();
    let error = PriceTable::load(&path).unwrap_err();
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
