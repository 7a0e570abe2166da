//! `swerve run --preset agile` and `--preset agile-upstream` end to end: a loopback model
//! answers every bundled task with its demonstration in SWE-AGILE's structure (reasoning,
//! digest, call). Every rollout submits, and each recorded request shows the reasoning of
//! only the last N turns, inline, while every digest stays: N = 1 with the upstream script's
//! settings, N drawn from 1..=4 per trajectory with the paper's.

use crate::common;

use std::time::Duration;

use common::{Behaviour, Replies, RunArgs, examples, succeeded};
use swerve_core::trajectory::{ExitReason, Role, read_trajectory};
use swerve_rollout::open;

#[test]
fn the_upstream_preset_keeps_the_last_turns_reasoning() {
    let windows = run_preset("agile-upstream", 100);
    assert!(windows.iter().all(|&n| n == 1), "{windows:?}");
}

#[test]
fn the_paper_preset_draws_a_window_of_2_to_5_steps_per_trajectory() {
    let windows = run_preset("agile", 60);
    assert!(windows.iter().all(|n| (1..=4).contains(n)), "{windows:?}");
    let mut distinct = windows.clone();
    distinct.sort();
    distinct.dedup();
    assert!(
        distinct.len() > 1,
        "one N for every trajectory: {windows:?}"
    );
}

/// Runs `preset` on every bundled task and checks each trajectory: submitted, `max_steps`
/// recorded, every request holding the reasoning of exactly the last N earlier turns
/// (inline) and every digest; the N of each trajectory, in task order.
fn run_preset(preset: &str, max_steps: u64) -> Vec<u64> {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start_with(Behaviour::Good, Duration::ZERO, Replies::Agile);
    let out = cache.path().join("run");
    let output = RunArgs::new(&out)
        .args(["--preset", preset])
        .served("demo-model", &server.url)
        .run(cache.path());
    succeeded(&output);
    let tasks = open::tasks(&examples()).unwrap();
    assert_eq!(tasks.len(), 8);
    let mut windows = Vec::new();
    for task in &tasks {
        let id = &task.instance_id;
        let path = out.join(format!("trajectories/{id}__0.jsonl"));
        let trajectory = read_trajectory(&path).unwrap().trajectory;
        let outcome = trajectory.outcome.as_ref().unwrap();
        assert_eq!(outcome.exit_reason, ExitReason::Submitted, "{id}");
        assert!(!outcome.patch.is_empty(), "{id}");

        let header = &trajectory.header;
        let window = header.extra["reasoning_window"].as_u64().unwrap();
        windows.push(window);
        assert_eq!(header.config["agent"]["max_steps"], max_steps, "{id}");
        let system = header.prompt[0].text();
        assert!(system.contains("---- BEGIN FUNCTION #1: file_editor ----"));
        assert!(system.contains("<reasoning_digest>\nA short record"));

        for (k, step) in trajectory.steps.iter().enumerate() {
            let name = &step.tool_call.as_ref().unwrap().name;
            assert_eq!(
                step.reasoning.as_deref(),
                Some(format!("reasoning of turn {k}: the next call is {name}.").as_str())
            );
            assert_eq!(
                step.digest.as_deref(),
                Some(format!("digest of turn {k}: calling {name}.").as_str())
            );
            let sent = trajectory.messages_sent(k).unwrap();
            let turns: Vec<_> = sent
                .iter()
                .filter(|message| message.role == Role::Assistant)
                .collect();
            assert_eq!(turns.len(), k, "{id} step {k}");
            for (j, turn) in turns.iter().enumerate() {
                let text = turn.text();
                let in_window = j + window as usize >= k;
                assert_eq!(turn.reasoning_content, None);
                assert_eq!(
                    text.starts_with("<think>\n"),
                    in_window,
                    "{id} step {k}: {text}"
                );
                assert_eq!(
                    text.contains(&format!("reasoning of turn {j}:")),
                    in_window,
                    "{id} step {k}: {text}"
                );
                assert!(
                    text.contains(&format!("<reasoning_digest>\ndigest of turn {j}:")),
                    "{id} step {k}: {text}"
                );
            }
        }
    }
    windows
}
