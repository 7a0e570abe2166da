//! `swerve run` configured by presets and `--set` overrides: what reaches the rollouts (the
//! neutral sampling values included), what is saved with the run, the limits, the
//! per-rollout logs, the refusal to resume a run with settings that change its results, and
//! the papers' presets as `swerve config show` resolves them.

use crate::common;

use std::time::Duration;

use common::{Behaviour, RunArgs, failed, json_lines, stderr, stdout, succeeded, swerve};
use serde_json::{Value, json};

#[test]
fn a_preset_and_overrides_reach_the_rollout_and_are_saved_with_the_run() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::FirstFails, Duration::ZERO);
    let out = cache.path().join("run");
    let output = RunArgs::new(&out)
        .args(["--preset", "r2egym"])
        .served("demo-model", &server.url)
        .set("agent.max_steps=3")
        .set("model.backoff_base_secs=0.01")
        .args(["swerve-examples__calc-1"])
        .run(cache.path());
    succeeded(&output);

    let saved = std::fs::read_to_string(out.join("config.toml")).unwrap();
    let saved: toml::Table = saved.parse().unwrap();
    assert_eq!(saved["agent"]["max_steps"].as_integer(), Some(3));
    assert_eq!(
        saved["agent"]["max_context_tokens"].as_integer(),
        Some(32768)
    );
    assert_eq!(saved["tools"]["python_only"].as_bool(), Some(true));
    assert_eq!(saved["model"]["name"].as_str(), Some("demo-model"));

    let lines = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"));
    assert_eq!(lines[0]["config"]["tools"]["expand_tabs"], true);
    assert_eq!(lines[0]["config"]["agent"]["max_steps"], 3);
    assert_eq!(lines.last().unwrap()["exit_reason"], "max_steps");
    assert_eq!(lines.len(), 1 + 3 + 1, "header, three steps, outcome");

    let log = std::fs::read_to_string(out.join("logs/swerve-examples__calc-1__0.log")).unwrap();
    for expected in [
        "rollout started",
        "workspace ready",
        "model request failed",
        "step=2",
        "rollout ended exit_reason=\"max_steps\"",
    ] {
        assert!(log.contains(expected), "the log lacks {expected:?}:\n{log}");
    }
    assert!(
        !stderr(&output).contains("model request failed"),
        "rollout events stay off the console"
    );

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["exit_reasons"]["max_steps"], 1);
    assert_eq!(summary["steps"], 3);
    assert_eq!(summary["process"]["steps_run"], 3);
    assert_eq!(summary["usage"]["prompt_tokens"], 300);
    assert!(summary["process"]["peak_rss_bytes"].as_u64().unwrap() > 1 << 20);
    assert!(stdout(&output).contains("max_steps"));
}

#[test]
fn token_and_context_limits_end_rollouts_with_their_reasons() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::Good, Duration::ZERO);
    // Each call uses 100 prompt + 20 completion tokens.
    for (limit, reason, steps) in [
        ("agent.max_total_tokens=300", "token_limit", 3),
        ("agent.max_context_tokens=120", "context_limit", 1),
        ("agent.max_cost=0", "cost_limit", 0),
    ] {
        let out = cache.path().join(reason);
        let output = RunArgs::new(&out)
            .served("demo-model", &server.url)
            .set(limit)
            .args(["swerve-examples__calc-1"])
            .run(cache.path());
        succeeded(&output);
        let lines = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"));
        assert_eq!(lines.last().unwrap()["exit_reason"], reason, "{limit}");
        assert_eq!(lines.len(), 1 + steps + 1, "{limit}");
    }
}

#[test]
fn resuming_with_settings_that_change_results_is_refused() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let run = |extra: &[&str]| {
        RunArgs::new(&out)
            .args(["swerve-examples__calc-1"])
            .args(extra)
            .run(cache.path())
    };
    assert!(run(&["--max-steps", "30"]).status.success());
    let refused = run(&["--max-steps", "40"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("different settings (agent.max_steps)")
            && stderr(&refused).contains("\nhint: use a new --out, or --redo to "),
        "{}",
        stderr(&refused)
    );
    swerve_testing::assert_cmd_snapshot!("error_resume_with_other_settings", refused);
    let world = run(&["--max-steps", "30", "--set", "world.swr.votes=5"]);
    assert!(
        failed(&world).contains("different settings (world.swr.votes)"),
        "{}",
        stderr(&world)
    );
    // Settings that do not change results may differ, where world-model samples go included.
    let samples = cache.path().join("world-samples");
    let record = format!("world.record.dir={}", samples.display());
    let resumed = run(&["--max-steps", "30", "--concurrency", "3", "--set", &record]);
    succeeded(&resumed);
    assert!(stderr(&resumed).contains("0 rollouts to run, 1 already finished"));
    let redone = run(&["--max-steps", "40", "--redo"]);
    succeeded(&redone);
    let saved = std::fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(saved.contains("max_steps = 40"), "{saved}");
}

#[test]
fn bad_settings_are_reported_with_their_origin() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["--set", "agent.max_stpes=3"],
            "--set agent.max_stpes=3",
            "error_set_unknown_key",
        ),
        (
            &["--preset", "nonesuch"],
            "unknown preset \"nonesuch\"",
            "error_unknown_preset",
        ),
        (
            &["--format", "yaml"],
            "unknown tool-call format \"yaml\"",
            "error_unknown_format",
        ),
        (
            &["--model", "m"],
            "needs --base-url",
            "error_model_needs_base_url",
        ),
        (
            &["--set", "run.samples=0"],
            "at least 1",
            "error_zero_samples",
        ),
    ];
    for (extra, expected, snapshot) in cases {
        let output = RunArgs::new(&out).args(extra).run(cache.path());
        assert!(!output.status.success(), "{extra:?}");
        assert!(
            stderr(&output).contains(expected),
            "{extra:?}: {}",
            stderr(&output)
        );
        swerve_testing::assert_cmd_snapshot!(snapshot, output);
    }
    let file = cache.path().join("swerve.toml");
    std::fs::write(&file, "[agent]\nmax_steps = -1\n").unwrap();
    let output = swerve(
        cache.path(),
        &["--config", file.to_str().unwrap(), "config", "show"],
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("swerve.toml") && stderr(&output).contains("max_steps"),
        "{}",
        stderr(&output)
    );
    swerve_testing::assert_cmd_snapshot!("error_config_file_value_of_wrong_type", output);
}

#[test]
fn config_show_prints_the_layers_and_the_result() {
    let cache = tempfile::tempdir().unwrap();
    let output = swerve(
        cache.path(),
        &[
            "config",
            "show",
            "--preset",
            "long",
            "--set",
            "agent.max_steps=7",
        ],
    );
    let text = succeeded(&output);
    let layers = text.lines().next().unwrap();
    assert!(
        layers.starts_with("# layers, first to last: swerve's defaults + preset long + ")
            && layers.ends_with(" + --set agent.max_steps=7"),
        "{text}"
    );
    let table: toml::Table = text.parse().unwrap();
    assert_eq!(table["agent"]["max_steps"].as_integer(), Some(7));
    assert_eq!(table["agent"]["capture_tokens"].as_bool(), Some(true));
    let presets = swerve(cache.path(), &["config", "presets"]);
    assert!(stdout(&presets).contains("r2egym"));
}

#[test]
fn eval_grades_each_rollout_and_records_the_reward() {
    let cache = tempfile::tempdir().unwrap();
    for (max_steps, reward) in [("50", 1.0), ("2", 0.0)] {
        let out = cache.path().join(format!("run-{max_steps}"));
        let output = RunArgs::new(&out)
            .args([
                "--eval",
                "--max-steps",
                max_steps,
                "swerve-examples__calc-1",
            ])
            .run(cache.path());
        succeeded(&output);
        let lines = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"));
        let outcome = lines.last().unwrap();
        assert_eq!(outcome["reward"], reward, "{outcome}");
        assert_eq!(
            outcome["eval_report"]["resolved"],
            reward == 1.0,
            "{outcome}"
        );
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["evaluated"], 1);
        assert_eq!(summary["resolved"], reward as u64);
    }
}

/// The sampling filters of every request a run of calc-1 sent to the loopback model (top_p,
/// top_k, min_p, repetition_penalty; `null` when not sent), after the settings `sets`.
fn filters_sent(sets: &[&str]) -> Vec<Value> {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::Good, Duration::ZERO);
    let mut run = RunArgs::new(&cache.path().join("run"))
        .served("demo-model", &server.url)
        .args(["--max-steps", "2", "swerve-examples__calc-1"]);
    for set in sets {
        run = run.set(set);
    }
    succeeded(&run.run(cache.path()));
    let received = server.received.lock().unwrap();
    assert_eq!(received.len(), 2);
    received
        .iter()
        .map(|request| {
            assert_eq!(
                request.body.get("neutral"),
                None,
                "swerve's switch is not sent"
            );
            ["top_p", "top_k", "min_p", "repetition_penalty"]
                .map(|key| request.body.get(key).cloned().unwrap_or(Value::Null))
                .to_vec()
                .into()
        })
        .collect()
}

/// The long-context RL seed samples "explicitly disabling all other decoding parameters"
/// (App. C), since a server's defaults silently biased its training (§5.2): every request
/// carries the neutral values of the filters the user left unset, the user's own values
/// (`model.sampling` or `model.extra_body`) win, and `model.sampling.neutral = false` sends
/// none.
#[test]
fn neutral_sampling_values_reach_the_server_unless_the_user_set_their_own() {
    for filters in filters_sent(&[]) {
        assert_eq!(filters, json!([1.0, -1, 0.0, 1.0]));
    }
    let own = filters_sent(&[
        "model.sampling.top_p=0.95",
        "model.extra_body={ top_k = 20, repetition_penalty = 1.15 }",
    ]);
    for filters in own {
        assert_eq!(filters, json!([0.95, 20, 0.0, 1.15]));
    }
    for filters in filters_sent(&["model.sampling.neutral=false"]) {
        assert_eq!(filters, json!([null, null, null, null]));
    }
}

/// The settings `--preset NAME` resolves to, as `swerve config show` prints them.
fn preset(name: &str) -> toml::Table {
    let cache = tempfile::tempdir().unwrap();
    let output = swerve(cache.path(), &["config", "show", "--preset", name]);
    let text = succeeded(&output);
    let layers = text.lines().next().unwrap();
    assert!(layers.contains(&format!(" + preset {name} + ")), "{layers}");
    text.parse().unwrap()
}

/// The long-context RL seed's two stages (§4.3; App. C, Table 3): 65k context and 40 turns,
/// then 131k and 80; 10 rollouts per task, graded, tokens captured; temperature 1.0 with
/// neutral filters; DAPO's overlong punishment over the last T_thr = 10 turns.
#[test]
fn the_rl_stage_presets_resolve_to_the_papers_schedule() {
    for (name, turns, context) in [("rl-stage1", 40, 65536), ("rl-stage2", 80, 131072)] {
        let config = preset(name);
        let agent = &config["agent"];
        assert_eq!(agent["max_steps"].as_integer(), Some(turns), "{name}");
        assert_eq!(
            agent["max_context_tokens"].as_integer(),
            Some(context),
            "{name}"
        );
        assert_eq!(agent["capture_tokens"].as_bool(), Some(true), "{name}");
        assert_eq!(config["run"]["samples"].as_integer(), Some(10), "{name}");
        assert_eq!(config["run"]["eval"].as_bool(), Some(true), "{name}");
        let sampling = &config["model"]["sampling"];
        assert_eq!(sampling["temperature"].as_float(), Some(1.0), "{name}");
        assert_eq!(sampling["neutral"].as_bool(), Some(true), "{name}");
        let reward = &config["reward"];
        assert_eq!(reward["step_penalty"].as_float(), Some(1.0), "{name}");
        assert_eq!(
            reward["step_penalty_form"].as_str(),
            Some("overlong"),
            "{name}"
        );
        assert_eq!(reward["step_buffer"].as_integer(), Some(10), "{name}");
        assert_eq!(reward["max_turns"].as_integer(), Some(turns), "{name}");
    }
}

/// SWE-AGILE's evaluation (§3.1; its window, Limitations and App. B Table 4): a random
/// window of 2 to 5 steps (N = 1..=4 earlier turns), 60 steps, a 65,536-token context; the
/// upstream script's window 1 and 100 steps stay as `agile-upstream`, which shares the rest.
#[test]
fn the_agile_presets_resolve_to_the_paper_and_the_upstream_script() {
    let (paper, upstream) = (preset("agile"), preset("agile-upstream"));
    let agent = &paper["agent"];
    assert_eq!(agent["max_steps"].as_integer(), Some(60));
    assert_eq!(agent["max_context_tokens"].as_integer(), Some(65536));
    assert_eq!(
        agent["reasoning"]["window"],
        toml::Value::Array(vec![1.into(), 4.into()])
    );
    let agent = &upstream["agent"];
    assert_eq!(agent["max_steps"].as_integer(), Some(100));
    assert_eq!(agent.get("max_context_tokens"), None);
    assert_eq!(agent["reasoning"]["window"].as_integer(), Some(1));
    assert_eq!(paper["prompts"], upstream["prompts"]);
    assert_eq!(paper["run"]["format"].as_str(), Some("xml_last"));
    assert_eq!(
        paper["agent"]["reasoning"]["on_error"],
        upstream["agent"]["reasoning"]["on_error"]
    );
}

/// The long-context RL seed's scaffold (§3.3, App. E–F) end to end: `--preset swe-agent`
/// offers SWE-agent's commands in the system prompt, reads one fenced command per reply,
/// tells the model SWE-agent's format error for two commands, and edits by line range.
#[test]
fn the_swe_agent_preset_runs_fenced_commands() {
    let cache = tempfile::tempdir().unwrap();
    let (url, received) = common::start_answering(|request| {
        let turn = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["role"] == "assistant")
            .count();
        match turn {
            0 => "DISCUSSION\nFind the parser.\n```\nfind_file parser.py\n```",
            1 => "```\nopen calc/parser.py 2\n```",
            2 => "Two at once.\n```\nls\n```\n```\npwd\n```",
            3 => "Mark it.\n```\nedit calc/parser.py 1:0\n# checked by swe-agent\nend_of_edit\n```",
            _ => "DISCUSSION\nDone.\n```\nsubmit\n```",
        }
        .to_owned()
    });
    let out = cache.path().join("run");
    succeeded(
        &RunArgs::new(&out)
            .args(["--preset", "swe-agent"])
            .served("demo-model", &url)
            .args(["swerve-examples__calc-1"])
            .run(cache.path()),
    );
    let lines = json_lines(&out.join("trajectories/swerve-examples__calc-1__0.jsonl"));
    let steps = &lines[1..lines.len() - 1];
    assert_eq!(steps.len(), 5);
    let names: Vec<&str> = steps
        .iter()
        .map(|step| step["tool_call"]["name"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(names, ["find_file", "open", "-", "edit", "submit"]);
    assert!(
        steps[0]["observation"]
            .as_str()
            .unwrap()
            .contains("./calc/parser.py\n(Open file: n/a)\n(Current directory: /testbed)\nbash-$"),
        "{}",
        steps[0]["observation"]
    );
    assert!(
        steps[1]["observation"]
            .as_str()
            .unwrap()
            .starts_with("[File: /testbed/calc/parser.py (")
    );
    assert!(
        steps[2]["format_error"]
            .as_str()
            .unwrap()
            .contains("*SINGLE* command")
    );
    let outcome = lines.last().unwrap();
    assert_eq!(outcome["exit_reason"], "submitted");
    assert!(
        outcome["patch"]
            .as_str()
            .unwrap()
            .contains("+# checked by swe-agent")
    );

    let first = &received.lock().unwrap()[0].body;
    let system = first["messages"][0]["content"].as_str().unwrap();
    for expected in [
        "COMMANDS:\nopen:\n  docstring:",
        "signature: edit [<path>] <start_line>:<end_line>",
        "DISCUSSION",
    ] {
        assert!(system.contains(expected), "{expected}: {system}");
    }
    assert!(first.get("tools").is_none());

    // The fenced format needs SWE-agent's toolset, and the reverse.
    let output = RunArgs::new(&cache.path().join("bad"))
        .served("demo-model", &url)
        .set("run.format=\"fenced\"")
        .args(["swerve-examples__calc-1"])
        .run(cache.path());
    assert!(
        failed(&output).contains("tools.toolset"),
        "{}",
        stderr(&output)
    );
    swerve_testing::assert_cmd_snapshot!("error_format_needs_a_toolset", output);
    let output = RunArgs::new(&cache.path().join("bad2"))
        .served("demo-model", &url)
        .set("tools.rename.execute_bash=\"bash\"")
        .args(["swerve-examples__calc-1"])
        .run(cache.path());
    assert!(
        failed(&output).contains("tools.rename.execute_bash"),
        "{}",
        stderr(&output)
    );
    swerve_testing::assert_cmd_snapshot!("error_rename_of_execute_bash", output);
}
