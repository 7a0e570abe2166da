//! Training data end to end: `swerve run --eval` with token capture against the loopback
//! model (which returns token ids and logprobs as vLLM does), the rewards it records (the
//! step penalty in both forms, the `rl-stage1` preset), `swerve data advantages`, every
//! `swerve data export` format checked against the ids the model returned, re-tokenizing
//! only on request, and `swerve tasks curate` with a repeated gold evaluation and past runs
//! as evidence.

use crate::common;
use crate::tokenizers;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use common::{
    Behaviour, Replies, RunArgs, byte_ids, examples, failed, json_lines, stderr, stdout, succeeded,
    swerve,
};
use serde_json::Value;
use swerve_chat::RenderOptions;
use swerve_core::trajectory::{
    ExitReason, Header, Outcome, Step, Trajectory, read_trajectory, write_trajectory,
};
use swerve_train::export::messages::MessagesRow;
use swerve_train::export::skyrl::{self, SkyrlStep};
use swerve_train::export::trl::TrlRow;
use swerve_train::export::verl::{self, VerlRecord};

const TASK: &str = "swerve-examples__calc-1";

/// A graded run of `TASK`, two samples, against the loopback model writing its calls as
/// `replies` says; `extra` adds options.
struct Run {
    cache: tempfile::TempDir,
    dir: PathBuf,
}

impl Run {
    fn new(replies: Replies, extra: &[&str]) -> Self {
        let cache = tempfile::tempdir().unwrap();
        let server = common::start_with(Behaviour::Good, Duration::ZERO, replies);
        let dir = cache.path().join("run");
        let output = RunArgs::new(&dir)
            .served("demo-model", &server.url)
            .args(["--eval", "--samples", "2"])
            .args(extra)
            .args([TASK])
            .run(cache.path());
        succeeded(&output);
        Self { cache, dir }
    }

    fn swerve(&self, args: &[&str]) -> Output {
        swerve(self.cache.path(), args)
    }

    fn trajectory(&self, sample: usize) -> Trajectory {
        Self::read(&self.dir, sample)
    }

    /// Sample `sample`'s trajectory of `TASK` in the run directory `dir`.
    fn read(dir: &Path, sample: usize) -> Trajectory {
        let path = dir.join(format!("trajectories/{TASK}__{sample}.jsonl"));
        read_trajectory(&path).unwrap().trajectory
    }

    /// Exports the run in `format` to a file; the file and the command's output.
    fn export(&self, format: &str, extra: &[&str]) -> (PathBuf, Output) {
        let out = self.cache.path().join(format!("{format}.jsonl"));
        let mut args = vec![
            "data",
            "export",
            "--run",
            self.dir.to_str().unwrap(),
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        let output = self.swerve(&args);
        (out, output)
    }
}

fn rows<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    json_lines(path)
        .into_iter()
        .map(|row| serde_json::from_value(row).unwrap())
        .collect()
}

#[test]
fn captured_token_ids_reach_every_trainer_format_unchanged() {
    let run = Run::new(
        Replies::Canonical,
        &[
            "--set",
            "agent.capture_tokens=true",
            "--set",
            "reward.step_penalty=1",
            "--set",
            "reward.step_buffer=4",
            "--set",
            "reward.max_turns=10",
        ],
    );
    let trajectories = [run.trajectory(0), run.trajectory(1)];
    // Each sample's grading kept its own logs.
    for sample in 0..2 {
        let logs = run.dir.join(format!("eval-logs/{TASK}__{sample}/{TASK}"));
        assert!(logs.join("test_output.txt").is_file(), "{}", logs.display());
    }

    // The run captured what the server returned, and recorded the reward with its parts:
    // resolved, minus DAPO's overlong penalty in turns (the default form), (T - (10 - 4)) / 4
    // for T steps between 6 and 10.
    for trajectory in &trajectories {
        for step in &trajectory.steps {
            let tokens = step.tokens.as_ref().expect("captured token ids");
            assert_eq!(tokens.completion_ids, byte_ids(&step.response_text));
            assert_eq!(
                tokens.logprobs.as_ref().unwrap().len(),
                tokens.completion_ids.len()
            );
        }
        let outcome = trajectory.outcome.as_ref().unwrap();
        assert_eq!(outcome.reward, Some(1.0));
        let reward = &outcome.extra["reward"];
        let steps = trajectory.steps.len() as f64;
        assert!(
            steps > 6.0 && steps <= 10.0,
            "the demonstration ends within the last 4 turns before 10"
        );
        let expected = 1.0 - (steps - 6.0) / 4.0;
        assert!(
            (reward["total"].as_f64().unwrap() - expected).abs() < 1e-12,
            "{reward}"
        );
        assert_eq!(reward["outcome"], 1.0);
        assert_eq!(reward["resolved"], true);
    }

    // SkyRL: one record per step, ids and logprobs exactly as captured.
    // The exports reward with the configuration in effect: here the run's own.
    let config = run.dir.join("config.toml");
    let with_config = ["--config", config.to_str().unwrap()];
    let (path, output) = run.export("skyrl", &with_config);
    succeeded(&output);
    let records: Vec<SkyrlStep> = rows(&path);
    skyrl::check(&records).unwrap();
    let steps: Vec<_> = trajectories.iter().flat_map(|t| &t.steps).collect();
    assert_eq!(records.len(), steps.len());
    for (record, step) in records.iter().zip(&steps) {
        let captured = step.tokens.as_ref().unwrap();
        assert_eq!(record.prompt_token_ids, captured.prompt_ids);
        assert_eq!(record.response_ids, captured.completion_ids);
        assert_eq!(record.rollout_logprobs, captured.logprobs);
    }
    let last = records.iter().find(|r| r.is_last_step).unwrap();
    let reward = trajectories[0].outcome.as_ref().unwrap().extra["reward"]["total"].clone();
    assert_eq!(last.rewards.last().copied(), reward.as_f64());

    // verl: one growing sequence per trajectory; its generated tokens are the captured ones
    // and its observation tokens are the server's prompt between two calls.
    let (path, output) = run.export("verl", &with_config);
    succeeded(&output);
    let records: Vec<VerlRecord> = rows(&path);
    assert_eq!(records.len(), 2);
    for (record, trajectory) in records.iter().zip(&trajectories) {
        verl::check(record).unwrap();
        let generated = record.generated_ids();
        let captured: Vec<u32> = trajectory
            .steps
            .iter()
            .flat_map(|step| step.tokens.as_ref().unwrap().completion_ids.clone())
            .collect();
        assert_eq!(generated, captured);
        let last = trajectory.steps.last().unwrap().tokens.as_ref().unwrap();
        let mut whole = record.prompt_ids.clone();
        whole.extend(&record.response_ids);
        let mut expected = last.prompt_ids.clone();
        expected.extend(&last.completion_ids);
        assert_eq!(whole, expected);
        assert_eq!(record.extra_fields.trajectory_id, trajectory.header.id);
    }

    // TRL and messages: text rows, every step trained (the demonstration has no format
    // errors); --min-reward above every reward keeps nothing.
    let (path, output) = run.export("trl", &[]);
    succeeded(&output);
    let trl: Vec<TrlRow> = rows(&path);
    assert_eq!(trl.len(), steps.len());
    assert_eq!(
        trl[0].completion[0]["content"].as_str(),
        Some(steps[0].reply_turn().text().as_str())
    );
    let (path, output) = run.export("messages", &["--min-reward", "0.5"]);
    succeeded(&output);
    let conversations: Vec<MessagesRow> = rows(&path);
    assert_eq!(conversations.len(), 2);
    let (path, output) = run.export("messages", &["--min-reward", "1.5"]);
    assert!(
        stdout(&output).contains("2 below reward 1.5 left out"),
        "{}",
        stdout(&output)
    );
    assert!(json_lines(&path).is_empty());

    // RFT over SWE-AGILE snapshots: the same threshold, one sample per kept step.
    let files: Vec<String> = (0..2)
        .map(|k| {
            let path = run.dir.join(format!("trajectories/{TASK}__{k}.jsonl"));
            path.to_str().unwrap().to_owned()
        })
        .collect();
    let snapshots = run.cache.path().join("snapshots.jsonl");
    for (min, expected) in [("0.5", steps.len()), ("1.5", 0)] {
        let mut args = vec!["data", "snapshots", "--window", "1", "--min-reward", min];
        args.extend(["--out", snapshots.to_str().unwrap()]);
        args.extend(files.iter().map(String::as_str));
        let output = run.swerve(&args);
        succeeded(&output);
        assert_eq!(json_lines(&snapshots).len(), expected, "--min-reward {min}");
    }

    // Advantages: two identical rollouts are a zero-variance group.
    let advantages = |options: &[&str]| {
        let mut args = vec!["data", "advantages", "--run", run.dir.to_str().unwrap()];
        args.extend(options);
        succeeded(&run.swerve(&args))
    };
    let summary = advantages(&["--dynamic-sampling", "--json"]);
    let summary: Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["groups"], 1);
    assert_eq!(summary["dropped_groups"], 1);
    assert_eq!(summary["pass_at_k"]["1"]["value"], 1.0);
    assert_eq!(summary["pass_at_k"]["2"]["value"], 1.0);
    assert!(json_lines(&run.dir.join("advantages.jsonl")).is_empty());
    advantages(&["--steps"]);
    let step_rows = json_lines(&run.dir.join("advantages.jsonl"));
    assert_eq!(step_rows.len(), steps.len());
    assert!(step_rows.iter().all(|row| row["advantage"] == 0.0));
}

#[test]
fn without_captured_ids_exports_fail_unless_retokenizing_is_asked_for() {
    let run = Run::new(Replies::Plain, &[]);
    let (path, output) = run.export("skyrl", &[]);
    let message = failed(&output);
    assert!(
        message.contains(&format!(
            "trajectory {TASK}__0 step 0: no captured token ids"
        )),
        "{message}"
    );
    assert!(
        message.contains("--retokenize --tokenizer DIR"),
        "{message}"
    );
    swerve_testing::assert_cmd_snapshot!("error_export_without_captured_ids", output);
    assert!(!path.exists(), "nothing is written when an export fails");

    let qwen = tokenizers::model_dir("qwen3");
    let (path, output) = run.export(
        "skyrl",
        &["--retokenize", "--tokenizer", qwen.to_str().unwrap()],
    );
    succeeded(&output);
    assert!(stderr(&output).contains("re-tokenized with the chat template"));
    let records: Vec<SkyrlStep> = rows(&path);
    skyrl::check(&records).unwrap();
    assert!(
        records
            .iter()
            .all(|record| record.rollout_logprobs.is_none())
    );
    // The first prompt is the request as Qwen3's template renders and encodes it.
    let trajectory = run.trajectory(0);
    let sent = trajectory.messages_sent(0).unwrap();
    let options = RenderOptions::default().generation_prompt(true);
    let expected = tokenizers::model("qwen3").encode(&sent, &options).unwrap();
    assert_eq!(records[0].prompt_token_ids, expected);
}

#[test]
fn the_compression_bonus_needs_a_tokenizer_and_bad_reward_settings_are_named() {
    let cache = tempfile::tempdir().unwrap();
    let graded = RunArgs::new(&cache.path().join("run")).args(["--eval"]);
    let refused = graded
        .clone()
        .set("reward.compression_weight=0.2")
        .args([TASK])
        .run(cache.path());
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("no tokenizer is configured")
            && stderr(&refused).contains("reward.tokenizer"),
        "{}",
        stderr(&refused)
    );
    let missing = graded
        .clone()
        .set("reward.compression_weight=0.2")
        .set("reward.tokenizer=\"/nonexistent/model\"")
        .args([TASK])
        .run(cache.path());
    assert!(
        failed(&missing).contains("reward.tokenizer /nonexistent/model"),
        "{}",
        stderr(&missing)
    );
    swerve_testing::assert_cmd_snapshot!("error_reward_tokenizer_missing", missing);
    let negative = graded
        .set("reward.format_exit_penalty=-0.5")
        .args([TASK])
        .run(cache.path());
    assert!(
        stderr(&negative).contains("reward.format_exit_penalty is -0.5"),
        "{}",
        stderr(&negative)
    );
    swerve_testing::assert_cmd_snapshot!("error_reward_negative_penalty", negative);
    let buffer = RunArgs::new(&cache.path().join("run"))
        .args(["--eval"])
        .set("reward.step_penalty=1")
        .set("reward.step_buffer=50")
        .args([TASK])
        .run(cache.path());
    assert!(
        failed(&buffer).contains("reward.step_buffer is 50, more than max_turns 40"),
        "{}",
        stderr(&buffer)
    );
    swerve_testing::assert_cmd_snapshot!("error_reward_step_buffer_too_large", buffer);
}

/// `--preset rl-stage1` runs the first stage of the long-context RL seed (§4.3; App. C):
/// every request samples at temperature 1.0 with the neutral filters and asks for token ids,
/// every rollout is graded, and its reward is the outcome plus DAPO's overlong penalty over
/// the last 10 turns before 40, which the 8-step demonstration does not reach.
#[test]
fn the_rl_stage1_preset_samples_neutrally_and_rewards_with_the_overlong_penalty() {
    let cache = tempfile::tempdir().unwrap();
    let server = common::start(Behaviour::Good, Duration::ZERO);
    let dir = cache.path().join("run");
    let output = RunArgs::new(&dir)
        .args(["--preset", "rl-stage1"])
        .served("demo-model", &server.url)
        .set("run.samples=2")
        .args([TASK])
        .run(cache.path());
    succeeded(&output);
    let received = server.received.lock().unwrap().clone();
    assert_eq!(
        received.len(),
        2 * 8,
        "two rollouts of the 8-call demonstration"
    );
    for request in &received {
        let body = &request.body;
        let sampling = [
            "temperature",
            "top_p",
            "top_k",
            "min_p",
            "repetition_penalty",
        ]
        .map(|key| body[key].clone());
        assert_eq!(
            Value::from(sampling.to_vec()),
            serde_json::json!([1.0, 1.0, -1, 0.0, 1.0]),
            "{body}"
        );
        assert_eq!(body.get("neutral"), None);
        assert_eq!(body["return_token_ids"], true);
    }
    for sample in 0..2 {
        let trajectory = Run::read(&dir, sample);
        let config = &trajectory.header.config;
        assert_eq!(config["agent"]["max_steps"], 40);
        assert_eq!(config["reward"]["step_penalty_form"], "overlong");
        assert_eq!(config["reward"]["step_buffer"], 10);
        let outcome = trajectory.outcome.as_ref().unwrap();
        assert_eq!(outcome.reward, Some(1.0));
        assert_eq!(outcome.extra["reward"]["step_penalty"], 0.0);
        assert_eq!(outcome.extra["reward"]["total"], 1.0);
        assert!(trajectory.steps.iter().all(|step| step.tokens.is_some()));
    }
    // Rescored as if the limit were 12 turns: the last 10 turns before 12 start after turn
    // 2, so 8 steps cost (8 − 2) / 10 = 0.6 and each rollout scores 0.4.
    let config = dir.join("config.toml");
    let output = swerve(
        cache.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "data",
            "advantages",
            "--run",
            dir.to_str().unwrap(),
            "--set",
            "reward.max_turns=12",
            "--json",
        ],
    );
    let summary: Value = serde_json::from_str(&succeeded(&output)).unwrap();
    assert!(
        (summary["mean_reward"].as_f64().unwrap() - 0.4).abs() < 1e-12,
        "{summary}"
    );
}

#[test]
fn curation_uses_patch_size_duplicates_determinism_and_past_runs() {
    let run = Run::new(Replies::Plain, &[]);
    let work = run.cache.path();
    // A task file with a duplicate of calc-1 under another id.
    let tasks = work.join("tasks.jsonl");
    let mut lines: Vec<Value> = json_lines(&examples());
    let mut copy = lines
        .iter()
        .find(|t| t["instance_id"] == TASK)
        .unwrap()
        .clone();
    copy["instance_id"] = "swerve-examples__calc-copy".into();
    lines.push(copy);
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&tasks, text).unwrap();

    // The gold patches, graded twice each (from the bundled file, whose repositories swerve
    // finds beside it): deterministic and resolving.
    let eval = work.join("gold");
    let graded = run.swerve(&[
        "eval",
        "--tasks",
        examples().to_str().unwrap(),
        "--gold",
        "--repeat",
        "2",
        "--out",
        eval.to_str().unwrap(),
        TASK,
        "swerve-examples__pager-1",
    ]);
    succeeded(&graded);

    let out = work.join("curated.jsonl");
    // `swerve tasks curate` of the task file into `out`, with `filters`.
    let curate = |filters: &[&str]| {
        let mut args = vec!["tasks", "curate", "--tasks", tasks.to_str().unwrap()];
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(filters);
        run.swerve(&args)
    };
    let curated = curate(&[
        "--max-lines",
        "10",
        "--dedupe",
        "--determinism",
        eval.to_str().unwrap(),
        "--runs",
        run.dir.to_str().unwrap(),
    ]);
    succeeded(&curated);
    let decisions = json_lines(&work.join("curated.decisions.jsonl"));
    assert_eq!(decisions.len(), lines.len());
    let reasons = |id: &str| -> String {
        let decision = decisions.iter().find(|d| d["instance_id"] == id).unwrap();
        decision["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join("; ")
    };
    // calc-1 was solved by both rollouts of the run, and its patch changes 18 lines.
    let calc = reasons(TASK);
    assert!(calc.contains("solved in 2 of 2 rollouts"), "{calc}");
    assert!(calc.contains("changes 18 lines (at most 10)"), "{calc}");
    assert!(
        reasons("swerve-examples__calc-copy")
            .contains(&format!("same problem statement as {TASK}"))
    );
    // pager-1: small, graded deterministic, never run: kept.
    assert_eq!(reasons("swerve-examples__pager-1"), "");
    // Tasks the gold evaluation did not cover are dropped as such.
    assert!(reasons("swerve-examples__spans-1").contains("not in the repeated gold evaluation"));
    let kept = json_lines(&out);
    let ids: Vec<&str> = kept
        .iter()
        .map(|t| t["instance_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["swerve-examples__pager-1"]);

    let missing = curate(&["--determinism", run.dir.to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("--gold --repeat N"),
        "{}",
        stderr(&missing)
    );
    swerve_testing::assert_cmd_snapshot!("error_determinism_needs_repeated_gold_runs", missing);
}

/// Writes a graded trajectory `<instance>__<k>` of `steps` steps to `dir`.
fn graded(dir: &Path, instance: &str, k: usize, resolved: bool, steps: usize) {
    let mut trajectory = Trajectory::new(Header::new(format!("{instance}__{k}"), instance));
    trajectory.steps = (0..steps).map(|index| Step::new(index, "reply")).collect();
    let mut outcome = Outcome::new(ExitReason::Submitted, "diff");
    outcome.eval_report = Some(serde_json::json!({ "resolved": resolved }));
    outcome.reward = Some(if resolved { 1.0 } else { 0.0 });
    trajectory.outcome = Some(outcome);
    let path = dir.join(format!("trajectories/{instance}__{k}.jsonl"));
    write_trajectory(path, &trajectory).unwrap();
}

#[test]
fn advantages_by_hand_for_each_estimator() {
    let work = tempfile::tempdir().unwrap();
    let run = work.path().join("run");
    std::fs::create_dir_all(run.join("trajectories")).unwrap();
    // Task a: 1 of 3 resolved; task b: none of 3 (zero variance).
    for (k, resolved) in [true, false, false].into_iter().enumerate() {
        graded(&run, "a", k, resolved, 4);
        graded(&run, "b", k, false, 4);
    }
    let advantages = |args: &[&str]| -> (Value, Vec<Value>) {
        let mut all = vec![
            "data",
            "advantages",
            "--run",
            run.to_str().unwrap(),
            "--json",
        ];
        all.extend(args);
        let output = swerve(work.path(), &all);
        let summary = serde_json::from_str(&succeeded(&output)).unwrap();
        (summary, json_lines(&run.join("advantages.jsonl")))
    };
    let of = |rows: &[Value], id: &str| -> f64 {
        let row = rows.iter().find(|row| row["trajectory_id"] == id).unwrap();
        row["advantage"].as_f64().unwrap()
    };
    let close = |found: f64, expected: f64| assert!((found - expected).abs() < 1e-5, "{found}");

    // GRPO: mean 1/3, sample std sqrt(1/3): (2/3) / 0.57735 = 1.1547, (-1/3) / 0.57735.
    let (summary, rows) = advantages(&["--estimator", "grpo"]);
    assert_eq!(rows.len(), 6);
    close(of(&rows, "a__0"), 1.154_700_5);
    close(of(&rows, "a__1"), -0.577_350_3);
    close(of(&rows, "b__2"), 0.0);
    // pass@1 = mean(1/3, 0); pass@2 = mean(1 − C(2,2)/C(3,2), 0) = mean(2/3, 0).
    close(
        summary["pass_at_k"]["1"]["value"].as_f64().unwrap(),
        1.0 / 6.0,
    );
    close(
        summary["pass_at_k"]["2"]["value"].as_f64().unwrap(),
        1.0 / 3.0,
    );
    close(summary["pass_at_k"]["3"]["value"].as_f64().unwrap(), 0.5);
    assert_eq!(summary["dropped_groups"], 0);
    assert_eq!(summary["epsilon"], 1e-6);

    // TRL's ε (1e-4): (2/3) / (sqrt(1/3) + 1e-4), which verl's ε misses by 2e-4.
    let (summary, rows) = advantages(&["--epsilon", "1e-4"]);
    assert_eq!(summary["epsilon"], 1e-4);
    close(
        of(&rows, "a__0"),
        (2.0 / 3.0) / ((1.0f64 / 3.0).sqrt() + 1e-4),
    );
    assert!((of(&rows, "a__0") - 1.154_700_5).abs() > 1e-4);

    // Dr.GRPO: 2/3 and −1/3; RLOO: 1 − 0 = 1 and 0 − 1/2.
    let (_, rows) = advantages(&["--estimator", "dr-grpo"]);
    close(of(&rows, "a__0"), 2.0 / 3.0);
    close(of(&rows, "a__2"), -1.0 / 3.0);
    let (_, rows) = advantages(&["--estimator", "rloo"]);
    close(of(&rows, "a__0"), 1.0);
    close(of(&rows, "a__1"), -0.5);

    // DAPO's dynamic sampling drops b; per-step rows broadcast a's advantages.
    let (summary, rows) = advantages(&["--dynamic-sampling", "--steps"]);
    assert_eq!(summary["dropped_groups"], 1);
    assert_eq!(rows.len(), 3 * 4);
    assert!(rows.iter().all(|row| row["instance_id"] == "a"));
    let first: Vec<f64> = rows
        .iter()
        .filter(|row| row["trajectory_id"] == "a__0")
        .map(|row| row["advantage"].as_f64().unwrap())
        .collect();
    assert_eq!(first.len(), 4);
    assert!(first.iter().all(|advantage| *advantage == first[0]));

    // A step penalty changes the rewards the advantages start from, in either form: 4 steps
    // are 2 into the overlong buffer of the last 4 turns before 6 (−2/4), or 2 past the
    // linear threshold 2 out of 4 (−2/4); so a: 0.5, −0.5, −0.5 and the same spread.
    for form in [
        ["reward.step_penalty_form=overlong", "reward.step_buffer=4"],
        ["reward.step_penalty_form=linear", "reward.step_threshold=2"],
    ] {
        let (summary, _) = advantages(&[
            "--set",
            "reward.step_penalty=1",
            "--set",
            "reward.max_turns=6",
            "--set",
            form[0],
            "--set",
            form[1],
        ]);
        close(
            summary["mean_reward"].as_f64().unwrap(),
            (0.5 - 0.5 * 5.0) / 6.0,
        );
    }

    // An ungraded trajectory stops the command with its file and what to do.
    let ungraded = run.join("trajectories/c__0.jsonl");
    let header = Header::new("c__0", "c");
    write_trajectory(&ungraded, &Trajectory::new(header)).unwrap();
    let output = swerve(
        work.path(),
        &["data", "advantages", "--run", run.to_str().unwrap()],
    );
    let message = failed(&output);
    assert!(message.contains(ungraded.to_str().unwrap()), "{message}");
    assert!(
        message.contains("trajectory c__0: no outcome record"),
        "{message}"
    );
    swerve_testing::assert_cmd_snapshot!("error_advantages_of_an_ungraded_trajectory", output);
}
