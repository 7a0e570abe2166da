//! `swerve select` end to end: candidates from two run directories (really graded, one
//! with an empty patch), scored by a reward model on loopback, picked by SWR with a
//! seeded tie-break, by the oracle and by the tests; TTS@k beside pass@k, selection.json
//! and the picked predictions.

use crate::common;

use std::path::Path;

use common::{examples, failed, json_lines, start_cycling, succeeded, swerve};
use swerve_core::Task;
use swerve_core::trajectory::{ExitReason, Header, Outcome, Trajectory, write_trajectory};

const CALC: &str = "swerve-examples__calc-1";
const PAGER: &str = "swerve-examples__pager-1";

fn gold(id: &str) -> String {
    let tasks = swerve_core::task::load_tasks(&examples()).unwrap();
    let task: &Task = tasks.iter().find(|task| task.instance_id == id).unwrap();
    task.patch.clone().unwrap()
}

/// Writes a finished rollout of `id` with `patch`, graded for real as `resolved`.
fn candidate(run: &Path, id: &str, patch: &str, resolved: bool) {
    let rollout = format!("{id}__0");
    let mut trajectory = Trajectory::new(Header::new(&rollout, id));
    let mut outcome = Outcome::new(ExitReason::Submitted, patch);
    let (success, failure) = match resolved {
        true => (vec!["test_a"], vec![]),
        false => (vec![], vec!["test_a"]),
    };
    outcome.eval_report = Some(serde_json::json!({
        "resolved": resolved,
        "tests_status": {
            "FAIL_TO_PASS": {"success": success, "failure": failure},
            "PASS_TO_PASS": {"success": ["test_b"], "failure": []},
        },
    }));
    trajectory.outcome = Some(outcome);
    let dir = run.join("trajectories");
    std::fs::create_dir_all(&dir).unwrap();
    write_trajectory(dir.join(format!("{rollout}.jsonl")), &trajectory).unwrap();
}

struct Fixture {
    cache: tempfile::TempDir,
    runs: [String; 2],
    reward_url: String,
    received: std::sync::Arc<std::sync::Mutex<Vec<common::Request>>>,
}

impl Fixture {
    fn new() -> Self {
        let cache = tempfile::tempdir().unwrap();
        let (a, b) = (cache.path().join("a"), cache.path().join("b"));
        // calc: the empty patch first, the resolving one second.
        candidate(&a, CALC, "", false);
        candidate(&b, CALC, &gold(CALC), true);
        // pager: the same patch twice, graded differently: a tie for the reward model.
        candidate(&a, PAGER, &gold(PAGER), true);
        candidate(&b, PAGER, &gold(PAGER), false);
        let (reward_url, received) =
            start_cycling(vec![r#"{"test_report": "ok", "reward": 1}"#.to_owned()]);
        Self {
            runs: [a, b].map(|run| run.to_str().unwrap().to_owned()),
            cache,
            reward_url,
            received,
        }
    }

    /// Runs `swerve select` with `args`; its stdout and selection.json.
    fn select(&self, out: &str, args: &[&str]) -> (String, serde_json::Value) {
        let out = self.cache.path().join(out);
        let url = format!("world.reward_model.base_url={}", self.reward_url);
        let mut all = vec![
            "select",
            "--runs",
            &self.runs[0],
            &self.runs[1],
            "--out",
            out.to_str().unwrap(),
            "--set",
            "world.reward_model.name=swr",
            "--set",
            &url,
            "--set",
            "world.swr.votes=1",
        ];
        all.extend(args);
        let printed = succeeded(&swerve(self.cache.path(), &all));
        let selection =
            serde_json::from_slice(&std::fs::read(out.join("selection.json")).unwrap()).unwrap();
        (printed, selection)
    }
}

fn picked(selection: &serde_json::Value, task: usize) -> &serde_json::Value {
    let task = &selection["tasks"][task];
    &task["candidates"][task["selected"].as_u64().unwrap() as usize]
}

#[test]
fn swr_picks_the_best_scored_candidate_and_breaks_ties_by_seed() {
    let fixture = Fixture::new();
    let tasks = examples();
    let tasks = tasks.to_str().unwrap();
    let (table, selection) = fixture.select("swr", &["--by", "swr", "--tasks", tasks]);
    // Three non-empty patches, one vote each; the empty patch scores 0 without a call.
    assert_eq!(fixture.received.lock().unwrap().len(), 3);
    assert_eq!(selection["tasks"][0]["instance_id"], CALC);
    assert_eq!(picked(&selection, 0)["rollout"], format!("{CALC}__0"));
    assert_eq!(picked(&selection, 0)["run"], fixture.runs[1]);
    assert_eq!(picked(&selection, 0)["swr"], 1.0);
    let calc_scores: Vec<&serde_json::Value> = selection["tasks"][0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|candidate| &candidate["swr"])
        .collect();
    assert_eq!(calc_scores, [0.0, 1.0]);
    // TTS@1: one random candidate resolves half of each task. TTS@2: calc's pick resolves;
    // pager is a tie between a resolved and an unresolved candidate, so its expected pick
    // resolves half the time, whichever the seeded draw picked: (1 + ½) / 2.
    let metrics = &selection["metrics"];
    assert_eq!(metrics[0]["tts"], 0.5);
    assert_eq!(metrics[0]["pass_at_k"], 0.5);
    assert_eq!(metrics[1]["tts"], 0.75);
    assert_eq!(metrics[1]["pass_at_k"], 1.0);
    assert_eq!(selection["resolve_rate"], 0.5);
    assert!(
        table.contains("TTS@k") && table.contains("pass@k"),
        "{table}"
    );
    assert!(table.contains("50.0%"), "{table}");
    // The same seed makes the same picks.
    let (_, again) = fixture.select("swr-again", &["--by", "swr", "--tasks", tasks]);
    assert_eq!(again["tasks"], selection["tasks"]);
    // The picked patches are SWE-bench predictions.
    let preds = json_lines(&fixture.cache.path().join("swr/preds.jsonl"));
    assert_eq!(preds.len(), 2);
    assert_eq!(preds[0]["instance_id"], CALC);
    assert_eq!(preds[0]["model_patch"], gold(CALC));
    assert_eq!(preds[0]["model_name_or_path"], "swerve-select-swr");
}

#[test]
fn the_oracle_and_the_tests_pick_resolved_candidates() {
    let fixture = Fixture::new();
    for by in ["oracle", "tests"] {
        let (_, selection) = fixture.select(by, &["--by", by]);
        assert_eq!(picked(&selection, 0)["resolved"], true);
        assert_eq!(picked(&selection, 1)["resolved"], true);
        let metrics = &selection["metrics"];
        assert_eq!(metrics[1]["tts"], 1.0, "{by}");
        assert_eq!(metrics[1]["tts"], metrics[1]["pass_at_k"]);
        assert_eq!(metrics[0]["tts"], 0.5);
    }
    assert!(fixture.received.lock().unwrap().is_empty());
    // Without SWR scores and without --tasks, selecting by SWR is refused.
    let output = swerve(
        fixture.cache.path(),
        &[
            "select",
            "--runs",
            &fixture.runs[0],
            "--out",
            fixture.cache.path().join("x").to_str().unwrap(),
        ],
    );
    let error = failed(&output);
    assert!(
        error.contains("have no SWR score: give --tasks FILE"),
        "{error}"
    );
    swerve_testing::assert_cmd_snapshot!("error_select_needs_tasks", output);
}

/// Mean ± SEM across samples (the RL seed's Pass@1 over 10 samples, Table 1) in the run
/// summary and in `swerve select`: sample 0 replays the demonstrations (both tasks resolved),
/// sample 1 submits at once (neither), so the per-sample rates are 100 % and 0 %.
#[test]
fn run_summaries_and_selection_report_the_spread_across_samples() {
    let (url, _) = common::start_answering(|request| {
        let turn = request.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["role"] == "assistant")
            .count();
        let calls = common::demo_calls(common::session_task(request.session()));
        match calls.get(turn) {
            Some(call) if request.session().ends_with("__0") => {
                format!("Next.\n{}", swerve_tools::to_xml(call))
            }
            _ => "Done.\n<function=finish>\n<parameter=command>submit</parameter>\n</function>"
                .to_owned(),
        }
    });
    let cache = tempfile::tempdir().unwrap();
    let run = cache.path().join("run");
    let printed = succeeded(
        &common::RunArgs::new(&run)
            .served("demo-model", &url)
            .args(["--eval", "--samples", "2", CALC, PAGER])
            .run(cache.path()),
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let rates = &summary["resolve_rate"];
    let samples = &rates["across_samples"];
    assert_eq!(samples["repeats"][0]["rate"], 1.0, "{rates}");
    assert_eq!(samples["repeats"][1]["rate"], 0.0, "{rates}");
    // mean 0.5; std = √((0.5² + 0.5²)/1) = 0.7071; SEM = std/√2 = 0.5.
    let spread = &samples["spread"];
    assert_eq!(spread["n"], 2);
    assert!((spread["mean"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert!((spread["std"].as_f64().unwrap() - 0.5f64.sqrt()).abs() < 1e-12);
    assert!((spread["sem"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    // Over the four rollouts (1, 1, 0, 0): SEM = √(1/3)/2.
    let pooled = &rates["across_rollouts"];
    assert_eq!(pooled["n"], 4);
    assert!((pooled["sem"].as_f64().unwrap() - (1.0f64 / 12.0).sqrt()).abs() < 1e-12);
    assert!(
        printed.contains("resolve rate: 50.0% ± 50.0 (mean ± SEM over 2 repeats; std 70.7) across samples [100.0%, 0.0%]"),
        "{printed}"
    );

    let out = cache.path().join("selected");
    let printed = succeeded(&swerve(
        cache.path(),
        &[
            "select",
            "--runs",
            run.to_str().unwrap(),
            "--by",
            "oracle",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let selection: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("selection.json")).unwrap()).unwrap();
    assert_eq!(selection["across_samples"]["spread"]["n"], 2);
    assert_eq!(selection["across_runs"]["spread"]["n"], 1);
    assert!(
        printed.contains("across samples: 50.0% ± 50.0"),
        "{printed}"
    );
}

/// Mean ± std and SEM across repeated run directories (SWE-Edit's 3 runs, App. B.1):
/// rates 50 %, 50 % and 100 % give mean 2/3, std √(1/12) and SEM 1/6.
#[test]
fn selection_reports_the_spread_across_runs() {
    let fixture = Fixture::new();
    let third = fixture.cache.path().join("c");
    candidate(&third, CALC, &gold(CALC), true);
    candidate(&third, PAGER, &gold(PAGER), true);
    let out = fixture.cache.path().join("three");
    let printed = succeeded(&swerve(
        fixture.cache.path(),
        &[
            "select",
            "--runs",
            &fixture.runs[0],
            &fixture.runs[1],
            third.to_str().unwrap(),
            "--by",
            "oracle",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let selection: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("selection.json")).unwrap()).unwrap();
    let runs = &selection["across_runs"];
    let rates: Vec<f64> = runs["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|repeat| repeat["rate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates, [0.5, 0.5, 1.0]);
    let spread = &runs["spread"];
    assert!((spread["mean"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!((spread["std"].as_f64().unwrap() - (1.0f64 / 12.0).sqrt()).abs() < 1e-12);
    assert!((spread["sem"].as_f64().unwrap() - 1.0 / 6.0).abs() < 1e-12);
    assert!(
        printed.contains("across runs: 66.7% ± 16.7 (mean ± SEM over 3 repeats; std 28.9)"),
        "{printed}"
    );
}
