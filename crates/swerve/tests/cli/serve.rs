//! `swerve serve` end to end over real HTTP on loopback: rollouts against the loopback
//! model of `common` (64 at once), the bearer token, malformed requests, back-pressure,
//! a client that goes away mid-rollout, gym-style environments and their expiry, the
//! OpenRLHF reward endpoint, and graceful shutdown.

use crate::common;
use crate::tokenizers;

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use common::{
    Behaviour, DemoServer, Serve, descendants, entries, eventually, examples, http,
    http_request_bytes, json_lines, stderr, stdout,
};
use serde_json::{Value, json};

/// The bundled tasks' instance ids and gold patches.
fn tasks() -> Vec<(String, String)> {
    json_lines(&examples())
        .into_iter()
        .map(|task| {
            (
                task["instance_id"].as_str().unwrap().to_owned(),
                task["patch"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A rollout request the loopback model answers with the task's demonstration (it reads
/// the task from the session id, `<instance_id>__<k>`).
fn rollout_request(instance_id: &str, k: usize, url: &str, evaluate: bool) -> Value {
    json!({
        "task_id": instance_id,
        "model": "demo-model",
        "base_url": url,
        "session_id": format!("{instance_id}__{k}"),
        "sampling": {"temperature": 0.7, "max_tokens": 512},
        "overrides": {"agent.max_steps": 40},
        "evaluate": evaluate,
    })
}

/// A loopback model that lists the files, then submits, and returns vLLM's token ids and
/// logprobs: turn k's prompt is [k], its completion [10 + k, 20 + k].
fn token_model() -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<common::Request>>>,
) {
    common::start_answering_json(|request| {
        let turns = request.body["messages"].as_array().map_or(0, |messages| {
            messages.iter().filter(|m| m["role"] == "assistant").count()
        });
        let text = match turns {
            0 => "<function=execute_bash><parameter=command>ls</parameter></function>",
            _ => "<function=finish><parameter=command>submit</parameter></function>",
        };
        let mut body: Value = common::completion(text, false);
        body["prompt_token_ids"] = json!([turns]);
        body["choices"][0]["token_ids"] = json!([10 + turns, 20 + turns]);
        body["choices"][0]["logprobs"] = json!({"content": [
            {"token": "a", "logprob": -0.5}, {"token": "b", "logprob": -0.25}]});
        body
    })
}

/// No workspace left in the cache and no process left under the service.
fn assert_nothing_left(cache: &Path, serve: &Serve) {
    let workspaces = cache.join("workspaces");
    assert!(
        eventually(Duration::from_secs(20), || entries(&workspaces).is_empty()),
        "workspaces left: {:?}",
        entries(&workspaces)
    );
    let pid = serve.child.id();
    assert!(
        eventually(Duration::from_secs(20), || descendants(pid).is_empty()),
        "processes left under the service: {:?}",
        descendants(pid)
    );
}

#[test]
fn sixty_four_concurrent_rollouts_against_a_loopback_model() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    let model = common::start(Behaviour::Good, Duration::from_millis(50));
    let serve = Serve::start(cache.path(), &out, &["serve.max_rollouts=64"]);
    let tasks = tasks();
    let answers: Vec<(String, common::Answer)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..64)
            .map(|n| {
                let (instance_id, _) = &tasks[n % tasks.len()];
                let request = rollout_request(instance_id, n / tasks.len(), &model.url, false);
                let serve = &serve;
                scope.spawn(move || {
                    let id = request["session_id"].as_str().unwrap().to_owned();
                    (id, serve.call("POST", "/v1/rollouts", Some(&request)))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (id, answer) in &answers {
        assert_eq!(answer.status, 200, "{id}: {}", answer.body);
        let body = &answer.body;
        assert_eq!(body["id"], id.as_str());
        assert_eq!(body["status"], "finished", "{body}");
        assert_eq!(body["exit_reason"], "submitted", "{id}");
        assert!(
            body["patch"].as_str().unwrap().starts_with("diff --git"),
            "{id}"
        );
        assert_eq!(body["reward"], Value::Null, "not graded");
        let records = body["trajectory"].as_array().unwrap();
        assert_eq!(records[0]["type"], "header");
        assert_eq!(records.last().unwrap()["type"], "outcome");
        assert_eq!(
            body["steps"].as_u64().unwrap() as usize,
            records.len() - 2,
            "{id}"
        );
        assert!(out.join(format!("trajectories/{id}.jsonl")).is_file());
        // The status of an ended rollout is its answer.
        let status = serve.call("GET", &format!("/v1/rollouts/{id}"), None);
        assert_eq!(status.status, 200);
        assert_eq!(status.body, *body);
    }
    // Every model request carried its rollout's session and the request's sampling.
    let received = model.received.lock().unwrap();
    assert!(received.len() >= 64 * 2);
    assert!(received.iter().all(|request| {
        request.body["temperature"] == 0.7 && request.body["max_tokens"] == 512
    }));
    assert_nothing_left(cache.path(), &serve);
}

#[test]
fn a_graded_rollout_answers_with_its_reward_and_captured_tokens() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    let (url, received) = token_model();
    let serve = Serve::start(cache.path(), &out, &[]);
    let (instance_id, _) = &tasks()[1];
    let mut request = rollout_request(instance_id, 0, &url, true);
    request["overrides"]["agent.capture_tokens"] = json!(true);
    let answer = serve.call("POST", "/v1/rollouts", Some(&request));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["exit_reason"], "submitted");
    // Nothing changed, so nothing is resolved: graded 0.
    assert_eq!(answer.body["reward"], 0.0, "{}", answer.body);
    assert_eq!(answer.body["steps"], 2);
    // The token ids and logprobs are the model's own, step by step.
    assert_eq!(
        answer.body["tokens"],
        json!([
            {"step": 0, "prompt_ids": [0], "completion_ids": [10, 20], "logprobs": [-0.5, -0.25]},
            {"step": 1, "prompt_ids": [1], "completion_ids": [11, 21], "logprobs": [-0.5, -0.25]},
        ])
    );
    assert!(
        received
            .lock()
            .unwrap()
            .iter()
            .all(|request| request.body["logprobs"] == true)
    );
    let outcome = answer.body["trajectory"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(outcome["reward"], 0.0);
    assert!(outcome["eval_report"].is_object());
    assert_nothing_left(cache.path(), &serve);
}

#[test]
fn a_wrong_or_missing_token_is_401_and_never_echoed() {
    let cache = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(cache.path(), &cache.path().join("serve"), &[]);
    let request = json!({"task_id": "x", "model": "m"});
    for token in [None, Some("wrong"), Some("")] {
        for (method, path) in [
            ("POST", "/v1/rollouts"),
            ("GET", "/v1/rollouts/x"),
            ("POST", "/v1/envs"),
            ("POST", "/v1/envs/x/step"),
            ("DELETE", "/v1/envs/x"),
            ("POST", "/v1/reward"),
        ] {
            let answer = http(&serve.address, method, path, token, Some(&request));
            assert_eq!(answer.status, 401, "{method} {path} with {token:?}");
            let message = answer.error_message();
            assert!(message.contains("bearer token"), "{message}");
        }
    }
    let wrong = http(
        &serve.address,
        "POST",
        "/v1/reward?access_token=nope",
        None,
        Some(&request),
    );
    assert_eq!(wrong.status, 401);
    // The right token in the query is taken on the reward endpoint only (OpenRLHF sends no
    // headers): the request gets past the check to its own 400.
    let path = format!("/v1/reward?access_token={}", common::SERVE_TOKEN);
    let reward = http(&serve.address, "POST", &path, None, Some(&request));
    assert_eq!(reward.status, 400, "{}", reward.body);
    let path = format!("/v1/rollouts?access_token={}", common::SERVE_TOKEN);
    assert_eq!(
        http(&serve.address, "POST", &path, None, Some(&request)).status,
        401
    );
    // Health needs no token.
    let health = http(&serve.address, "GET", "/v1/health", None, None);
    assert_eq!(health.status, 200);
    assert_eq!(health.body["status"], "ok");
    let (status, stderr) = serve.stop();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains(common::SERVE_TOKEN), "{stderr}");
}

#[test]
fn malformed_requests_are_400_naming_the_field() {
    let cache = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        cache.path(),
        &cache.path().join("serve"),
        &["serve.max_body_bytes=4096"],
    );
    let (instance_id, _) = &tasks()[0];
    let cases: Vec<(Value, Option<&str>, &str)> = vec![
        (
            json!({"task_id": instance_id}),
            Some("body"),
            "missing field `model`",
        ),
        (
            json!({"task_id": instance_id, "model": 3}),
            Some("model"),
            "invalid type",
        ),
        (
            json!({"task_id": instance_id, "model": "m", "temperature": 1}),
            Some("temperature"),
            "unknown field `temperature`",
        ),
        (
            json!({"task_id": instance_id, "model": "m", "sampling": {"temprature": 1}}),
            Some("sampling.temprature"),
            "unknown field `temprature`",
        ),
        (json!({"model": "m"}), Some("task"), "missing the task"),
        (
            json!({"task_id": "nope", "model": "m", "base_url": "http://127.0.0.1:9/v1"}),
            Some("task_id"),
            "no task with instance_id \"nope\"",
        ),
        (
            json!({"task": {"repo": "a/b"}, "model": "m"}),
            Some("task"),
            "instance_id",
        ),
        (
            json!({"task_id": instance_id, "model": "m"}),
            Some("base_url"),
            "--base-url",
        ),
        (
            json!({"task_id": instance_id, "model": "m", "base_url": "http://127.0.0.1:9/v1", "overrides": {"sandbox.network": true}}),
            Some("overrides.sandbox.network"),
            "may not be set by a request",
        ),
        (
            json!({"task_id": instance_id, "model": "m", "base_url": "http://127.0.0.1:9/v1", "overrides": {"agent.max_stepz": 3}}),
            Some("overrides"),
            "max_stepz",
        ),
        (
            json!({"task_id": instance_id, "model": "m", "base_url": "http://127.0.0.1:9/v1", "session_id": "../etc"}),
            Some("session_id"),
            "not a usable id",
        ),
    ];
    for (request, field, words) in cases {
        let answer = serve.call("POST", "/v1/rollouts", Some(&request));
        assert_eq!(answer.status, 400, "{request}: {}", answer.body);
        let error = &answer.body["error"];
        assert_eq!(error["field"].as_str(), field, "{request}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(words), "{request}: {message}");
    }
    let not_json = serve.call_raw("POST", "/v1/rollouts", b"{\"model\": ");
    assert_eq!(not_json.status, 400);
    assert!(not_json.error_message().contains("not valid JSON"));
    let too_big = serve.call_raw("POST", "/v1/rollouts", &[b' '; 5000]);
    assert_eq!(too_big.status, 413);
    assert!(too_big.error_message().contains("serve.max_body_bytes"));
    let reward = serve.call(
        "POST",
        "/v1/reward",
        Some(&json!({"query": ["a", "b"], "labels": [instance_id]})),
    );
    assert_eq!(reward.status, 400);
    assert_eq!(reward.body["error"]["field"], "labels");
    let reward = serve.call(
        "POST",
        "/v1/reward",
        Some(&json!({"query": ["a"], "labels": ["nope"]})),
    );
    assert_eq!(reward.body["error"]["field"], "labels[0]");
    let step = serve.call("POST", "/v1/envs/none/step", Some(&json!({})));
    assert_eq!(step.status, 404);
    let unknown = serve.call("GET", "/v1/nothing", None);
    assert_eq!(unknown.status, 404);
    assert!(unknown.error_message().contains("/v1/nothing"));
    assert_nothing_left(cache.path(), &serve);
}

#[test]
fn a_full_service_answers_429_and_a_client_that_leaves_takes_its_sandbox_with_it() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    // A model that never answers: the rollout waits in its first model call.
    let model = common::start(Behaviour::Silent, Duration::ZERO);
    let serve = Serve::start(
        cache.path(),
        &out,
        &["serve.max_rollouts=1", "serve.retry_after_secs=3"],
    );
    let (instance_id, _) = &tasks()[0];
    let request = rollout_request(instance_id, 0, &model.url, false);
    let body = request.to_string();
    let mut stream = TcpStream::connect(&serve.address).unwrap();
    stream
        .write_all(&http_request_bytes(
            &serve.address,
            "POST",
            "/v1/rollouts",
            Some(common::SERVE_TOKEN),
            body.as_bytes(),
        ))
        .unwrap();
    let id = format!("{instance_id}__0");
    assert!(
        eventually(Duration::from_secs(60), || model.requests() > 0),
        "the rollout reached its model"
    );
    let status = serve.call("GET", &format!("/v1/rollouts/{id}"), None);
    assert_eq!(status.body["status"], "running", "{}", status.body);
    assert_eq!(entries(&cache.path().join("workspaces")).len(), 1);
    assert!(
        !descendants(serve.child.id()).is_empty(),
        "the sandbox runs"
    );

    let second = rollout_request(instance_id, 1, &model.url, false);
    let busy = serve.call("POST", "/v1/rollouts", Some(&second));
    assert_eq!(busy.status, 429, "{}", busy.body);
    assert_eq!(busy.header("retry-after"), Some("3"));
    assert!(busy.error_message().contains("limit"));

    drop(stream);
    assert_nothing_left(cache.path(), &serve);
    let status = serve.call("GET", &format!("/v1/rollouts/{id}"), None);
    assert_eq!(status.body["status"], "interrupted", "{}", status.body);
    let health = serve.call("GET", "/v1/health", None);
    assert_eq!(health.body["slots_in_use"], 0, "{}", health.body);
}

/// A policy that makes unittest report every failure as a success fixes nothing and earns
/// nothing through `/v1/envs`: from the test package's `__init__` (test machinery, put back
/// before the tests run; reward 0 under `reward.test_machinery_change = "reject"`, the
/// default) or from the package's own code (the canaries see the rewritten report).
#[test]
fn a_patch_that_rewrites_its_judge_earns_no_reward_through_serve() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    let serve = Serve::start(cache.path(), &out, &[]);
    let flip = "import unittest\nunittest.TextTestResult.addFailure = lambda self, test, err: self.addSuccess(test)\n";
    for (path, verdict) in [
        ("tests/__init__.py", "test_machinery_rejected"),
        ("pager/__init__.py", "tampered"),
    ] {
        let created = serve.call(
            "POST",
            "/v1/envs",
            Some(&json!({"task_id": "swerve-examples__pager-1"})),
        );
        assert_eq!(created.status, 200, "{}", created.body);
        let id = created.body["id"].as_str().unwrap().to_owned();
        let step = serve.call(
            "POST",
            &format!("/v1/envs/{id}/step"),
            Some(&json!({"call": {"name": "execute_bash", "arguments": {
                "command": format!("cat >> /testbed/{path} <<'EOF'\n{flip}EOF")}}})),
        );
        assert_eq!(step.status, 200, "{}", step.body);
        let graded = serve.call("POST", &format!("/v1/envs/{id}/evaluate"), None);
        assert_eq!(graded.status, 200, "{}", graded.body);
        assert_eq!(graded.body["resolved"], false, "{}", graded.body["report"]);
        assert_eq!(graded.body["reward"], 0.0, "{}", graded.body["report"]);
        assert_eq!(
            graded.body["report"]["guard"]["verdict"], verdict,
            "{}",
            graded.body["report"]
        );
        assert_eq!(
            serve.call("DELETE", &format!("/v1/envs/{id}"), None).status,
            200
        );
    }
    assert_nothing_left(cache.path(), &serve);
}

#[test]
fn gym_environments_step_evaluate_delete_and_expire() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    let serve = Serve::start(cache.path(), &out, &["serve.env_ttl_secs=3"]);
    let tasks = tasks();
    let (instance_id, gold) = &tasks[1];
    let created = serve.call("POST", "/v1/envs", Some(&json!({"task_id": instance_id})));
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.body["id"].as_str().unwrap().to_owned();
    let messages = created.body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("file_editor")
    );
    assert_eq!(messages[1]["role"], "user");
    assert_eq!(created.body["format"], "xml");
    assert!(created.body["tool_specs"].as_array().unwrap().len() >= 3);
    assert_eq!(entries(&cache.path().join("workspaces")).len(), 1);

    // A structured call: write the gold patch, then apply it in the sandbox.
    let step = |body: Value| serve.call("POST", &format!("/v1/envs/{id}/step"), Some(&body));
    let write = step(json!({"call": {"name": "file_editor", "arguments": {
        "command": "create", "path": "/testbed/gold.diff", "file_text": gold}}}));
    assert_eq!(write.status, 200, "{}", write.body);
    assert_eq!(write.body["done"], false);
    // A raw reply, parsed with the configured format.
    let apply = step(
        json!({"text": "Apply it.\n<function=execute_bash><parameter=command>git -C /testbed apply /testbed/gold.diff && rm /testbed/gold.diff && echo applied</parameter></function>"}),
    );
    assert_eq!(apply.status, 200, "{}", apply.body);
    assert!(
        apply.body["observation"]
            .as_str()
            .unwrap()
            .contains("applied"),
        "{}",
        apply.body
    );
    assert_eq!(apply.body["call"]["name"], "execute_bash");
    assert_eq!(apply.body["message"]["role"], "user");
    let garbled = step(json!({"text": "I am not sure what to do."}));
    assert_eq!(garbled.status, 200);
    assert!(garbled.body["format_error"].is_string(), "{}", garbled.body);
    let both = step(json!({"text": "x", "call": {"name": "finish"}}));
    assert_eq!(both.status, 400);
    assert_eq!(both.body["error"]["field"], "call");

    let graded = serve.call("POST", &format!("/v1/envs/{id}/evaluate"), None);
    assert_eq!(graded.status, 200, "{}", graded.body);
    assert_eq!(graded.body["reward"], 1.0, "{}", graded.body["report"]);
    assert_eq!(graded.body["resolved"], true);

    let finish = step(json!({"call": {"name": "finish", "arguments": {"command": "submit"}}}));
    assert_eq!(finish.body["done"], true, "{}", finish.body);
    assert_eq!(step(json!({"text": "more"})).status, 409);
    let deleted = serve.call("DELETE", &format!("/v1/envs/{id}"), None);
    assert_eq!(deleted.status, 200);
    assert_eq!(step(json!({"text": "more"})).status, 404);
    assert_nothing_left(cache.path(), &serve);

    // An environment nobody uses expires with its sandbox.
    let idle = serve.call(
        "POST",
        "/v1/envs",
        Some(&json!({"task_id": instance_id, "session_id": "idle-1"})),
    );
    assert_eq!(idle.status, 200, "{}", idle.body);
    assert_eq!(entries(&cache.path().join("workspaces")).len(), 1);
    std::thread::sleep(Duration::from_secs(4));
    assert_nothing_left(cache.path(), &serve);
    let gone = serve.call("POST", "/v1/envs/idle-1/step", Some(&json!({"text": "x"})));
    assert_eq!(gone.status, 404);
}

#[test]
fn the_openrlhf_reward_endpoint_grades_the_patch_in_each_response() {
    let cache = tempfile::tempdir().unwrap();
    let serve = Serve::start(cache.path(), &cache.path().join("serve"), &[]);
    let tasks = tasks();
    let (first, gold) = &tasks[0];
    let (second, _) = &tasks[2];
    let prompt = "Fix the bug.\n";
    let request = json!({
        "query": [
            format!("{prompt}Here is my fix:\n```diff\n{gold}```\n"),
            format!("{prompt}I could not find it."),
            // The prompt is not the query's start: its diff is not graded.
            format!("Fix the bug!\n```diff\n{gold}```\n"),
        ],
        "prompts": [prompt, prompt, prompt],
        "labels": [first, second, first],
    });
    let path = format!("/v1/reward?access_token={}", common::SERVE_TOKEN);
    let answer = http(&serve.address, "POST", &path, None, Some(&request));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["rewards"], json!([1.0, 0.0, 0.0]));
    assert_eq!(
        answer.body["extra_logs"]["patch_found"],
        json!([1.0, 0.0, 0.0])
    );
    assert_eq!(
        answer.body["extra_logs"]["prompt_mismatch"],
        json!([0.0, 0.0, 1.0])
    );
    assert_eq!(
        answer.body["extra_logs"]["no_reward"],
        json!([0.0, 0.0, 0.0])
    );
    assert_nothing_left(cache.path(), &serve);
}

/// Starts a service with `serve.shutdown_grace_secs = grace`, sends it a rollout of
/// `instance_id` against `model` and stops it (SIGTERM) once the model has been asked; checks
/// the service exits cleanly and leaves no workspace. The rollout's answer and the service's
/// `shutdown.json`.
fn shut_down_during_a_rollout(
    instance_id: &str,
    model: &DemoServer,
    grace: &str,
) -> (common::Answer, Value) {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    let grace = format!("serve.shutdown_grace_secs={grace}");
    let mut serve = Serve::start(cache.path(), &out, &[&grace]);
    let address = serve.address.clone();
    let request = rollout_request(instance_id, 0, &model.url, false);
    let client = std::thread::spawn(move || {
        http(
            &address,
            "POST",
            "/v1/rollouts",
            Some(common::SERVE_TOKEN),
            Some(&request),
        )
    });
    assert!(eventually(Duration::from_secs(60), || model.requests() > 0));
    let (status, stderr) = serve.stop();
    assert!(status.success(), "{stderr}");
    let answer = client.join().unwrap();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("shutdown.json")).unwrap()).unwrap();
    assert!(entries(&cache.path().join("workspaces")).is_empty());
    (answer, record)
}

#[test]
fn shutdown_finishes_in_flight_rollouts_within_the_grace_period_or_records_them() {
    let tasks = tasks();
    let (instance_id, _) = &tasks[0];
    // Within the grace period: the rollout finishes and is answered.
    let model = common::start(Behaviour::Good, Duration::from_millis(300));
    let (answer, record) = shut_down_during_a_rollout(instance_id, &model, "60");
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["exit_reason"], "submitted");
    assert_eq!(record["finished_within_grace"], true, "{record}");

    // Past the grace period: the rollout is cancelled, its sandbox destroyed, and recorded.
    let silent = common::start(Behaviour::Silent, Duration::ZERO);
    let (answer, record) = shut_down_during_a_rollout(instance_id, &silent, "0.5");
    assert_eq!(answer.status, 503, "{}", answer.body);
    assert_eq!(record["finished_within_grace"], false);
    assert_eq!(
        record["interrupted_rollouts"],
        json!([format!("{instance_id}__0")])
    );
}

#[test]
fn python_shims_drive_a_live_service() {
    let has_requests = std::process::Command::new("python3")
        .args(["-c", "import requests"])
        .status()
        .is_ok_and(|status| status.success());
    if !has_requests {
        assert!(
            std::env::var_os("SWERVE_REQUIRE_PYTHON_REQUESTS").is_none(),
            "python3 has no `requests` and SWERVE_REQUIRE_PYTHON_REQUESTS is set: run \
             scripts/prerequisites.sh"
        );
        eprintln!("skipped: python3 with `requests` is not installed (scripts/prerequisites.sh)");
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let (url, _) = token_model();
    let serve = Serve::start(cache.path(), &cache.path().join("serve"), &[]);
    let (instance_id, _) = &tasks()[0];
    let output = std::process::Command::new("python3")
        .arg(common::root().join("examples/trainers/smoke_test.py"))
        .args([
            &format!("http://{}", serve.address),
            &url,
            "demo-model",
            instance_id,
        ])
        .env("SWERVE_SERVE_TOKEN", common::SERVE_TOKEN)
        .output()
        .unwrap();
    let printed = stdout(&output);
    assert!(output.status.success(), "{printed}{}", stderr(&output));
    assert!(printed.contains("smoke test passed"), "{printed}");
    assert_nothing_left(cache.path(), &serve);
}

/// SWE-AGILE's compression-aware reward (paper Eq. 4) in the rollout service: with
/// `reward.compression_weight` and the model's tokenizer, a resolved rollout's reward is
/// 1 + β · min(rate, γ), its rate measured with the tokenizer as the rollout ends.
#[test]
fn a_resolved_rollout_carries_the_compression_bonus() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("serve");
    let demo = common::start_with(Behaviour::Good, Duration::ZERO, common::Replies::Agile);
    let tokenizer = format!(
        "reward.tokenizer={}",
        tokenizers::model_dir("llama3_1").display()
    );
    let serve = Serve::start(
        cache.path(),
        &out,
        &[
            "run.format=\"xml_last\"",
            "agent.reasoning.window=1",
            "agent.reasoning.required=true",
            "agent.reasoning.send=\"inline\"",
            "reward.compression_weight=0.2",
            &tokenizer,
        ],
    );
    let request = rollout_request("swerve-examples__calc-1", 0, &demo.url, true);
    let answer = serve.call("POST", "/v1/rollouts", Some(&request));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let outcome = answer.body["trajectory"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(outcome["reward"], 1.0, "{outcome}");
    let rate = outcome["extra"]["compression_reward"]["compression_rate"]
        .as_f64()
        .unwrap();
    assert!(rate > 0.0, "{outcome}");
    let expected = 1.0 + 0.2 * rate.min(0.55);
    assert_eq!(answer.body["reward"].as_f64(), Some(expected));
    let bonus = answer.body["reward_parts"]["compression_bonus"]
        .as_f64()
        .unwrap();
    assert!((bonus - 0.2 * rate.min(0.55)).abs() < 1e-12, "{bonus}");
    assert_nothing_left(cache.path(), &serve);
}

/// SWE-Edit's normalized-match reward as a service endpoint for editor RL (§3.2): one reward
/// per reply; the format policy from the request, else the service's `edit.format`.
#[test]
fn the_edit_reward_endpoint_scores_editor_replies() {
    let cache = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        cache.path(),
        &cache.path().join("serve"),
        &["edit.format=\"find-replace\""],
    );
    let original = "def f(x):\n    return x * 2\n";
    let target = "def f(x):\n    return x * 3\n";
    let targeted =
        "<<<<<<< SEARCH\n    return x * 2\n=======\n    return x * 3  # tripled\n>>>>>>> REPLACE\n";
    let rewrite = format!("<<<<<<< SEARCH\n=======\n{target}>>>>>>> REPLACE\n");
    let body = json!({
        "original": original,
        "target": target,
        "responses": [targeted, rewrite, "no blocks here"],
    });
    let answer = serve.call("POST", "/v1/edit/reward", Some(&body));
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["format"], "find-replace");
    assert_eq!(answer.body["rewards"], json!([1.0, 0.0, 0.0]));
    assert_eq!(answer.body["details"][1]["status"], "format_error");
    let mut adaptive = body.clone();
    adaptive["format"] = json!("adaptive");
    let answer = serve.call("POST", "/v1/edit/reward", Some(&adaptive));
    assert_eq!(answer.body["rewards"], json!([1.0, 1.0, 0.0]));
    let mut bad = body;
    bad["responses"] = json!([]);
    let answer = serve.call("POST", "/v1/edit/reward", Some(&bad));
    assert_eq!(answer.status, 400);
    assert!(
        answer.error_message().contains("at least one reply"),
        "{}",
        answer.body
    );
}
