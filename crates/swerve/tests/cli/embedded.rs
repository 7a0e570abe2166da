//! `swerve run --model embedded` end to end: the real default model (SmolLM2-135M-Instruct,
//! in-process on the CPU) drives a rollout of a bundled task, with no server and no key.
//! The embedded model also serves as SWE-Edit's editor subagent (`edit.editor.name =
//! "embedded"`) and as edit-bench's editor (`--editor embedded`).
//! Skipped with a message when the model file is absent (scripts/fetch-model.sh fetches it;
//! scripts/test.sh sets SWERVE_REQUIRE_EMBEDDED_MODEL so CI never skips it).
#![cfg(feature = "embedded")]

use crate::common;

use common::{RunArgs, json_lines, stderr, succeeded, swerve};

/// Whether the default model is there; a test without it is skipped with a message (and
/// fails when SWERVE_REQUIRE_EMBEDDED_MODEL is set).
pub fn model_present() -> bool {
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
        return false;
    }
    true
}

/// The bundled task the embedded model's rollouts run.
const CALC: &str = "swerve-examples__calc-1";

/// `swerve run --model embedded:PATH` (the default model's file named, seed 1, `max_tokens`
/// tokens a reply) on [`CALC`] with `extra` arguments: the cache (kept alive), the run
/// directory and the output.
fn run_calc(
    max_tokens: u32,
    extra: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, std::process::Output) {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let model = format!(
        "embedded:{}",
        swerve_embedded::default_model_path().display()
    );
    let output = RunArgs::new(&out)
        .model(&model)
        .args(extra)
        .set("model.sampling.seed=1")
        .set(&format!("model.sampling.max_tokens={max_tokens}"))
        .args([CALC])
        .run(cache.path());
    (cache, out, output)
}

#[test]
fn the_embedded_model_drives_a_rollout_end_to_end() {
    if !model_present() {
        return;
    }
    let (cache, out, output) = run_calc(48, &["--max-steps", "2"]);
    let id = CALC;
    let printed = stderr(&output);
    assert!(output.status.success(), "{printed}");
    assert!(printed.contains("embedded model: "), "{printed}");
    // `embedded:PATH` loaded the file it names.
    let path = swerve_embedded::default_model_path();
    assert!(
        printed.contains(&format!("({}, ", path.display())),
        "{printed}"
    );
    let lines = json_lines(&out.join(format!("trajectories/{id}__0.jsonl")));
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
    let predictions = json_lines(&out.join("preds.jsonl"));
    assert_eq!(predictions.len(), 1);
    assert_eq!(predictions[0]["instance_id"], id);

    // --model embedded with a base URL is refused before anything runs, naming both.
    let output = RunArgs::new(&out)
        .served("embedded", "http://127.0.0.1:9/v1")
        .args([id])
        .run(cache.path());
    let printed = stderr(&output);
    assert!(!output.status.success());
    assert!(
        printed.contains("model.base_url") && printed.contains("embedded"),
        "{printed}"
    );

    // --model embedded:PATH naming nothing is refused, naming the path and model.path.
    let missing = cache.path().join("no-such-model");
    let output = RunArgs::new(&out)
        .model(&format!("embedded:{}", missing.display()))
        .args([id])
        .run(cache.path());
    let printed = stderr(&output);
    assert!(!output.status.success());
    assert!(
        printed.contains(&missing.display().to_string()) && printed.contains("model.path"),
        "{printed}"
    );
}

#[test]
fn the_embedded_model_is_the_editor_subagent_of_a_run() {
    if !model_present() {
        return;
    }
    let (url, _) = common::edit::start(common::edit::Preset::Editor);
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let id = common::edit::FAILING_TASK;
    let output = RunArgs::new(&out)
        .args(["--preset", "edit-editor"])
        .served("main-model", &url)
        .set("edit.editor.name=embedded")
        .set("edit.editor.sampling.max_tokens=24")
        .set("edit.editor.sampling.seed=1")
        // search, view, bash, then the two edits that go to the editor.
        .args(["--max-steps", "5", id])
        .run(cache.path());
    let printed = stderr(&output);
    assert!(output.status.success(), "{printed}");
    assert!(printed.contains("embedded model: "), "{printed}");
    // `embedded:PATH` loaded the file it names.
    let path = swerve_embedded::default_model_path();
    assert!(
        printed.contains(&format!("({}, ", path.display())),
        "{printed}"
    );
    let lines = json_lines(&out.join(format!("trajectories/{id}__0.jsonl")));
    let editors: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|line| line["type"] == "step")
        .flat_map(|step| step["subagents"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(editors.len(), 2, "{lines:?}");
    for editor in editors {
        assert_eq!(editor["agent"], "editor");
        assert_eq!(editor["model"], "embedded");
        let usage = &editor["calls"][0]["usage"];
        assert!(usage["prompt_tokens"].as_u64().unwrap() > 100, "{editor}");
        assert!(
            usage["completion_tokens"].as_u64().unwrap() >= 1,
            "{editor}"
        );
        assert!(editor["status"].is_string(), "{editor}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["edit"]["totals"]["editor"]["calls"], 2, "{summary}");
}

#[test]
fn edit_bench_runs_the_embedded_model_as_its_editor() {
    if !model_present() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let data = cache.path().join("data.jsonl");
    let instance = serde_json::json!({
        "instance_id": "rename",
        "path": "a.py",
        "original": "def f(x):\n    return x\n",
        "target": "def g(x):\n    return x\n",
        "instruction": "Rename the function f to g.",
    });
    std::fs::write(&data, format!("{instance}\n")).unwrap();
    let out = cache.path().join("bench");
    let output = swerve(
        cache.path(),
        &[
            "edit-bench",
            "run",
            "--data",
            data.to_str().unwrap(),
            "--editor",
            "embedded",
            "--set",
            "edit.editor.sampling.max_tokens=48",
            "--set",
            "edit.editor.sampling.seed=1",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    succeeded(&output);
    let results = json_lines(&out.join("results.jsonl"));
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["instance_id"], "rename");
    assert!(results[0]["status"].is_string(), "{}", results[0]);
    assert!(results[0]["usage"]["prompt_tokens"].as_u64().unwrap() > 20);
}

/// With the embedded model as the agent, the compression bonus needs no tokenizer setting:
/// the model's own GGUF file counts (before, such a run was refused for want of
/// `reward.tokenizer`). The rollout runs and is graded; unresolved, it gets no bonus.
#[test]
fn the_embedded_model_counts_its_own_compression_rate() {
    if !model_present() {
        return;
    }
    let extra = ["--preset", "agile", "--max-steps", "1", "--eval"];
    let (_cache, out, output) = run_calc(
        16,
        &[&extra[..], &["--set", "reward.compression_weight=0.2"]].concat(),
    );
    let id = CALC;
    let printed = stderr(&output);
    assert!(output.status.success(), "{printed}");
    let lines = json_lines(&out.join(format!("trajectories/{id}__0.jsonl")));
    let outcome = lines.iter().find(|line| line["type"] == "outcome").unwrap();
    assert_eq!(outcome["reward"], 0.0, "{outcome}");
    assert!(outcome["extra"]["reward"].is_object(), "{outcome}");
    assert!(
        outcome["extra"].get("compression_reward").is_none(),
        "{outcome}"
    );
}
