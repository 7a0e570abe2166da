//! `swerve run --preset agile` end to end: a loopback model answers every bundled task with
//! its demonstration in SWE-AGILE's structure (reasoning, digest, call). Every rollout
//! submits, and each recorded request shows only the last turn's reasoning, inline, while
//! every digest stays.

mod common;

use std::time::Duration;

use common::{Behaviour, Replies, RunArgs, examples, succeeded};
use swerve::open;
use swerve_core::trajectory::{ExitReason, Role, read_trajectory};

#[test]
fn the_agile_preset_submits_every_task_and_drops_reasoning_outside_the_window() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start_with(Behaviour::Good, Duration::ZERO, Replies::Agile);
    let out = cache.path().join("run");
    let output = RunArgs::new(&out)
        .args(["--preset", "agile"])
        .served("demo-model", &server.url)
        .run(cache.path());
    succeeded(&output);
    let tasks = open::tasks(&examples()).unwrap();
    assert_eq!(tasks.len(), 8);
    for task in &tasks {
        let id = &task.instance_id;
        let path = out.join(format!("trajectories/{id}__0.jsonl"));
        let trajectory = read_trajectory(&path).unwrap().trajectory;
        let outcome = trajectory.outcome.as_ref().unwrap();
        assert_eq!(outcome.exit_reason, ExitReason::Submitted, "{id}");
        assert!(!outcome.patch.is_empty(), "{id}");

        let header = &trajectory.header;
        assert_eq!(header.extra["reasoning_window"], 1, "{id}");
        assert_eq!(header.config["agent"]["reasoning"]["window"], 1);
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
                let in_window = j + 1 == k;
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
}
