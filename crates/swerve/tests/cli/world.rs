//! SWE-World end to end, with its models scripted on loopback: `swerve run --env world`
//! (the demonstration's edits and reads run in the real sandbox, its Python runs are
//! answered by the transition model, unusable predictions show as failure observations),
//! SWR grading with no test run (`--eval swr`, `swerve eval --evaluator swr`), initial
//! analyses cached per task, and training data recorded from real runs with its fidelity
//! report and SFT export.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{
    Behaviour, Request, RunArgs, examples, failed, json_lines, start_cycling, succeeded, swerve,
};

const CALC: &str = "swerve-examples__calc-1";

/// A scripted world model on loopback: the `--set` options pointing `section` at it, and
/// the requests it received.
struct Scripted {
    sets: Vec<String>,
    received: Arc<Mutex<Vec<Request>>>,
}

impl Scripted {
    fn new(section: &str, replies: &[&str]) -> Self {
        let (url, received) = start_cycling(replies.iter().map(|r| r.to_string()).collect());
        Self {
            sets: vec![
                "--set".into(),
                format!("world.{section}.name={section}-model"),
                "--set".into(),
                format!("world.{section}.base_url={url}"),
            ],
            received,
        }
    }

    fn requests(&self) -> Vec<Request> {
        self.received.lock().unwrap().clone()
    }

    /// The user messages of the requests.
    fn prompts(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|request| {
                request.body["messages"][1]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }
}

/// Runs swerve with `args` and then `models`' settings; panics unless it succeeds.
fn run_ok(cache: &Path, args: &[&str], models: &[&Scripted]) -> String {
    succeeded(&run(cache, args, models))
}

fn run(cache: &Path, args: &[&str], models: &[&Scripted]) -> std::process::Output {
    let mut all: Vec<&str> = args.to_vec();
    for model in models {
        all.extend(model.sets.iter().map(String::as_str));
    }
    swerve(cache, &all)
}

/// Runs the calc task in the world environment with the demonstration as the agent;
/// returns the trajectory's lines.
fn run_world(cache: &Path, extra: &[&str], models: &[&Scripted]) -> Vec<serde_json::Value> {
    let agent = common::start(Behaviour::Good, Duration::ZERO);
    let out = cache.join("run");
    let args = RunArgs::new(&out)
        .served("demo-model", &agent.url)
        .args(["--env", "world"])
        .args(extra)
        .args([CALC]);
    run_ok(cache, &args.strs(), models);
    json_lines(&out.join(format!("trajectories/{CALC}__0.jsonl")))
}

#[test]
fn python_runs_are_predicted_and_everything_else_runs_for_real() {
    let cache = tempfile::tempdir().unwrap();
    let swt = Scripted::new(
        "transition_model",
        &[r#"{"stdout": "predicted output", "stderr": "", "exit_code": 0}"#],
    );
    let lines = run_world(cache.path(), &[], &[&swt]);
    let requests = swt.requests();
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
    let bash_steps: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|line| line["type"] == "step" && line["tool_call"]["name"] == "execute_bash")
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
    // SWE-World's template (Fig. G.2) by default; no analysis model: its section is empty.
    assert!(
        last.contains(r"### 1. Initial Analysis of the Problem\n\n\n### 2. Problem Description"),
        "{last}"
    );
}

#[test]
fn unusable_predictions_become_failure_observations() {
    let cache = tempfile::tempdir().unwrap();
    let swt = Scripted::new("transition_model", &["I cannot predict that."]);
    let lines = run_world(cache.path(), &[], &[&swt]);
    let outcome = lines.last().unwrap();
    assert_eq!(outcome["exit_reason"], "submitted", "{outcome}");
    assert_eq!(outcome["extra"]["world"]["failures"], 3);
    assert_eq!(swt.requests().len(), 3);
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

const ANALYSIS: &str =
    "- The parser folds subtraction to the right.\n- The fix loops left to right.";

#[test]
fn a_run_without_execution_is_graded_by_the_reward_model_with_the_analysis() {
    let cache = tempfile::tempdir().unwrap();
    let swt = Scripted::new(
        "transition_model",
        &[r#"{"stdout": "OK", "stderr": "", "exit_code": 0}"#],
    );
    // Three votes: one verdict of each kind and an unreadable reply, in whatever order
    // the concurrent calls arrive.
    let swr = Scripted::new(
        "reward_model",
        &[
            "<think>Every listed test passes.</think>\n{\"test_report\": \"all pass\", \"reward\": 1}",
            "The tests look fine to me.",
            "```json\n{\"test_report\": \"test_power fails\", \"reward\": 0}\n```",
        ],
    );
    let analysis = Scripted::new("analysis_model", &[&format!("<think>x</think>{ANALYSIS}")]);
    let lines = run_world(cache.path(), &["--eval", "swr"], &[&swt, &swr, &analysis]);
    let outcome = lines.last().unwrap();
    let report = &outcome["eval_report"];
    assert_eq!(report["evaluator"], "swr", "{report}");
    assert_eq!(outcome["reward"], 0.5, "{outcome}");
    assert_eq!(
        report["resolved"], true,
        "the mean reaches the 0.5 threshold"
    );
    assert_eq!(report["patch_successfully_applied"], true);
    let votes = &report["swr"];
    assert_eq!(votes["calls"], 3, "{votes}");
    assert_eq!(votes["votes"].as_array().unwrap().len(), 2);
    assert_eq!(votes["parse_failures"], 1);
    assert_eq!(votes["call_failures"], 0);
    assert_eq!(votes["model"], "reward_model-model");
    // No test ran: real grading's log is absent, the votes are saved instead.
    let logs = cache.path().join(format!("run/eval-logs/{CALC}__0/{CALC}"));
    assert!(logs.join("swr.json").exists());
    assert!(!logs.join("test_output.txt").exists());

    // The analysis was written once and shown to both models.
    assert_eq!(analysis.requests().len(), 1);
    let asked = &analysis.prompts()[0];
    assert!(asked.contains("FAIL_TO_PASS") && asked.contains("diff --git a/calc/parser.py"));
    for prompt in swt.prompts().iter().chain(&swr.prompts()) {
        assert!(prompt.contains(ANALYSIS), "{prompt}");
    }
    // The reward model saw the test command, the test lists and the patched test file.
    let graded = &swr.prompts()[0];
    assert!(graded.contains("python3 -m unittest -v"), "{graded}");
    assert!(graded.contains("- test_division_is_left_associative (tests.test_parser"));
    assert!(
        graded.contains("def test_division_is_left_associative"),
        "{graded}"
    );
    assert!(
        graded.contains("## /testbed/tests/test_parser.py"),
        "{graded}"
    );
}

/// `swerve eval --evaluator swr` on two bundled tasks (one Python, one Rust) with every
/// reply `reply`: the exit status, and the results.json entries.
fn eval_swr(cache: &Path, reply: &str, analysis: &Scripted) -> (bool, serde_json::Value) {
    let swr = Scripted::new("reward_model", &[reply]);
    let out = cache.join("eval");
    let output = run(
        cache,
        &[
            "eval",
            "--tasks",
            examples().to_str().unwrap(),
            "--gold",
            "--evaluator",
            "swr",
            "--out",
            out.to_str().unwrap(),
            "--set",
            "world.swr.votes=2",
            CALC,
            "swerve-examples__wrapline-1",
        ],
        &[&swr, analysis],
    );
    assert_eq!(swr.requests().len(), 4, "two votes per task");
    let results = std::fs::read_to_string(out.join("results.json")).unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["submitted_instances"], 2);
    for id in [CALC, "swerve-examples__wrapline-1"] {
        assert!(!out.join(format!("logs/{id}/test_output.txt")).exists());
        assert!(out.join(format!("logs/{id}/swr.json")).exists());
    }
    (
        output.status.success(),
        serde_json::from_str(&results).unwrap(),
    )
}

#[test]
fn eval_by_the_reward_model_runs_no_test_and_counts_unreadable_votes() {
    let cache = tempfile::tempdir().unwrap();
    let analysis = Scripted::new("analysis_model", &[ANALYSIS]);
    let (passed, results) = eval_swr(
        cache.path(),
        r#"{"test_report": "ok", "reward": 1}"#,
        &analysis,
    );
    assert!(
        passed,
        "every gold patch is predicted to resolve: {results}"
    );
    for report in results.as_object().unwrap().values() {
        assert_eq!(report["evaluator"], "swr");
        assert_eq!(report["resolved"], true);
        assert_eq!(report["swr"]["score"], 1.0);
        assert!(report["spec"]["test_command"].is_string(), "{report}");
    }
    // Malformed replies: no usable vote, so no score and nothing resolved (gold fails).
    let (passed, results) = eval_swr(cache.path(), r#"{"reward": 2}"#, &analysis);
    assert!(!passed);
    for report in results.as_object().unwrap().values() {
        assert_eq!(report["resolved"], false, "{report}");
        assert_eq!(report["swr"]["score"], serde_json::Value::Null);
        assert_eq!(report["swr"]["parse_failures"], 2);
        let error = report["swr"]["errors"][0].as_str().unwrap();
        assert!(error.contains("`reward` must be 0 or 1, got 2"), "{error}");
    }
    // The analyses were generated once per task, then read from the cache.
    assert_eq!(analysis.requests().len(), 2);
}

#[test]
fn real_runs_record_world_model_samples_that_match_what_ran() {
    let cache = tempfile::tempdir().unwrap();
    let swt = Scripted::new(
        "transition_model",
        &[r#"{"stdout": "", "stderr": "OK", "exit_code": 0}"#],
    );
    let swr = Scripted::new("reward_model", &[r#"{"test_report": "ok", "reward": 1}"#]);
    let out = cache.path().join("run");
    let record = cache.path().join("record");
    let args = RunArgs::new(&out)
        .args(["--eval", "--record-world-data", record.to_str().unwrap()])
        .set("world.record.simulate=true")
        .args([CALC]);
    run_ok(cache.path(), &args.strs(), &[&swt, &swr]);
    let lines = json_lines(&out.join(format!("trajectories/{CALC}__0.jsonl")));
    let outcome = lines.last().unwrap();
    assert_eq!(
        outcome["reward"], 1.0,
        "the replayed demonstration resolves"
    );

    // SWT: the three Python runs, each with what really ran, as the trajectory saw it.
    let samples = json_lines(&record.join(format!("swt/{CALC}__0.jsonl")));
    assert_eq!(samples.len(), 3);
    let bash_steps: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|line| line["type"] == "step" && line["tool_call"]["name"] == "execute_bash")
        .collect();
    for (sample, step) in samples.iter().zip(&bash_steps) {
        assert_eq!(sample["kind"], "swt");
        let command = step["tool_call"]["arguments"]["cmd"].as_str().unwrap();
        assert_eq!(sample["context"]["command"], command);
        let real = &sample["real"];
        let observation = step["observation"].as_str().unwrap();
        let code = real["exit_code"].as_i64().unwrap();
        let shown = if code == 0 {
            "Exit code: 0".to_owned()
        } else {
            format!("Exit code: Error: Exit code {code}")
        };
        assert!(observation.starts_with(&shown), "{observation}");
        for stream in ["stdout", "stderr"] {
            assert!(
                observation.contains(real[stream].as_str().unwrap().trim()),
                "{stream} of {sample} not in {observation}"
            );
        }
        // The target is the real result, the simulated one is kept beside it.
        let messages = sample["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2]["role"], "assistant");
        let target: serde_json::Value =
            serde_json::from_str(messages[2]["content"].as_str().unwrap()).unwrap();
        assert_eq!(target["exit_code"], real["exit_code"]);
        assert_eq!(sample["simulated"]["stderr"], "OK");
    }
    // The unit tests' real output is in the last sample.
    assert!(
        samples[2]["real"]["stderr"]
            .as_str()
            .unwrap()
            .contains("Ran ")
    );

    // SWR: the final patch with its real grade and the reward model's votes.
    let graded = json_lines(&record.join(format!("swr/{CALC}__0.jsonl")));
    assert_eq!(graded.len(), 1);
    assert_eq!(graded[0]["real"]["reward"], 1);
    let report = graded[0]["real"]["test_report"].as_str().unwrap();
    assert!(report.contains("Ran ") && report.contains("OK"), "{report}");
    // The grader's canaries are not in the sample (the must-fail one would show as a FAIL):
    // it is the run as the tests printed it.
    assert!(!report.contains("FAIL"), "{report}");
    assert!(!report.contains(">>>>> Start Test Output"), "{report}");
    assert_eq!(
        graded[0]["simulated"]["votes"],
        serde_json::json!([1, 1, 1])
    );

    // Fidelity against the real results.
    let fidelity = run_ok(
        cache.path(),
        &["world", "fidelity", record.to_str().unwrap(), "--json"],
        &[],
    );
    let fidelity: serde_json::Value = serde_json::from_str(&fidelity).unwrap();
    let zero_exits = samples
        .iter()
        .filter(|sample| sample["real"]["exit_code"] == 0)
        .count();
    assert_eq!(fidelity["swt"]["commands"], 3);
    assert_eq!(
        fidelity["swt"]["exit_code_agreement"],
        zero_exits as f64 / 3.0
    );
    assert_eq!(fidelity["swr"]["patches"], 1);
    assert_eq!(fidelity["swr"]["true_positives"], 1);
    assert_eq!(fidelity["swr"]["accuracy"], 1.0);

    // The SFT export, all of it and balanced (one reward-1 sample and no reward-0 one:
    // balancing keeps no SWR sample).
    for (balance, expected) in [(false, 4), (true, 3)] {
        let file = cache.path().join(format!("sft-{balance}.jsonl"));
        let mut args = vec![
            "data",
            "world",
            record.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ];
        if balance {
            args.push("--balance");
        }
        run_ok(cache.path(), &args, &[]);
        let rows = json_lines(&file);
        assert_eq!(rows.len(), expected);
        for row in rows {
            let roles: Vec<&str> = row["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            assert_eq!(roles, ["system", "user", "assistant"]);
        }
    }
}

#[test]
fn recording_refuses_the_world_environment_and_bad_samples_are_located() {
    let cache = tempfile::tempdir().unwrap();
    let swt = Scripted::new("transition_model", &["{}"]);
    let args = RunArgs::new(&cache.path().join("run"))
        .args(["--env", "world", "--record-world-data"])
        .args([cache.path().join("rec").to_str().unwrap(), CALC]);
    let output = run(cache.path(), &args.strs(), &[&swt]);
    let error = failed(&output);
    assert!(error.contains("run.env = \"sandbox\""), "{error}");
    swerve_testing::assert_cmd_snapshot!("error_recording_needs_the_sandbox", output);

    let bad = cache.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"kind\": \"swt\"}\n").unwrap();
    let output = run(
        cache.path(),
        &["world", "fidelity", bad.to_str().unwrap()],
        &[],
    );
    let error = failed(&output);
    assert!(
        error.contains("bad.jsonl:1: not a world-model sample"),
        "{error}"
    );
    swerve_testing::assert_cmd_snapshot!("error_not_a_world_model_sample", output);
}

/// Reverse-reasoning CoT data (SWE-World §4.2.2, App. B.1, Fig. G.4) end to end: a loopback
/// teacher that sees each sample's true result, a leak check and a loopback judge. The
/// first SWT sample's true output holds a unique planted string, which the teacher quotes:
/// the leak check rejects it. The SWR sample's reasoning reasons backward: the judge
/// rejects it with its reasons. Only the clean sample becomes a `<think>…</think>` target,
/// and no accepted target's reasoning quotes the planted string. A rerun resumes.
#[test]
fn reverse_reasoning_targets_never_quote_the_answer_unless_rejected() {
    use swerve_core::Task;
    use swerve_tools::WorkspaceFs;
    use swerve_world::TransitionContext;
    use swerve_world::context::{ContextConfig, IssueInputs, Sources, SwrContext};
    use swerve_world::fidelity::CommandResult;
    use swerve_world::samples::{RealGrade, SwrSample, SwtSample, WorldSample};
    use swerve_world::tokens::ApproxTokens;

    const PLANTED: &str = "PLANTED-ANSWER-5e2b9d1f-unique";
    let cache = tempfile::tempdir().unwrap();
    let repo = cache.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(
        repo.join("t.py"),
        "from calc import add\nprint(add(1, 2))\n",
    )
    .unwrap();
    let fs = WorkspaceFs::new(&repo);
    let sources = Sources {
        workspace: &fs,
        original: &fs,
        counter: &ApproxTokens,
    };
    let mut task = Task::new("o__calc-1", "o/calc", "abc", "add() subtracts.");
    task.patch =
        Some("diff --git a/calc.py b/calc.py\n-    return a - b\n+    return a + b\n".into());
    task.fail_to_pass = vec!["t.py::test_add".into()];
    let inputs = IssueInputs {
        task: &task,
        initial_analysis: Some("- add() uses `-` instead of `+`."),
        agent_patch: "diff --git a/calc.py b/calc.py\n+    return a + b\n",
    };
    let config = ContextConfig::default();
    let command = |stdout: &str| CommandResult {
        stdout: stdout.to_owned(),
        stderr: String::new(),
        exit_code: 0,
    };
    let samples = [
        WorldSample::Swt(SwtSample::new(
            "o__calc-1__0",
            TransitionContext::assemble(&inputs, "python t.py", &sources, &config),
            command(&format!("{PLANTED}\n")),
        )),
        WorldSample::Swt(SwtSample::new(
            "o__calc-1__1",
            TransitionContext::assemble(&inputs, "python t.py", &sources, &config),
            command("3\n"),
        )),
        WorldSample::Swr(SwrSample::new(
            "o__calc-1__0",
            SwrContext::assemble(&inputs, "pytest t.py", &sources, &config),
            RealGrade {
                reward: 1,
                test_report: format!("t.py::test_add PASSED {PLANTED}"),
            },
        )),
    ];
    let file = cache.path().join("samples.jsonl");
    let lines: Vec<String> = samples
        .iter()
        .map(|sample| serde_json::to_string(sample).unwrap())
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();

    // The teacher copies the true result after its reasoning; it quotes the planted
    // string when it is there, and reasons backward for SWR.
    let (url, received) = common::start_answering(|request| {
        let messages = request.body["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap();
        let user = messages[1]["content"].as_str().unwrap();
        if system.starts_with("You review chain-of-thought") {
            let reasoning = user.split("### Reasoning to check\n").nth(1).unwrap();
            return if reasoning.contains("output shows") {
                r#"{"verdict": "reject", "reasons": "it reasons backward from the output"}"#
            } else {
                r#"{"verdict": "accept", "reasons": "a forward derivation from the code"}"#
            }
            .to_owned();
        }
        let truth = user
            .split("[DO NOT USE THIS IN REASONING; ONLY COPY AT THE END]\n")
            .nth(1)
            .unwrap()
            .split("\n\n### YOUR TASK")
            .next()
            .unwrap();
        let reasoning = if truth.contains("test_report") {
            "The output shows the test passing, so the reward is 1.".to_owned()
        } else if truth.contains(PLANTED) {
            format!("t.py prints {PLANTED} because add works.")
        } else {
            "t.py calls add(1, 2); with the agent's fix add returns 3, which print writes."
                .to_owned()
        };
        format!("<sim_reasoning>\n{reasoning}\n</sim_reasoning>\n{truth}")
    });
    let out = cache.path().join("cot.jsonl");
    let args = [
        "data",
        "world",
        file.to_str().unwrap(),
        "--reasoning",
        "--teacher",
        "teacher-model",
        "--base-url",
        &url,
        "--judge",
        "judge-model",
        "--out",
        out.to_str().unwrap(),
    ];
    let printed = run_ok(cache.path(), &args, &[]);
    assert!(
        printed.contains("1 samples with reasoning written"),
        "{printed}"
    );
    assert!(printed.contains("2 rejected"), "{printed}");

    let accepted = json_lines(&out);
    assert_eq!(accepted.len(), 1);
    let row = &accepted[0];
    assert_eq!(row["kind"], "swt");
    assert_eq!(row["rollout"], "o__calc-1__1");
    assert_eq!(row["cot"]["judge"], "judge-model");
    assert_eq!(
        row["cot"]["judge_reasons"],
        "a forward derivation from the code"
    );
    let messages = row["messages"].as_array().unwrap();
    // The paper's SWT template (Fig. G.2), then the CoT target.
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are an expert Python code execution simulator")
    );
    let target = messages[2]["content"].as_str().unwrap();
    assert_eq!(
        target,
        "<think>\nt.py calls add(1, 2); with the agent's fix add returns 3, which print writes.\n</think>\n{\"stdout\":\"3\\n\",\"stderr\":\"\",\"exit_code\":0}"
    );
    for row in &accepted {
        let target = row["messages"][2]["content"].as_str().unwrap();
        let think = target.split("</think>").next().unwrap();
        assert!(!think.contains(PLANTED), "{target}");
    }

    // The rejections, with their reasons: three leaking attempts, three judged backward.
    let rejected = json_lines(&cache.path().join("cot.rejected.jsonl"));
    assert_eq!(rejected.len(), 2);
    let leaked = rejected.iter().find(|row| row["kind"] == "swt").unwrap();
    let reasons = leaked["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 3);
    assert!(
        reasons[0]
            .as_str()
            .unwrap()
            .contains("leak check: the reasoning quotes the true result"),
        "{reasons:?}"
    );
    let judged = rejected.iter().find(|row| row["kind"] == "swr").unwrap();
    assert!(
        judged["reasons"][0]
            .as_str()
            .unwrap()
            .contains("rejected by the judge: it reasons backward from the output"),
        "{judged}"
    );
    // The teacher saw the true result; 1 + 3 + 3 teacher calls, 1 + 3 judge calls.
    assert_eq!(received.lock().unwrap().len(), 11);

    // A rerun resumes: nothing is asked again.
    let printed = run_ok(cache.path(), &args, &[]);
    assert!(
        printed.contains("0 samples with reasoning written"),
        "{printed}"
    );
    assert_eq!(received.lock().unwrap().len(), 11);
    assert_eq!(json_lines(&out).len(), 1);
}
