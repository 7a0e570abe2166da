//! `--tasks` as users have datasets: hub datasets through a loopback hub and the Hugging Face
//! cache, with mini-swe-agent's selection options (Parquet fixtures written by `datasets`,
//! crates/swerve-datasets/tests/fixtures).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use swerve_testing::HubServer;

use crate::common::{failed, json_lines, root, start_answering, succeeded};

fn hub_root() -> PathBuf {
    root().join("crates/swerve-datasets/tests/fixtures/hub")
}

/// swerve with a private cache, `HF_HOME` and hub endpoint.
fn swerve_hf(cache: &Path, hf_home: &Path, endpoint: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(args)
        .env("SWERVE_CACHE_DIR", cache)
        .env("HF_HOME", hf_home)
        .env("HF_ENDPOINT", endpoint)
        .env_remove("HF_HUB_CACHE")
        .env_remove("HF_TOKEN")
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("RUST_LOG")
        .current_dir(root())
        .output()
        .unwrap()
}

fn ids(file: &Path) -> Vec<String> {
    json_lines(file)
        .iter()
        .map(|task| task["instance_id"].as_str().unwrap().to_owned())
        .collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn dead_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// The ids of the rollouts a run's `summary.json` lists as failed, with their errors.
fn failed_rollouts(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(summary["expected"], 5, "{summary}");
    summary["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|failed| {
            (
                failed["id"].as_str().unwrap().to_owned(),
                failed["error"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Asserts that the run in `out` ran a rollout of each of `tasks`, and of nothing else:
/// each started and stopped at its base checkout, since the real SWE-bench repositories are
/// not here offline (no `--repos`), each with the error naming its task and repository.
fn assert_rollouts_of(out: &Path, tasks: &[swerve_core::Task]) {
    let mut failed = failed_rollouts(out);
    failed.sort();
    let mut expected: Vec<(String, String)> = tasks
        .iter()
        .map(|task| {
            (
                format!("{}__0", task.instance_id),
                format!(
                    "task {}: preparing the base checkout: repository \"{}\" not found",
                    task.instance_id, task.repo
                ),
            )
        })
        .collect();
    expected.sort();
    assert_eq!(failed.len(), expected.len(), "{failed:?}");
    for ((id, error), (expected_id, expected_error)) in failed.iter().zip(&expected) {
        assert_eq!(id, expected_id);
        assert!(error.starts_with(expected_error.as_str()), "{id}: {error}");
        let log = std::fs::read_to_string(out.join(format!("logs/{id}.log"))).unwrap();
        assert!(log.contains("rollout started"), "{id}: {log}");
    }
}

#[test]
fn run_takes_the_first_five_of_swe_bench_verified_from_the_hub_and_then_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, hf_home) = (dir.path().join("cache"), dir.path().join("hf"));
    let verified = swerve_rollout::open::tasks(
        &hub_root().join("princeton-nlp/SWE-bench_Verified/data/test-00000-of-00001.parquet"),
    )
    .unwrap();
    let first_five = &verified[..5];
    let first_ids: Vec<String> = first_five.iter().map(|t| t.instance_id.clone()).collect();
    let hub = HubServer::serve(&hub_root(), None);
    // A served model (the loopback one), which can run any row; `--model replay` could not
    // run these, having no demonstrations of them (see the test below).
    let (model_url, _requests) = start_answering(|_| "submit".into());
    let out = dir.path().join("run");
    let args = |out: &Path| {
        vec![
            "run".to_owned(),
            "--tasks".into(),
            "hf://princeton-nlp/SWE-bench_Verified".into(),
            "--split".into(),
            "test".into(),
            "--slice".into(),
            "0:5".into(),
            "--model".into(),
            "gpt-4o".into(),
            "--base-url".into(),
            model_url.clone(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let first_args = args(&out);
    let output = swerve_hf(&cache, &hf_home, &hub.endpoint(), &strs(&first_args));
    let text = failed(&output);
    assert!(
        text.contains("5 tasks from hf://princeton-nlp/SWE-bench_Verified split test"),
        "{text}"
    );
    assert!(text.contains("5 rollouts to run"), "{text}");
    assert_eq!(ids(&out.join("tasks.jsonl")), first_ids);
    assert_rollouts_of(&out, first_five);
    assert!(
        hf_home
            .join("hub/datasets--princeton-nlp--SWE-bench_Verified/refs/main")
            .is_file()
    );

    // The hub is gone: the pre-filled cache serves the same run.
    drop(hub);
    let again = dir.path().join("again");
    let second_args = args(&again);
    let output = swerve_hf(&cache, &hf_home, &dead_endpoint(), &strs(&second_args));
    let text = failed(&output);
    assert!(
        text.contains("5 tasks from hf://princeton-nlp/SWE-bench_Verified split test"),
        "{text}"
    );
    assert_eq!(ids(&again.join("tasks.jsonl")), first_ids);
    assert_rollouts_of(&again, first_five);
}

#[test]
fn replay_refuses_hub_rows_without_demonstrations_before_any_rollout() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, hf_home) = (dir.path().join("cache"), dir.path().join("hf"));
    let hub = HubServer::serve(&hub_root(), None);
    let out = dir.path().join("run");
    let output = swerve_hf(
        &cache,
        &hf_home,
        &hub.endpoint(),
        &[
            "run",
            "--tasks",
            "hf://princeton-nlp/SWE-bench_Verified",
            "--split",
            "test",
            "--slice",
            "0:2",
            "--model",
            "replay",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = failed(&output);
    let chosen = ids(&out.join("tasks.jsonl"));
    assert_eq!(chosen.len(), 2);
    assert!(
        text.contains(&format!(
            "--model replay needs a demonstration <instance_id>.json in examples/demos for \
             every task; missing: {}",
            chosen.join(", ")
        )),
        "{text}"
    );
    assert!(!text.contains("rollouts to run"), "{text}");
    assert!(!out.join("logs").exists());
}

#[test]
fn a_hub_dataset_of_runnable_tasks_runs_to_the_demonstrations_patches() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, hf_home) = (dir.path().join("cache"), dir.path().join("hf"));
    let hub = HubServer::serve(&hub_root(), None);
    let out = dir.path().join("run");
    let repos = root().join("examples/repos");
    let output = swerve_hf(
        &cache,
        &hf_home,
        &hub.endpoint(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "run",
            "--tasks",
            "hf://swerve-examples/tasks",
            "--split",
            "test",
            "--filter",
            "swerve-examples__(calc|pager)",
            "--model",
            "replay",
            "--eval",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    succeeded(&output);
    let mut chosen = ids(&out.join("tasks.jsonl"));
    chosen.sort();
    assert_eq!(
        chosen,
        ["swerve-examples__calc-1", "swerve-examples__pager-1"]
    );
    let predictions = json_lines(&out.join("preds.jsonl"));
    assert_eq!(predictions.len(), 2);
    for id in &chosen {
        let lines = json_lines(&out.join(format!("trajectories/{id}__0.jsonl")));
        let outcome = lines.last().unwrap();
        assert_eq!(outcome["exit_reason"], "submitted", "{id}");
        assert_eq!(outcome["eval_report"]["resolved"], true, "{id}: {outcome}");
    }
    // Another choice in the same directory is refused, not written over the record.
    let refused = swerve_hf(
        &cache,
        &hf_home,
        &hub.endpoint(),
        &[
            "run",
            "--tasks",
            "hf://swerve-examples/tasks",
            "--split",
            "test",
            "--slice",
            "0:1",
            "--model",
            "replay",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let message = failed(&refused);
    assert!(message.contains("holds other tasks"), "{message}");
}
