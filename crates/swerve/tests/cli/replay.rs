//! `swerve replay` end to end: trajectories recorded on the bundled tasks replay with every
//! patch byte for byte and every step agreeing, the report is the same on a second run, a
//! planted environment difference is caught at the step that first sees it, and the shared
//! foreign samples (mini-swe-agent, SWE-agent, R2E-Gym, OpenHands) replay step by step. At a
//! dataset's scale: the report does not depend on how many trajectories replay at once, an
//! interrupted replay resumes with only the trajectories it lacks (and refuses to resume with
//! settings or tasks that change results), and a file that cannot be read fails alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::SystemTime;

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

/// `swerve replay FILES --tasks TASKS --out OUT EXTRA…`, whatever its outcome.
fn replay_output(
    cache: &Path,
    files: &[PathBuf],
    tasks: &Path,
    out: &Path,
    extra: &[&str],
) -> Output {
    let mut args = vec!["replay".to_owned()];
    args.extend(files.iter().map(|file| file.display().to_string()));
    args.extend(["--tasks".to_owned(), tasks.display().to_string()]);
    args.extend(["--out".to_owned(), out.display().to_string()]);
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    swerve(cache, &args)
}

/// `swerve replay FILES --tasks TASKS --out OUT EXTRA…`, succeeded; returns `report.json`.
fn replay(cache: &Path, files: &[PathBuf], tasks: &Path, out: &Path, extra: &[&str]) -> Value {
    succeeded(&replay_output(cache, files, tasks, out, extra));
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

/// The recorded trajectories whose replay is the same every time: those of the Python tasks
/// (`cargo test` prints its parallel tests in the order they end).
fn deterministic(files: Vec<PathBuf>) -> Vec<PathBuf> {
    files
        .into_iter()
        .filter(|file| {
            let name = file.file_name().unwrap().to_string_lossy();
            !name.contains("spans-1") && !name.contains("wrapline-1")
        })
        .collect()
}

/// The modification time of every file in `dir`, by name.
fn mtimes(dir: &Path) -> BTreeMap<String, SystemTime> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, entry.metadata().unwrap().modified().unwrap())
        })
        .collect()
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

#[test]
fn the_report_does_not_depend_on_how_many_trajectories_replay_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let files = deterministic(record(dir.path()));
    assert!(files.len() >= 4, "{files:?}");
    let (one, three) = (dir.path().join("one"), dir.path().join("three"));
    replay(
        dir.path(),
        &files,
        &examples(),
        &one,
        &["--concurrency", "1"],
    );
    let report = replay(
        dir.path(),
        &files,
        &examples(),
        &three,
        &["--concurrency", "3"],
    );
    for name in ["report.json", "table.md"] {
        let read = |out: &Path| std::fs::read_to_string(out.join(name)).unwrap();
        assert_eq!(read(&one), read(&three), "{name}");
    }
    // In the order given, not the order they ended in.
    let ids: Vec<&str> = report["trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|trajectory| trajectory["id"].as_str().unwrap())
        .collect();
    let given: Vec<String> = files
        .iter()
        .map(|file| file.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids, given);
    // Each trajectory's result is kept beside its replayed trajectory.
    assert_eq!(mtimes(&three.join("results")).len(), files.len());
    assert_eq!(mtimes(&three.join("trajectories")).len(), files.len());
}

#[test]
fn an_interrupted_replay_resumes_with_only_the_trajectories_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let files = deterministic(record(dir.path()));
    let fresh = dir.path().join("fresh");
    replay(
        dir.path(),
        &files,
        &examples(),
        &fresh,
        &["--concurrency", "3"],
    );

    // What a replay killed after three trajectories leaves: their results, and a fourth
    // trajectory written but not its result (killed in between).
    let out = dir.path().join("out");
    replay(dir.path(), &files[..4], &examples(), &out, &[]);
    let name = |file: &PathBuf| file.file_stem().unwrap().to_string_lossy().into_owned();
    std::fs::remove_file(out.join(format!("results/{}.json", name(&files[3])))).unwrap();
    let results_before = mtimes(&out.join("results"));
    let trajectories_before = mtimes(&out.join("trajectories"));
    assert_eq!(results_before.len(), 3);

    // Resuming with settings that change results is refused, naming them, before anything
    // is replayed.
    let refused = replay_output(dir.path(), &files, &examples(), &out, &["--grade"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("different settings (run.eval)"), "{stderr}");
    assert!(stderr.contains("--redo"), "{stderr}");
    swerve_testing::assert_cmd_snapshot!("error_resume_with_other_settings", refused);
    // So is resuming against another row of a replayed trajectory's task.
    let replayed: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join(format!("results/{}.json", name(&files[0])))).unwrap(),
    )
    .unwrap();
    let instance_id = replayed["report"]["instance_id"].as_str().unwrap();
    let rows: String = std::fs::read_to_string(examples())
        .unwrap()
        .lines()
        .map(|line| {
            let mut row: Value = serde_json::from_str(line).unwrap();
            if row["instance_id"] == instance_id {
                row["problem_statement"] = "another statement".into();
            }
            format!("{row}\n")
        })
        .collect();
    let tasks = dir.path().join("other-tasks.jsonl");
    std::fs::write(&tasks, rows).unwrap();
    let refused = replay_output(dir.path(), &files, &tasks, &out, &[]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!("another row of task \"{instance_id}\"")),
        "{stderr}"
    );
    assert_eq!(mtimes(&out.join("results")), results_before);

    // The same command resumes: only the trajectories without a result replay.
    let resumed = replay_output(
        dir.path(),
        &files,
        &examples(),
        &out,
        &["--concurrency", "2"],
    );
    succeeded(&resumed);
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    let pending = files.len() - 3;
    assert!(
        stderr.contains(&format!(
            "{pending} trajectories to replay, 3 already replayed"
        )),
        "{stderr}"
    );
    for file in &files[..3] {
        assert!(
            !stderr.contains(&name(file)),
            "{} replayed again: {stderr}",
            name(file)
        );
    }
    for file in &files[3..] {
        assert!(
            stderr.contains(&name(file)),
            "{} not replayed: {stderr}",
            name(file)
        );
    }
    let results_after = mtimes(&out.join("results"));
    let trajectories_after = mtimes(&out.join("trajectories"));
    assert_eq!(results_after.len(), files.len());
    for file in &files[..3] {
        let result = format!("{}.json", name(file));
        assert_eq!(results_after[&result], results_before[&result], "{result}");
        let trajectory = format!("{}.jsonl", name(file));
        assert_eq!(
            trajectories_after[&trajectory], trajectories_before[&trajectory],
            "{trajectory}"
        );
    }
    let cut = format!("{}.jsonl", name(&files[3]));
    assert_ne!(trajectories_after[&cut], trajectories_before[&cut]);

    // The report covers them all, as the uninterrupted replay's does.
    for name in ["report.json", "table.md"] {
        let read = |out: &Path| std::fs::read_to_string(out.join(name)).unwrap();
        assert_eq!(read(&out), read(&fresh), "{name}");
    }
    let steps = |out: &Path| {
        let throughput: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("throughput.json")).unwrap())
                .unwrap();
        throughput["steps"].clone()
    };
    assert_eq!(steps(&out), steps(&fresh));

    // Once everything is replayed, a rerun replays nothing.
    let again = replay_output(dir.path(), &files, &examples(), &out, &[]);
    succeeded(&again);
    assert!(String::from_utf8_lossy(&again.stderr).contains(&format!(
        "0 trajectories to replay, {} already replayed",
        files.len()
    )));
    assert_eq!(mtimes(&out.join("results")), results_after);
}

#[test]
fn a_file_that_cannot_be_read_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.traj.json");
    std::fs::write(&garbage, "not a trajectory").unwrap();
    let out = dir.path().join("out");
    let output = replay_output(
        dir.path(),
        &[
            garbage.clone(),
            sample("swe-agent.pydicom__pydicom-1458.traj"),
        ],
        &examples(),
        &out,
        &[],
    );
    assert!(!output.status.success());
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["total"]["trajectories"], 2, "{report:#}");
    assert_eq!(report["total"]["failed"], 2, "{report:#}");
    let errors: Vec<&str> = report["trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|trajectory| trajectory["error"].as_str().unwrap())
        .collect();
    assert!(
        errors[0].starts_with(&format!("cannot read {}", garbage.display())),
        "{errors:?}"
    );
    assert!(errors[1].contains("no task"), "{errors:?}");
    // Failures keep no result: the next replay tries them again.
    assert!(mtimes(&out.join("results")).is_empty());
}
