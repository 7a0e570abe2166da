//! `swerve run --env world` end to end: the demonstration's edits and reads run in the real
//! sandbox, its Python runs are answered by a transition model on loopback, and unusable
//! predictions show as failure observations without ending the rollout.

mod common;

use std::time::Duration;

use common::{Behaviour, examples, swerve, trajectory_lines};

/// Runs the calc task in the world environment against a transition model answering
/// `prediction`; returns the trajectory's lines and the transition model's requests.
fn run_world(prediction: &'static str) -> (Vec<serde_json::Value>, Vec<common::Received>) {
    let cache = tempfile::tempdir().unwrap();
    let agent = common::start(Behaviour::Good, Duration::ZERO);
    let (transition_url, received) = common::start_answering(move |_| prediction.to_owned());
    let out = cache.path().join("run");
    let name = "world.transition_model.name=swt-model".to_owned();
    let base_url = format!("world.transition_model.base_url={transition_url}");
    let output = swerve(
        cache.path(),
        &[
            "run",
            "--tasks",
            examples().to_str().unwrap(),
            "--model",
            "demo-model",
            "--base-url",
            &agent.url,
            "--env",
            "world",
            "--set",
            &name,
            "--set",
            &base_url,
            "--out",
            out.to_str().unwrap(),
            "swerve-examples__calc-1",
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = trajectory_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"));
    let requests = received.lock().unwrap().clone();
    (lines, requests)
}

#[test]
fn python_runs_are_predicted_and_everything_else_runs_for_real() {
    let (lines, requests) =
        run_world(r#"{"stdout": "predicted output", "stderr": "", "exit_code": 0}"#);
    let outcome = lines.last().unwrap();
    assert_eq!(outcome["exit_reason"], "submitted", "{outcome}");
    // The demonstration's edits ran for real: its patch is the demonstration's.
    assert!(
        outcome["patch"]
            .as_str()
            .unwrap()
            .contains("calc/parser.py")
    );
    let world = &outcome["extra"]["world"];
    assert_eq!(world["routed"]["simulated"], 3, "{world}");
    assert_eq!(world["failures"], 0);
    assert_eq!(requests.len(), 3);
    let steps: Vec<&serde_json::Value> =
        lines.iter().filter(|line| line["type"] == "step").collect();
    let bash_steps: Vec<&&serde_json::Value> = steps
        .iter()
        .filter(|step| step["tool_call"]["name"] == "execute_bash")
        .collect();
    for step in &bash_steps {
        assert!(
            step["observation"]
                .as_str()
                .unwrap()
                .contains("predicted output"),
            "{step}"
        );
    }
    // The last prediction was asked with the agent's patch and the command in its context.
    let last = requests.last().unwrap().body["messages"].to_string();
    assert!(last.contains("python3 -m unittest -v"), "{last}");
    assert!(last.contains("diff --git a/calc/parser.py"), "{last}");
}

#[test]
fn unusable_predictions_become_failure_observations() {
    let (lines, requests) = run_world("I cannot predict that.");
    let outcome = lines.last().unwrap();
    assert_eq!(outcome["exit_reason"], "submitted", "{outcome}");
    assert_eq!(outcome["extra"]["world"]["failures"], 3);
    assert_eq!(requests.len(), 3);
    let failed = lines
        .iter()
        .filter(|line| {
            line["observation"]
                .as_str()
                .is_some_and(|text| text.contains("Failed to get environment feedback!"))
        })
        .count();
    assert_eq!(failed, 3);
}
