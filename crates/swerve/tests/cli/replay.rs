//! `swerve replay` end to end: trajectories recorded on the bundled tasks replay with every
//! patch byte for byte and every step agreeing, the report is the same on a second run, a
//! planted environment difference is caught at the step that first sees it, and the shared
//! foreign samples (mini-swe-agent, SWE-agent, R2E-Gym, OpenHands) replay step by step.

use std::path::{Path, PathBuf};

use crate::common::{RunArgs, examples, json_lines, root, sh, succeeded, swerve};
use serde_json::Value;
use swerve_world::fidelity::normalize_output;

/// Records every bundled task's demonstration as a swerve trajectory (`swerve run --model
/// replay`) under `dir/run`; returns the trajectory files.
fn record(dir: &Path) -> Vec<PathBuf> {
    let out = dir.join("run");
    succeeded(&RunArgs::new(&out).model("replay").run(dir));
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("trajectories"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

/// `swerve replay FILES --tasks TASKS --out OUT`, succeeded; returns `report.json`.
fn replay(cache: &Path, files: &[PathBuf], tasks: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["replay".to_owned()];
    args.extend(files.iter().map(|file| file.display().to_string()));
    args.extend(["--tasks".to_owned(), tasks.display().to_string()]);
    args.extend(["--out".to_owned(), out.display().to_string()]);
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    succeeded(&swerve(cache, &args));
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

#[test]
fn bundled_trajectories_replay_byte_for_byte_and_the_report_is_stable() {
    let dir = tempfile::tempdir().unwrap();
    let files = record(dir.path());
    let first = replay(dir.path(), &files, &examples(), &dir.path().join("a"), &[]);
    let total = &first["total"];
    assert_eq!(total["trajectories"], files.len());
    assert_eq!(total["patches_equal"], files.len(), "{total:#}");
    assert_eq!(
        total["agreement"]["diverge"], 0,
        "{:#}",
        first["trajectories"]
    );
    let steps = &total["agreement"];
    assert_eq!(steps["codes_agree"], steps["codes_compared"]);
    // Every step agrees, apart from `cargo test` printing its parallel tests in another
    // order (a scheduling hazard, or the same lines reordered).
    let agreeing = steps["agree"].as_u64().unwrap();
    let tolerated =
        steps["not_replayable"].as_u64().unwrap() + steps["reordered"].as_u64().unwrap();
    assert_eq!(agreeing + tolerated, steps["replayed"].as_u64().unwrap());
    for trajectory in first["trajectories"].as_array().unwrap() {
        for step in trajectory["steps"].as_array().unwrap() {
            if step["outcome"] == "not-replayable" {
                assert_eq!(step["hazards"], serde_json::json!(["scheduling"]), "{step}");
            }
        }
    }
    // The replayed trajectories are swerve trajectories with swerve's observations.
    let replayed = json_lines(
        &dir.path()
            .join("a/trajectories/swerve-examples__calc-1__0.jsonl"),
    );
    assert_eq!(replayed.first().unwrap()["type"], "header");
    assert_eq!(replayed.last().unwrap()["type"], "outcome");

    // The same inputs give the same numbers.
    let second = replay(dir.path(), &files, &examples(), &dir.path().join("b"), &[]);
    let numbers = |report: &Value| {
        let mut report = report.clone();
        // `cargo test`'s order may change between runs; what counts is stable.
        for trajectory in report["trajectories"].as_array_mut().unwrap() {
            trajectory
                .as_object_mut()
                .unwrap()
                .remove("first_not_replayable");
        }
        report
    };
    let stable = |report: &Value| {
        (
            report["total"]["patches_equal"].clone(),
            report["total"]["agreement"]["diverge"].clone(),
            report["total"]["agreement"]["steps"].clone(),
            report["total"]["agreement"]["codes_agree"].clone(),
        )
    };
    assert_eq!(stable(&numbers(&first)), stable(&numbers(&second)));
    let throughput: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("a/throughput.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(throughput["steps"], steps["replayed"]);
}

#[test]
fn a_planted_environment_difference_is_caught_at_the_step_that_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = record(dir.path());
    let calc: Vec<PathBuf> = files
        .into_iter()
        .filter(|file| file.to_string_lossy().contains("calc-1"))
        .collect();
    // The calc task over a checkout whose parser has one more line at the top: step 0
    // (a search naming the file, not its lines) still agrees; step 1 views the file and
    // must be the first to diverge.
    let repos = dir.path().join("planted/repos/swerve-examples");
    std::fs::create_dir_all(&repos).unwrap();
    let bundle = root().join("examples/repos/swerve-examples/calc.bundle");
    let clone = dir.path().join("clone");
    sh(
        dir.path(),
        &format!("git clone -q {} {}", bundle.display(), clone.display()),
    );
    let planted = sh(
        &clone,
        "sed -i '1i # planted: this environment differs' calc/parser.py && \
         git -c user.name=t -c user.email=t@t commit -qam planted && git rev-parse HEAD",
    );
    sh(
        &clone,
        &format!(
            "git bundle create -q {} HEAD main",
            repos.join("calc.bundle").display()
        ),
    );
    let rows = std::fs::read_to_string(examples()).unwrap();
    let row = rows
        .lines()
        .find(|line| line.contains("\"swerve-examples__calc-1\""))
        .unwrap();
    let mut row: Value = serde_json::from_str(row).unwrap();
    row["base_commit"] = planted.trim().into();
    row["environment_setup_commit"] = planted.trim().into();
    let tasks = dir.path().join("planted/tasks.jsonl");
    std::fs::write(&tasks, format!("{row}\n")).unwrap();

    let report = replay(dir.path(), &calc, &tasks, &dir.path().join("out"), &[]);
    let trajectory = &report["trajectories"][0];
    assert_eq!(
        trajectory["steps"][0]["outcome"], "agrees",
        "{trajectory:#}"
    );
    let divergence = &trajectory["first_divergence"];
    assert_eq!(divergence["step"], 1, "{divergence:#}");
    assert!(
        divergence["replayed"]
            .as_str()
            .unwrap()
            .contains("# planted: this environment differs"),
        "{divergence:#}"
    );
    assert!(
        !divergence["recorded"]
            .as_str()
            .unwrap()
            .contains("# planted"),
        "{divergence:#}"
    );
}

/// The shared foreign samples, kept as the importers' fixtures.
fn sample(name: &str) -> PathBuf {
    root()
        .join("crates/swerve-core/tests/fixtures/trajectories")
        .join(name)
}

#[test]
fn the_shared_foreign_samples_replay_step_by_step() {
    let dir = tempfile::tempdir().unwrap();
    // Their repositories are not in CI: each sample replays over the bundled calc
    // repository under its own instance id, so every action runs, through the tool its
    // scaffold used, and is compared (most answers differ: another repository).
    let rows = std::fs::read_to_string(examples()).unwrap();
    let calc: Value = serde_json::from_str(
        rows.lines()
            .find(|line| line.contains("\"swerve-examples__calc-1\""))
            .unwrap(),
    )
    .unwrap();
    let samples = [
        (
            "mini-swe-agent.pytest-dev__pytest-7432.traj.json",
            "pytest-dev__pytest-7432",
            "mini-swe-agent",
        ),
        (
            "swe-agent.pydicom__pydicom-1458.traj",
            "swe-agent.pydicom__pydicom-1458",
            "swe-agent",
        ),
        (
            "r2e-gym.swe-rebench.jsonl",
            "fair-workflows__nanopub-140",
            "r2e-gym",
        ),
        (
            "openhands.output.jsonl",
            "ponylang__ponyc-4595",
            "openhands",
        ),
    ];
    let tasks = dir.path().join("tasks.jsonl");
    let mut text = String::new();
    for (_, id, _) in samples {
        let mut row = calc.clone();
        row["instance_id"] = id.into();
        text.push_str(&format!("{row}\n"));
    }
    std::fs::write(&tasks, text).unwrap();
    let files: Vec<PathBuf> = samples.iter().map(|(file, _, _)| sample(file)).collect();
    let repos = root().join("examples/repos");
    let report = replay(
        dir.path(),
        &files,
        &tasks,
        &dir.path().join("out"),
        &["--repos", repos.to_str().unwrap()],
    );
    let trajectories = report["trajectories"].as_array().unwrap();
    assert_eq!(trajectories.len(), samples.len());
    for ((file, id, scaffold), trajectory) in samples.iter().zip(trajectories) {
        assert_eq!(trajectory["instance_id"], *id);
        assert_eq!(trajectory["scaffold"], *scaffold, "{file}");
        assert!(trajectory.get("error").is_none(), "{file}: {trajectory:#}");
        let imported = swerve_core::trajectory::import::detect_and_import(sample(file)).unwrap();
        let steps = trajectory["steps"].as_array().unwrap();
        assert!(
            !steps.is_empty() && steps.len() <= imported[0].steps.len(),
            "{file}"
        );
        // Every step with an action ran: no answer missing.
        for step in steps {
            if step["outcome"] != "no-action" {
                assert!(step["similarity"].is_number(), "{file}: {step}");
            }
        }
        assert!(trajectory["patch"].is_object(), "{file}");
    }
    // mini-swe-agent's first action is a shell listing: in another repository it differs,
    // and the report says where, with both outputs.
    let mini = &trajectories[0];
    assert_eq!(mini["first_divergence"]["step"], 0, "{mini:#}");
    assert!(
        mini["first_divergence"]["replayed"]
            .as_str()
            .unwrap()
            .contains("calc")
    );
}

#[test]
fn a_trajectory_without_its_task_is_named_and_fails_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let output = swerve(
        dir.path(),
        &[
            "replay",
            sample("swe-agent.pydicom__pydicom-1458.traj")
                .to_str()
                .unwrap(),
            "--tasks",
            examples().to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no task \"swe-agent.pydicom__pydicom-1458\""),
        "{stderr}"
    );
    swerve_testing::assert_cmd_snapshot!("error_trajectory_without_its_task", output);
    // The report is still written, naming the failure.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["total"]["failed"], 1);
}

#[test]
fn a_replay_records_the_same_world_data_and_grade_as_the_live_run() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let live_world = dir.path().join("live-world");
    succeeded(
        &RunArgs::new(&live)
            .model("replay")
            .args([
                "--eval",
                "tests",
                "--record-world-data",
                live_world.to_str().unwrap(),
                "swerve-examples__calc-1",
            ])
            .run(dir.path()),
    );
    let replay_world = dir.path().join("replay-world");
    let trajectory = live.join("trajectories/swerve-examples__calc-1__0.jsonl");
    let report = replay(
        dir.path(),
        &[trajectory],
        &examples(),
        &dir.path().join("out"),
        &[
            "--grade",
            "--record-world-data",
            replay_world.to_str().unwrap(),
        ],
    );
    let grade = &report["trajectories"][0]["grade"];
    assert_eq!(grade["replayed_resolved"], true, "{grade}");
    assert_eq!(grade["recorded_resolved"], true, "{grade}");
    assert_eq!(grade["agrees"], true);
    for kind in ["swt", "swr"] {
        let file = format!("{kind}/swerve-examples__calc-1__0.jsonl");
        let live = std::fs::read_to_string(live_world.join(&file)).unwrap();
        let replayed = std::fs::read_to_string(replay_world.join(&file)).unwrap();
        assert!(!live.is_empty(), "{kind}: the live run recorded nothing");
        assert_eq!(live.lines().count(), replayed.lines().count(), "{kind}");
        // The same samples, but for what two runs of a command never share (`Ran 8 tests
        // in 0.001s`).
        assert_eq!(
            normalize_output(&live),
            normalize_output(&replayed),
            "{kind} samples differ"
        );
    }
}
