//! `swerve run --model embedded` end to end: the real default model (SmolLM2-135M-Instruct,
//! in-process on the CPU) drives a rollout of a bundled task, with no server and no key.
//! Skipped with a message when the model file is absent (scripts/fetch-model.sh fetches it;
//! scripts/test.sh sets SWERVE_REQUIRE_EMBEDDED_MODEL so CI never skips it).
#![cfg(feature = "embedded")]

mod common;

use common::{examples, swerve, trajectory_lines};

#[test]
fn the_embedded_model_drives_a_rollout_end_to_end() {
    let path = swerve_embedded::default_model_path();
    if !path.is_file() {
        assert!(
            std::env::var_os("SWERVE_REQUIRE_EMBEDDED_MODEL").is_none(),
            "SWERVE_REQUIRE_EMBEDDED_MODEL is set but {} is missing: run scripts/fetch-model.sh",
            path.display()
        );
        eprintln!(
            "skipping: the embedded model {} is absent; run scripts/fetch-model.sh",
            path.display()
        );
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let id = "swerve-examples__calc-1";
    let output = swerve(
        cache.path(),
        &[
            "run",
            "--tasks",
            examples().to_str().unwrap(),
            "--model",
            "embedded",
            "--max-steps",
            "2",
            "--set",
            "model.sampling.seed=1",
            "--set",
            "model.sampling.max_tokens=48",
            "--out",
            out.to_str().unwrap(),
            id,
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("embedded model: "), "{stderr}");
    let lines = trajectory_lines(&out.join(format!("trajectories/{id}__0.jsonl")));
    let steps: Vec<_> = lines.iter().filter(|line| line["type"] == "step").collect();
    assert!(!steps.is_empty(), "{lines:?}");
    for step in &steps {
        assert!(
            step["usage"]["prompt_tokens"].as_u64().unwrap() > 100,
            "{step}"
        );
        assert!(
            step["usage"]["completion_tokens"].as_u64().unwrap() >= 1,
            "{step}"
        );
    }
    let outcome = lines.last().unwrap();
    assert_eq!(outcome["type"], "outcome", "{outcome}");
    // The tiny model rarely solves anything; the rollout ends by one of the agent's rules.
    let reason = outcome["exit_reason"].as_str().unwrap();
    assert!(
        [
            "max_steps",
            "format_errors",
            "submitted",
            "repeating",
            "context_limit"
        ]
        .contains(&reason),
        "{outcome}"
    );
    // A model mistake never ends a rollout as a model error.
    assert_ne!(reason, "model_error");
    let predictions = trajectory_lines(&out.join("preds.jsonl"));
    assert_eq!(predictions.len(), 1);
    assert_eq!(predictions[0]["instance_id"], id);

    // --model embedded with a base URL is refused before anything runs, naming both.
    let output = swerve(
        cache.path(),
        &[
            "run",
            "--tasks",
            examples().to_str().unwrap(),
            "--model",
            "embedded",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            out.to_str().unwrap(),
            id,
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("model.base_url") && stderr.contains("embedded"),
        "{stderr}"
    );
}
