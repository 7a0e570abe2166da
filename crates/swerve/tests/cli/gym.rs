//! The gym environment is the whole agent minus the policy: for the presets default,
//! `agile`, `edit-full` and `rl-stage2`, `swerve run --eval` runs every bundled task, and for
//! SWE-World `swerve run --env world --eval swr` does (with loopback transition and reward
//! models that answer by a rule from each request); then a `GymEnv` of the same
//! configuration and trajectory id is driven step by step with the replies the run's model
//! gave (its recorded responses, as the replay model replays them). Per step, the gym's next
//! prompt is the messages the run sent the model, and the observations, exit, patch and the
//! shaped reward of `[reward]` (with its terms) are the run's; so is the reward model's
//! verdict.

use crate::common;

use std::time::Duration;

use common::edit::{self, Preset};
use common::{Behaviour, Replies, Request, RunArgs, examples, succeeded};
use serde_json::{Value, json};
use swerve_core::trajectory::{Trajectory, read_trajectory};
use swerve_rollout::config::{Config, Sources};
use swerve_rollout::gym::{Action, Graded, GymEnv, Reply};
use swerve_rollout::{grading, open};

/// Settings every run adds: one sample of each task, a shaped reward with a turn penalty
/// and format penalties, so that the compared totals are more than the grade, and Rust's
/// test harness on one thread, so that two runs of `cargo test` print the same lines in the
/// same order (with its default of a thread per core, the order in which tests finish
/// decides the order of their lines, and so which lines `| tail` or the observation's
/// truncation keeps).
const SETTINGS: &[&str] = &[
    "run.samples=1",
    "reward.max_turns=8",
    "reward.step_penalty=0.5",
    "reward.step_buffer=4",
    "reward.format_error_penalty=0.05",
    "sandbox.env.RUST_TEST_THREADS=\"1\"",
];

/// How a compared run grades and where its commands run: the options `swerve run` is given,
/// and the same options as the dotted assignments the gym's configuration is resolved with.
struct Mode {
    run: &'static [&'static str],
    gym: &'static [(&'static str, &'static str)],
}

/// Commands run in the sandbox, patches graded by their tests.
const TESTS: Mode = Mode {
    run: &["--eval"],
    gym: &[("run.eval", "true")],
};

/// SWE-World: commands the router deems simulable are answered by the transition model,
/// patches graded by the reward model.
const WORLD_SWR: Mode = Mode {
    run: &["--env", "world", "--eval", "swr"],
    gym: &[
        ("run.env", "\"world\""),
        ("run.eval", "true"),
        ("run.evaluator", "\"swr\""),
    ],
};

#[test]
fn the_default_configuration_steps_as_swerve_run() {
    compare("", &["--model", "replay"], &[]);
}

/// `--env world --eval swr`: the transition model (SWT) and the reward model (SWR) are
/// loopback servers whose replies follow from each request's text (its digest), not from
/// the order of the calls, so the run's concurrent tasks and the gym get the same answer to
/// the same request, and a request the gym assembled differently gets a different one.
#[test]
fn the_world_environment_steps_as_swerve_run_graded_by_the_reward_model() {
    let (swt, swt_requests) = common::start_answering(|request| {
        let digest = digest(request);
        json!({
            "stdout": format!("simulated run {digest:016x}\n"),
            "stderr": "",
            "exit_code": digest % 2,
        })
        .to_string()
    });
    let (swr, swr_requests) = common::start_answering(|request| {
        let digest = digest(request);
        json!({"test_report": format!("predicted {digest:016x}"), "reward": digest % 2}).to_string()
    });
    let models = [
        "world.transition_model.name=\"swt-model\"".to_owned(),
        format!("world.transition_model.base_url=\"{swt}\""),
        "world.reward_model.name=\"swr-model\"".to_owned(),
        format!("world.reward_model.base_url=\"{swr}\""),
    ];
    let models: Vec<&str> = models.iter().map(String::as_str).collect();
    let (mut simulated, mut votes) = (0, 0);
    compare_in(&WORLD_SWR, "", &["--model", "replay"], &models, || {
        simulated = swt_requests.lock().unwrap().len();
        votes = swr_requests.lock().unwrap().len();
    });
    assert!(simulated > 0, "the run simulated no command");
    assert!(votes > 0, "the reward model graded nothing");
    assert_eq!(swr_requests.lock().unwrap().len(), 2 * votes);
    // The gym asked the transition model what the run asked it, no more and no less.
    let all = swt_requests.lock().unwrap();
    let (run, gym) = all.split_at(simulated);
    let mut run: Vec<String> = run.iter().map(|r| timeless(&r.body.to_string())).collect();
    let mut gym: Vec<String> = gym.iter().map(|r| timeless(&r.body.to_string())).collect();
    run.sort();
    gym.sort();
    assert!(run == gym, "the gym asked the transition model otherwise");
}

/// A digest of `request`'s messages (FNV-1a), without the test runners' timings.
fn digest(request: &Request) -> u64 {
    let text = timeless(&request.body["messages"].to_string());
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn the_rl_stage2_preset_steps_as_swerve_run() {
    compare("rl-stage2", &["--model", "replay"], &[]);
}

#[test]
fn the_agile_preset_steps_as_swerve_run_with_the_windowed_context() {
    let server = common::start_with(Behaviour::Good, Duration::ZERO, Replies::Agile);
    compare(
        "agile",
        &["--model", "demo-model", "--base-url", &server.url],
        &[],
    );
}

#[test]
fn the_edit_full_preset_steps_as_swerve_run_with_its_subagents() {
    let (url, _received) = edit::start(Preset::Full);
    let subagents = [
        "edit.viewer.name=viewer-model".to_owned(),
        format!("edit.viewer.base_url={url}"),
        "edit.editor.name=editor-model".to_owned(),
        format!("edit.editor.base_url={url}"),
    ];
    let subagents: Vec<&str> = subagents.iter().map(String::as_str).collect();
    compare(
        Preset::Full.name(),
        &["--model", "main-model", "--base-url", &url],
        &subagents,
    );
}

/// Runs `preset` (none when empty) with the model options `model` and the settings `sets`
/// over every bundled task, graded by their tests, then drives a gym environment of each
/// task with the run's replies and compares them step by step.
fn compare(preset: &str, model: &[&str], sets: &[&str]) {
    compare_in(&TESTS, preset, model, sets, || ());
}

/// [`compare`] in `mode`; `after_run` is called between the run and the gym.
fn compare_in(mode: &Mode, preset: &str, model: &[&str], sets: &[&str], after_run: impl FnOnce()) {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("run");
    let mut args = RunArgs::new(&out).args(model).args(mode.run);
    let mut presets = Vec::new();
    if !preset.is_empty() {
        args = args.args(["--preset", preset]);
        presets.push(preset.to_owned());
    }
    let sets: Vec<String> = SETTINGS.iter().chain(sets).map(|s| s.to_string()).collect();
    for set in &sets {
        args = args.set(set);
    }
    succeeded(&args.run(cache.path()));
    after_run();

    // The gym shares the run's cache, where the tasks' environments are built.
    let mut gym_sets = sets;
    gym_sets.push(format!("cache_dir={}", cache.path().display()));
    let options = mode.gym.iter();
    let config = Config::resolve(&Sources {
        file: None,
        presets,
        options: options
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        sets: gym_sets,
    })
    .unwrap()
    .config;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let grader = grading::grader(
        &config,
        config.run.evaluator,
        &examples(),
        config.eval_settings(cache.path().join("gym-eval-logs")),
        &grading::analyses(&config).unwrap(),
    )
    .unwrap();
    let tasks = open::tasks(&examples()).unwrap();
    assert_eq!(tasks.len(), 8);
    for task in tasks {
        let id = format!("{}__0", task.instance_id);
        let run = read_trajectory(out.join(format!("trajectories/{id}.jsonl")))
            .unwrap()
            .trajectory;
        let mut env = GymEnv::open(id.clone(), config.clone(), &examples(), task).unwrap();
        let Graded {
            result: graded,
            trajectory,
        } = drive(&mut env, &run, &runtime, grader.as_ref());
        let outcome = run.outcome.as_ref().unwrap();
        // The graded episode as a trajectory: the run's steps and its graded outcome.
        assert_eq!(trajectory.steps.len(), run.steps.len(), "{preset} {id}");
        let written = trajectory.outcome.as_ref().unwrap();
        assert_eq!(
            written.extra["reward"], outcome.extra["reward"],
            "{preset} {id}"
        );
        assert_eq!(written.reward, outcome.reward, "{preset} {id}");
        assert_eq!(written.patch, outcome.patch, "{preset} {id}");
        assert_eq!(graded["patch"], outcome.patch.as_str(), "{preset} {id}");
        assert!(graded["resolved"].is_boolean(), "{graded}");
        let terms = &outcome.extra["reward"];
        assert_eq!(graded["reward_terms"], *terms, "{preset} {id}");
        assert_eq!(graded["reward"], terms["total"], "{preset} {id}");
        assert_eq!(
            graded["exit_reason"],
            outcome.exit_reason.as_str(),
            "{preset} {id}"
        );
        assert_eq!(graded["score"], json!(outcome.reward), "{preset} {id}");
        let report = outcome.eval_report.as_ref().unwrap();
        assert_eq!(graded["report"]["evaluator"], report["evaluator"], "{id}");
        if report["evaluator"] == "swr" {
            // The reward model's verdict: its votes, their mean and the resolution.
            assert_eq!(graded["report"], *report, "{preset} {id}");
        }
        env.destroy().unwrap();
    }
}

/// `text` without the test runners' timings (`Ran 12 tests in 0.004s`, `finished in
/// 0.00s`, cargo's `target(s) in 3.80s`): the only parts of an observation that differ
/// between two real runs of the same command (the line order is compared: [`SETTINGS`] runs
/// Rust's tests on one thread). JSON-escaped line ends (a backslash, then `n`) count too.
fn timeless(text: &str) -> String {
    let lines: Vec<&str> = text
        .split("\\n")
        .flat_map(|piece| piece.split('\n'))
        .map(|line| {
            let cut = [" tests in ", "finished in ", " target(s) in "]
                .iter()
                .filter_map(|timing| line.find(timing))
                .min();
            cut.map_or(line, |at| &line[..at])
        })
        .collect();
    lines.join("\n")
}

/// Drives `env` with the replies of `run`, checking each step against the run's; the
/// evaluation.
fn drive(
    env: &mut GymEnv,
    run: &Trajectory,
    runtime: &tokio::runtime::Runtime,
    grader: &dyn swerve_eval::grader::Grader,
) -> Graded {
    let id = env.id().to_owned();
    assert_eq!(
        env.opening()["reasoning_window"],
        run.header
            .extra
            .get("reasoning_window")
            .cloned()
            .unwrap_or(Value::Null)
    );
    let mut prompt = env.opening()["messages"].clone();
    for (k, recorded) in run.steps.iter().enumerate() {
        let sent = serde_json::to_value(run.messages_sent(k).unwrap()).unwrap();
        assert_eq!(
            timeless(&prompt.to_string()),
            timeless(&sent.to_string()),
            "{id} step {k}: the messages sent"
        );
        let reply = Reply::text(recorded.response_text.clone(), Vec::new());
        let stepped = env.step(Action::Reply(reply)).unwrap();
        assert_eq!(stepped["step"], k);
        assert_eq!(
            timeless(stepped["observation"].as_str().unwrap()),
            timeless(recorded.observation.as_deref().unwrap_or("")),
            "{id} step {k}"
        );
        assert_eq!(
            stepped["format_error"],
            serde_json::to_value(&recorded.format_error).unwrap()
        );
        let last = k + 1 == run.steps.len();
        assert_eq!(stepped["done"], last, "{id} step {k}: {stepped}");
        prompt = stepped["messages"].clone();
    }
    assert!(env.is_done(), "{id}");
    assert_eq!(prompt, Value::Null);
    for (gym, recorded) in env.record().steps.iter().zip(&run.steps) {
        assert_eq!(
            timeless(&format!("{:?}", gym.messages_sent)),
            timeless(&format!("{:?}", recorded.messages_sent)),
            "{id}"
        );
        assert_eq!(
            (&gym.reasoning, &gym.digest, &gym.tool_call),
            (&recorded.reasoning, &recorded.digest, &recorded.tool_call),
            "{id}"
        );
        assert_eq!(gym.subagents.len(), recorded.subagents.len(), "{id}");
    }
    let evaluation = env.evaluation().unwrap();
    runtime.block_on(evaluation.grade(grader)).unwrap()
}

/// `--preset agile` with Qwen3's tokenizer: each step's sample holds the ids of the windowed
/// prompt (its count is swerve's own count of the messages the step answers with), and the
/// reply's ids as given; each next prompt drops the reasoning of turns outside the window.
#[test]
fn agile_steps_give_samples_of_the_windowed_context_in_qwen3_tokens() {
    use swerve_tools::formats::{Pick, ToolFormat, XmlFormat};
    let qwen3 = crate::tokenizers::model("qwen3");
    let cache = tempfile::tempdir().unwrap();
    let config = Config::resolve(&Sources {
        file: None,
        presets: vec!["agile-upstream".into()],
        options: Vec::new(),
        sets: vec![
            format!("cache_dir={}", cache.path().display()),
            format!("run.tokenizer={}", qwen3.dir().display()),
        ],
    })
    .unwrap()
    .config;
    let task = open::task(&examples(), "swerve-examples__calc-1").unwrap();
    let calls = common::demo_calls(&task.instance_id);
    let mut env = GymEnv::open("calc__0".into(), config, &examples(), task).unwrap();
    assert_eq!(env.opening()["reasoning_window"], 1);
    let count = |messages: &Value| {
        let messages: Vec<swerve_core::trajectory::Message> =
            serde_json::from_value(messages.clone()).unwrap();
        let options = swerve_chat::RenderOptions::default().generation_prompt(true);
        qwen3.count(&messages, &options).unwrap()
    };
    let mut prompt = env.opening()["messages"].clone();
    let first_ids = env.opening()["prompt_ids"].as_array().unwrap().len();
    assert_eq!(first_ids, count(&prompt));
    let mut history = Vec::new();
    let mut sent_counts = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        let text = format!(
            "<think>\nreasoning of turn {k}: a long thought about {} that only the next turn needs.\n</think>\n<reasoning_digest>\ndigest {k}\n</reasoning_digest>\n{}",
            call.name,
            XmlFormat::new(Pick::Last)
                .render_call("", call, None)
                .content
        );
        let response_ids: Vec<u32> = (0..7).map(|i| 100 + i).collect();
        let reply = Reply {
            text: text.clone(),
            response_ids: Some(response_ids.clone()),
            logprobs: Some(vec![-0.5; 7]),
            ..Reply::default()
        };
        let sent = count(&prompt);
        sent_counts.push(sent);
        let stepped = env.step(Action::Reply(reply)).unwrap();
        let sample = &stepped["sample"];
        assert_eq!(
            sample["prompt_ids"].as_array().unwrap().len(),
            sent,
            "step {k}"
        );
        assert_eq!(sample["response_ids"], serde_json::json!(response_ids));
        assert_eq!(sample["mask"], serde_json::json!(vec![1u8; 7]));
        history.push(text);
        if stepped["done"] == true {
            break;
        }
        prompt = stepped["messages"].clone();
        assert_eq!(
            stepped["prompt_ids"].as_array().unwrap().len(),
            count(&prompt),
            "step {k}"
        );
        let shown = prompt.to_string();
        assert!(shown.contains(&format!("digest {k}")), "step {k}");
        if k >= 1 {
            assert!(
                !shown.contains(&format!("reasoning of turn {}:", k - 1)),
                "step {k}"
            );
        }
    }
    assert!(
        history.len() >= 3,
        "the demonstration has {} calls",
        history.len()
    );
    // The last prompt as recorded is the one whose ids the sample held.
    let last = history.len() - 1;
    let options = swerve_chat::RenderOptions::default().generation_prompt(true);
    let windowed = env.record().messages_sent(last).unwrap();
    assert_eq!(qwen3.count(&windowed, &options).unwrap(), sent_counts[last]);
    env.destroy().unwrap();
}
