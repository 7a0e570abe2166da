//! The importers on the real samples (copies of `shared/data/trajectories/`, kept in
//! `tests/fixtures/trajectories/`): no step lost, final patches byte for byte, and every
//! import survives a swerve write and read unchanged.

use std::fs;
use std::path::PathBuf;

use serde_json::Value;
use swerve_core::trajectory::import::{Format, detect, detect_and_import};
use swerve_core::trajectory::{
    ExitReason, Role, Trajectory, TrajectoryErrorKind, read_trajectory, write_trajectory,
};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/trajectories")
        .join(name)
}

/// The source document (the first line of a JSON-lines file).
fn source(name: &str) -> Value {
    let text = fs::read_to_string(fixture(name)).unwrap();
    match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(_) => serde_json::from_str(text.lines().next().unwrap()).unwrap(),
    }
}

/// Imports a fixture that holds one trajectory.
fn import(name: &str) -> Trajectory {
    let mut trajectories = detect_and_import(fixture(name)).unwrap();
    assert_eq!(trajectories.len(), 1);
    trajectories.remove(0)
}

/// Writes `trajectory` as a swerve file and reads it back.
fn assert_round_trips(trajectory: &Trajectory) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("imported.jsonl");
    write_trajectory(&path, trajectory).unwrap();
    let read = read_trajectory(&path).unwrap();
    assert_eq!(read.partial_line, None);
    assert_eq!(&read.trajectory, trajectory);
    assert_eq!(
        detect_and_import(&path).unwrap(),
        std::slice::from_ref(trajectory)
    );
}

#[test]
fn mini_swe_agent_sample() {
    let name = "mini-swe-agent.pytest-dev__pytest-7432.traj.json";
    let source = source(name);
    assert_eq!(detect(&source), Some(Format::MiniSweAgent));
    let trajectory = import(name);
    let messages = source["messages"].as_array().unwrap();
    let assistants = messages.iter().filter(|m| m["role"] == "assistant").count();
    assert_eq!(assistants, 35);
    assert_eq!(source["info"]["model_stats"]["api_calls"], 35);
    assert_eq!(trajectory.steps.len(), 35);

    let outcome = trajectory.outcome.as_ref().unwrap();
    assert_eq!(
        outcome.patch,
        source["info"]["submission"].as_str().unwrap()
    );
    assert_eq!(outcome.exit_reason, ExitReason::Submitted);
    assert_eq!(outcome.exit_detail.as_deref(), Some("Submitted"));
    assert_eq!(outcome.cost, Some(0.3601952000000001));
    assert_eq!(outcome.eval_report.as_ref().unwrap()["resolved"], true);
    assert_eq!(trajectory.header.instance_id, "pytest-dev__pytest-7432");
    assert_eq!(trajectory.header.config, source["info"]["config"]);
    assert_eq!(trajectory.header.prompt.len(), 2);

    // Step k is message 2 + 2k; its request is every message before it, exactly.
    for (index, step) in trajectory.steps.iter().enumerate() {
        let at = 2 + 2 * index;
        assert_eq!(step.index, index);
        assert_eq!(
            step.response_text,
            messages[at]["content"].as_str().unwrap()
        );
        assert_eq!(
            step.observation.as_deref(),
            messages[at + 1]["content"].as_str()
        );
        let sent = trajectory.messages_sent(index).unwrap();
        assert_eq!(sent.len(), at);
        for (message, original) in sent.iter().zip(messages) {
            assert_eq!(Some(message.text().as_str()), original["content"].as_str());
            assert_eq!(
                serde_json::to_value(message.role).unwrap(),
                original["role"]
            );
        }
        assert_eq!(
            step.usage.unwrap().prompt_tokens,
            messages[at]["extra"]["response"]["usage"]["prompt_tokens"]
        );
    }
    let first = &trajectory.steps[0];
    assert_eq!(first.tool_call.as_ref().unwrap().name, "bash");
    assert_eq!(first.call_text.as_deref(), Some("ls -F"));
    assert!(first.reasoning.as_ref().unwrap().starts_with("**Debugging"));
    assert_eq!(first.usage.unwrap().reasoning_tokens, 197);
    // The reply with two bash blocks is the one format error.
    let errors: Vec<usize> = trajectory
        .steps
        .iter()
        .filter(|step| step.format_error.is_some())
        .map(|step| step.index)
        .collect();
    assert_eq!(errors, [22]);
    assert!(trajectory.steps[22].tool_call.is_none());
    let last = trajectory.steps.last().unwrap();
    assert!(
        last.call_text
            .as_ref()
            .unwrap()
            .starts_with("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    );
    assert_eq!(last.observation.as_deref(), Some(outcome.patch.as_str()));
    let step_costs: f64 = trajectory.steps.iter().filter_map(|step| step.cost).sum();
    assert!((step_costs - 0.3601952).abs() < 1e-9);
    assert_round_trips(&trajectory);
}

#[test]
fn swe_agent_sample() {
    let name = "swe-agent.pydicom__pydicom-1458.traj";
    let source = source(name);
    assert_eq!(detect(&source), Some(Format::SweAgent));
    let trajectory = import(name);
    let entries = source["trajectory"].as_array().unwrap();
    assert_eq!(entries.len(), 12);
    assert_eq!(source["info"]["model_stats"]["api_calls"], 12);
    assert_eq!(trajectory.steps.len(), 12);

    let outcome = trajectory.outcome.as_ref().unwrap();
    assert_eq!(
        outcome.patch,
        source["info"]["submission"].as_str().unwrap()
    );
    assert!(outcome.patch.starts_with("\ndiff --git"));
    assert_eq!(outcome.exit_reason, ExitReason::Submitted);
    assert_eq!(outcome.usage.unwrap().prompt_tokens, 122612);
    assert_eq!(outcome.cost, Some(1.26719));
    // The instance comes from the file name (SWE-agent writes `<instance_id>.traj`).
    assert_eq!(
        trajectory.header.instance_id,
        "swe-agent.pydicom__pydicom-1458"
    );

    let history = source["history"].as_array().unwrap();
    assert_eq!(trajectory.header.prompt.len(), 3);
    for (index, (step, entry)) in trajectory.steps.iter().zip(entries).enumerate() {
        assert_eq!(step.response_text, entry["response"].as_str().unwrap());
        assert_eq!(step.call_text.as_deref(), entry["action"].as_str());
        assert_eq!(step.observation.as_deref(), entry["observation"].as_str());
        let tool_call = step.tool_call.as_ref().unwrap();
        assert_eq!(tool_call.name, "bash");
        assert_eq!(
            tool_call.text_arg("command").as_deref(),
            entry["action"].as_str()
        );
        assert_eq!(step.extra["state"], entry["state"]);
        // Without `query`, the request is the history before the step's reply.
        let sent = trajectory.messages_sent(index).unwrap();
        assert_eq!(sent.len(), 3 + 2 * index);
        for (message, original) in sent.iter().zip(history) {
            assert_eq!(Some(message.text().as_str()), original["content"].as_str());
        }
        assert_eq!(
            history[3 + 2 * index]["action"].as_str(),
            entry["action"].as_str()
        );
    }
    assert_eq!(
        trajectory.header.extra["imported_from"]["messages_sent"],
        "prefix of history; SWE-agent's history processors are not applied"
    );
    assert_round_trips(&trajectory);

    // Named as SWE-agent names it, the instance id is right.
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("pydicom__pydicom-1458.traj");
    fs::copy(fixture(name), &renamed).unwrap();
    let renamed = detect_and_import(&renamed).unwrap();
    assert_eq!(renamed[0].header.instance_id, "pydicom__pydicom-1458");
    assert_eq!(renamed[0].header.id, "swe-agent/pydicom__pydicom-1458");
}

#[test]
fn r2e_gym_sample() {
    let name = "r2e-gym.swe-rebench.jsonl";
    let source = source(name);
    assert_eq!(detect(&source), Some(Format::R2eGym));
    let trajectory = import(name);
    let entries = source["trajectory_steps"].as_array().unwrap();
    assert_eq!(entries.len(), 27);
    assert_eq!(entries.last().unwrap()["step_count"], 27);
    assert_eq!(trajectory.steps.len(), 27);

    let outcome = trajectory.outcome.as_ref().unwrap();
    assert_eq!(outcome.patch, source["output_patch"].as_str().unwrap());
    assert_eq!(outcome.exit_reason, ExitReason::Submitted);
    assert_eq!(outcome.exit_detail.as_deref(), Some("agent"));
    assert_eq!(outcome.reward, Some(1.0));
    let report = outcome.eval_report.as_ref().unwrap();
    assert_eq!(report["test_output"], source["test_output"]);
    assert_eq!(trajectory.header.instance_id, "fair-workflows__nanopub-140");
    assert_eq!(trajectory.header.config["agent_args"], source["agent_args"]);
    assert!(trajectory.header.config.get("output_patch").is_none());

    for (step, entry) in trajectory.steps.iter().zip(entries) {
        assert_eq!(step.index as u64, entry["step_idx"].as_u64().unwrap());
        assert_eq!(step.call_text.as_deref(), entry["action"].as_str());
        assert_eq!(step.observation.as_deref(), entry["observation"].as_str());
        assert!(step.tool_call.is_some());
        assert!(step.reasoning.is_some());
        assert_eq!(step.messages_sent, None);
        assert_eq!(
            step.usage.unwrap().completion_tokens,
            entry["token_usage_completion"]
        );
        assert_eq!(step.timings.model_seconds, entry["llm_exec_time"].as_f64());
        assert_eq!(step.timings.env_seconds, entry["env_exec_time"].as_f64());
    }
    let first = &trajectory.steps[0];
    let call = first.tool_call.as_ref().unwrap();
    assert_eq!(call.name, "execute_bash");
    assert_eq!(
        call.text_arg("command").as_deref(),
        Some("find /testbed -type f -name \"*.py\" | head -20")
    );
    assert!(
        first
            .reasoning
            .as_ref()
            .unwrap()
            .starts_with("Let me start")
    );
    assert_eq!(
        trajectory.steps[26].tool_call.as_ref().unwrap().name,
        "submit"
    );
    assert_round_trips(&trajectory);
}

#[test]
fn openhands_sample() {
    let name = "openhands.output.jsonl";
    let source = source(name);
    assert_eq!(detect(&source), Some(Format::OpenHands));
    let trajectory = import(name);
    let events = source["history"].as_array().unwrap();
    let replies: Vec<&Value> = events
        .iter()
        .filter(|event| event.get("tool_call_metadata").is_some() && event.get("action").is_some())
        .collect();
    assert_eq!(replies.len(), 23);
    assert_eq!(
        source["metrics"]["response_latencies"]
            .as_array()
            .unwrap()
            .len(),
        23
    );
    assert_eq!(trajectory.steps.len(), 23);

    let outcome = trajectory.outcome.as_ref().unwrap();
    assert_eq!(
        outcome.patch,
        source["test_result"]["git_patch"].as_str().unwrap()
    );
    assert_eq!(outcome.exit_reason, ExitReason::Submitted);
    assert_eq!(trajectory.header.instance_id, "ponylang__ponyc-4595");
    assert_eq!(trajectory.header.config, source["metadata"]);
    assert_eq!(trajectory.header.prompt[0].role, Role::System);
    assert_eq!(
        trajectory.header.prompt[1].text(),
        source["instruction"].as_str().unwrap()
    );

    let prompt_tokens: u64 = trajectory
        .steps
        .iter()
        .map(|s| s.usage.unwrap().prompt_tokens)
        .sum();
    assert_eq!(prompt_tokens, 565_158);
    assert_eq!(outcome.usage.unwrap().prompt_tokens, 565_158);
    for (step, event) in trajectory.steps.iter().zip(&replies) {
        let metadata = &event["tool_call_metadata"];
        assert_eq!(
            step.tool_call.as_ref().unwrap().name,
            metadata["function_name"].as_str().unwrap()
        );
        assert_eq!(step.extra["event_id"], event["id"]);
        assert!(step.timings.model_seconds.is_some());
    }
    let first = &trajectory.steps[0];
    assert_eq!(
        first
            .tool_call
            .as_ref()
            .unwrap()
            .text_arg("command")
            .as_deref(),
        Some("ls -l /workspace/ponylang__ponyc__0.1")
    );
    assert_eq!(first.observation.as_deref(), events[5]["content"].as_str());
    assert!((first.timings.env_seconds.unwrap() - 0.619637).abs() < 1e-6);
    assert_eq!(first.timings.model_seconds, Some(3.0569519996643066));
    let last = trajectory.steps.last().unwrap();
    assert_eq!(last.tool_call.as_ref().unwrap().name, "finish");
    assert_eq!(last.observation, None);
    assert_round_trips(&trajectory);
}

#[test]
fn unknown_and_broken_inputs_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = dir.path().join("unknown.json");
    fs::write(&unknown, r#"{"hello": "world"}"#).unwrap();
    let error = detect_and_import(&unknown).unwrap_err();
    assert!(matches!(error.kind(), TrajectoryErrorKind::UnknownFormat));

    // A broken second line of R2E-Gym JSON lines names the line.
    let lines = dir.path().join("r2e.jsonl");
    let first = fs::read_to_string(fixture("r2e-gym.swe-rebench.jsonl")).unwrap();
    fs::write(
        &lines,
        format!("{first}{{\"trajectory_steps\": [{{\"action\": 3}}]}}\n"),
    )
    .unwrap();
    assert_eq!(
        detect_and_import(&lines).unwrap_err().to_string(),
        format!(
            "{} line 2: field \"trajectory_steps[0].action\": expected a string, found a number",
            lines.display()
        )
    );
    fs::write(&lines, format!("{first}{{\"trajectory_steps\": \n")).unwrap();
    let error = detect_and_import(&lines).unwrap_err();
    assert_eq!(error.line(), Some(2));
    assert!(matches!(
        error.kind(),
        TrajectoryErrorKind::InvalidJson { .. }
    ));

    // A cut-off pretty-printed document is one JSON error, not a line-by-line one.
    let cut = dir.path().join("cut.traj.json");
    let text =
        fs::read_to_string(fixture("mini-swe-agent.pytest-dev__pytest-7432.traj.json")).unwrap();
    fs::write(&cut, &text[..text.len() / 2]).unwrap();
    assert!(matches!(
        detect_and_import(&cut).unwrap_err().kind(),
        TrajectoryErrorKind::InvalidJson { .. }
    ));

    let missing = detect_and_import(dir.path().join("missing.jsonl")).unwrap_err();
    assert!(matches!(missing.kind(), TrajectoryErrorKind::Read(_)));
}

/// SWE-Dev's RFT lines (SWE-AGILE's SFT source, §3.1): OpenHands CodeAct conversations with
/// `<function=…>` calls in the text and `EXECUTION RESULT of [NAME]:` observations.
#[test]
fn swe_dev_lines() {
    let name = "swe-dev.rft.jsonl";
    let source = source(name);
    assert_eq!(detect(&source), Some(Format::SweDev));
    let trajectories = detect_and_import(fixture(name)).unwrap();
    assert_eq!(trajectories.len(), 2);

    let solved = &trajectories[0];
    assert_eq!(
        solved.header.id,
        "swe-dev/marshmallow-code__marshmallow-1359_2"
    );
    assert_eq!(
        solved.header.instance_id,
        "marshmallow-code__marshmallow-1359"
    );
    assert_eq!(solved.header.extra["imported_from"]["format"], "swe-dev");
    assert_eq!(solved.header.extra["model"], "claude-3-5-sonnet");
    assert_eq!(solved.header.prompt.len(), 2);
    assert_eq!(solved.header.prompt[0].role, Role::System);
    assert_eq!(solved.steps.len(), 3);
    let edit = solved.steps[1].tool_call.as_ref().unwrap();
    assert_eq!(edit.name, "str_replace_editor");
    assert_eq!(edit.text_arg("command").as_deref(), Some("str_replace"));
    assert_eq!(
        edit.text_arg("new_str").as_deref(),
        Some("precision = 'microseconds'")
    );
    assert!(
        solved.steps[0]
            .observation
            .as_deref()
            .unwrap()
            .starts_with("EXECUTION RESULT of [execute_bash]:\n__init__.py")
    );
    // Each request is every message before its reply.
    assert_eq!(solved.messages_sent(2).unwrap().len(), 6);
    let outcome = solved.outcome.as_ref().unwrap();
    assert_eq!(outcome.exit_reason, ExitReason::Submitted);
    assert_eq!(outcome.patch, source["patch"].as_str().unwrap());
    assert_eq!(outcome.reward, Some(1.0));
    assert_eq!(outcome.eval_report.as_ref().unwrap()["resolved"], true);
    assert_round_trips(solved);

    let unfinished = &trajectories[1];
    assert_eq!(
        unfinished.header.id,
        "swe-dev/marshmallow-code__marshmallow-1359"
    );
    assert_eq!(unfinished.steps.len(), 2);
    assert_eq!(
        unfinished.steps[1].format_error.as_deref(),
        Some("no <function=…> call")
    );
    let outcome = unfinished.outcome.as_ref().unwrap();
    assert_eq!(outcome.exit_reason, ExitReason::Error);
    assert_round_trips(unfinished);
}

#[test]
fn swe_dev_line_without_an_id_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    fs::write(
        &path,
        "{\"traj_id\": \"a_1\", \"messages\": []}\n{\"messages\": [], \"traj_id\": 7}\n",
    )
    .unwrap();
    let error = detect_and_import(&path).unwrap_err().to_string();
    assert!(error.contains("bad.jsonl"), "{error}");
    assert!(error.contains("line 2"), "{error}");
    assert!(error.contains("traj_id"), "{error}");
}
