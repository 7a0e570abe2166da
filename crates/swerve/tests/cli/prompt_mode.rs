//! Prompt-rendered mode end to end: `model.mode = "completions"` with a real model directory
//! (Qwen3's tokenizer and chat template, fetched by `scripts/fetch-tokenizers.sh`). Every
//! request is a raw completion whose prompt is exactly the chat template's rendering of the
//! messages the trajectory says were sent.

use crate::common;
use crate::tokenizers;

use std::time::Duration;

use common::{Behaviour, RunArgs, stderr, succeeded};
use swerve_chat::RenderOptions;
use swerve_core::trajectory::read_trajectory;

#[test]
fn each_prompt_is_the_chat_template_rendering_of_the_messages_sent() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::Good, Duration::ZERO);
    let out = cache.path().join("run");
    let dir = tokenizers::model_dir("qwen3");
    let tokenizer = format!("run.tokenizer={}", dir.display());
    let output = RunArgs::new(&out)
        .served("demo-model", &server.url)
        .set("model.mode=completions")
        .set(&tokenizer)
        .args(["swerve-examples__calc-1"])
        .run(cache.path());
    succeeded(&output);
    let trajectory = read_trajectory(out.join("trajectories/swerve-examples__calc-1__0.jsonl"))
        .unwrap()
        .trajectory;
    assert_eq!(
        trajectory.outcome.as_ref().unwrap().exit_reason.as_str(),
        "submitted"
    );
    let received = server.received.lock().unwrap().clone();
    assert_eq!(received.len(), trajectory.steps.len());
    let model = tokenizers::model("qwen3");
    let options = RenderOptions::default().generation_prompt(true);
    for (step, request) in received.iter().enumerate() {
        assert_eq!(request.path, "/v1/completions");
        let sent = trajectory.messages_sent(step).unwrap();
        let expected = model.render(&sent, &options).unwrap();
        assert_eq!(
            request.body["prompt"].as_str().unwrap(),
            expected,
            "step {step}"
        );
        assert!(expected.ends_with("<|im_start|>assistant\n"));
    }
}

#[test]
fn prompt_mode_without_a_tokenizer_or_with_native_calls_is_refused() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let base = RunArgs::new(&out)
        .served("m", "http://127.0.0.1:9/v1")
        .set("model.mode=completions");
    let output = base.run(cache.path());
    assert!(!output.status.success());
    assert!(stderr(&output).contains("run.tokenizer"));
    swerve_testing::assert_cmd_snapshot!("error_prompt_mode_needs_a_tokenizer", output);
    let tokenizer = format!("run.tokenizer={}", tokenizers::model_dir("qwen3").display());
    let native = base.set(&tokenizer).args(["--format", "native"]);
    let output = native.run(cache.path());
    assert!(!output.status.success());
    assert!(stderr(&output).contains("native tool-call format"));
    swerve_testing::assert_cmd_snapshot!("error_prompt_mode_with_native_calls", output);
}
