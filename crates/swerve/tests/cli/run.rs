//! `swerve run` end to end: replayed demonstrations, a served model on loopback HTTP with
//! faults, resuming, and a `kill -9` in the middle of a run.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Behaviour, RunArgs, examples, json_lines, root, stderr, stdout, succeeded, swerve};
use serde_json::Value;
use swerve_rollout::config::Config;
use swerve_rollout::demo;
use swerve_rollout::open;

fn predictions(out: &Path) -> Vec<Value> {
    json_lines(&out.join("preds.jsonl"))
}

#[test]
fn replaying_every_demonstration_reproduces_its_patch_byte_for_byte() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    succeeded(&RunArgs::new(&out).model("replay").run(cache.path()));
    let config = Config {
        cache_dir: Some(cache.path().to_path_buf()),
        ..Config::default()
    };
    let tasks = open::tasks(&examples()).unwrap();
    let predicted = predictions(&out);
    assert_eq!(predicted.len(), tasks.len());
    for task in &tasks {
        let demonstration = swerve_core::demonstration::Demonstration::load(
            &root().join(format!("examples/demos/{}.json", task.instance_id)),
        )
        .unwrap();
        let direct = demo::replay(&config, &examples(), task, &demonstration)
            .unwrap()
            .patch;
        let prediction = predicted
            .iter()
            .find(|p| p["instance_id"] == task.instance_id.as_str())
            .unwrap();
        assert_eq!(
            prediction["model_patch"].as_str().unwrap(),
            direct,
            "{}",
            task.instance_id
        );
        let lines = json_lines(&out.join(format!("trajectories/{}__0.jsonl", task.instance_id)));
        assert_eq!(
            lines.len(),
            demonstration.calls.len() + 2,
            "{}: header, one line per call, outcome",
            task.instance_id
        );
        assert_eq!(lines.last().unwrap()["exit_reason"], "submitted");
    }
}

#[test]
fn runs_resume_where_they_stopped_and_redo_on_request() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let args = RunArgs::new(&out).args([
        "--samples",
        "2",
        "swerve-examples__calc-1",
        "swerve-examples__spans-1",
    ]);
    assert!(args.run(cache.path()).status.success());
    let again = args.run(cache.path());
    assert!(
        stderr(&again).starts_with("0 rollouts to run, 4 already finished"),
        "{}",
        stderr(&again)
    );
    // Cut one trajectory before its outcome, as a crash would.
    let path = out.join("trajectories/swerve-examples__calc-1__1.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = text.trim_end().rsplit_once('\n').unwrap().0;
    std::fs::write(&path, format!("{cut}\n")).unwrap();
    let resumed = args.run(cache.path());
    assert!(
        stderr(&resumed).starts_with("1 rollouts to run, 3 already finished"),
        "{}",
        stderr(&resumed)
    );
    assert_eq!(
        json_lines(&path).last().unwrap()["exit_reason"],
        "submitted"
    );
    let redo = args.args(["--redo"]);
    assert!(stderr(&redo.run(cache.path())).starts_with("4 rollouts to run"));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["rollouts"], 4);
    assert_eq!(summary["submitted"], 4);
}

#[test]
fn a_served_model_solves_tasks_through_loopback_http_despite_a_server_error() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::FirstFails, Duration::ZERO);
    let out = cache.path().join("run");
    let output = RunArgs::new(&out)
        .served("demo-model", &server.url)
        .args(["swerve-examples__calc-1", "swerve-examples__pager-1"])
        .run(cache.path());
    succeeded(&output);
    let eval = cache.path().join("eval");
    let graded = swerve(
        cache.path(),
        &[
            "eval",
            "--tasks",
            examples().to_str().unwrap(),
            "--predictions",
            out.join("preds.jsonl").to_str().unwrap(),
            "--out",
            eval.to_str().unwrap(),
            "swerve-examples__calc-1",
            "swerve-examples__pager-1",
        ],
    );
    assert!(
        stdout(&graded).starts_with("2/2 resolved"),
        "{}",
        stdout(&graded)
    );
    let lines = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"));
    assert_eq!(lines[1]["usage"]["prompt_tokens"], 100);
    assert_eq!(lines[0]["config"]["model"]["name"], "demo-model");
}

#[test]
fn model_failures_end_rollouts_with_the_right_reason_and_never_hang() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::BadRequest, Duration::ZERO);
    let out = cache.path().join("bad");
    let started = Instant::now();
    let output = RunArgs::new(&out)
        .served("m", &server.url)
        .args(["swerve-examples__calc-1"])
        .run(cache.path());
    succeeded(&output);
    let outcome = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"))
        .pop()
        .unwrap();
    assert_eq!(outcome["exit_reason"], "model_error");
    assert!(
        outcome["exit_detail"].as_str().unwrap().contains("400"),
        "{outcome}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_server_that_stops_answering_times_out() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::Silent, Duration::ZERO);
    let out = cache.path().join("silent");
    let started = Instant::now();
    let output = RunArgs::new(&out)
        .served("m", &server.url)
        .args(["--request-timeout", "1", "--max-retries", "1"])
        .args(["swerve-examples__calc-1"])
        .run(cache.path());
    succeeded(&output);
    let outcome = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"))
        .pop()
        .unwrap();
    assert_eq!(outcome["exit_reason"], "model_error");
    assert!(
        outcome["exit_detail"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{outcome}"
    );
    assert_eq!(server.requests(), 2, "one request and one retry");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_run_killed_with_sigkill_resumes_and_completes() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::Good, Duration::from_millis(150));
    let out = cache.path().join("run");
    let args = RunArgs::new(&out)
        .served("demo-model", &server.url)
        .args(["--concurrency", "2"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(args.strs())
        .env("SWERVE_CACHE_DIR", cache.path())
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().unwrap();
    child.wait().unwrap();
    let finished_before = std::fs::read_dir(out.join("trajectories"))
        .unwrap()
        .flatten()
        .filter(|entry| {
            json_lines(&entry.path())
                .last()
                .is_some_and(|line| line["type"] == "outcome")
        })
        .count();
    let tasks = open::tasks(&examples()).unwrap();
    assert!(
        finished_before < tasks.len(),
        "the run finished before it was killed; slow the server down"
    );
    let resumed = args.run(cache.path());
    succeeded(&resumed);
    assert!(stderr(&resumed).contains(&format!("{finished_before} already finished")));
    assert_eq!(predictions(&out).len(), tasks.len());
    for task in &tasks {
        let lines = json_lines(&out.join(format!("trajectories/{}__0.jsonl", task.instance_id)));
        let last = lines.last().unwrap();
        assert_eq!(
            last["exit_reason"],
            "submitted",
            "{}: {last}
steps: {}",
            task.instance_id,
            lines.len()
        );
    }
    assert_eq!(
        std::fs::read_dir(cache.path().join("workspaces"))
            .map(|d| d.count())
            .unwrap_or(0),
        0,
        "no workspace left behind"
    );
}
