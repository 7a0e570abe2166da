//! `swerve eval` end to end on the bundled tasks and on tasks derived from them: real
//! sandboxes, real test runs, SWE-bench grading.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{
    RunArgs, examples, root, sh, sh_exact, stderr, stdout, succeeded, swerve, swerve_without_cargo,
};

use serde_json::{Value, json};

/// Runs `swerve eval --tasks TASKS --out OUT` with `options` (options and instance ids).
fn eval(cache: &Path, tasks: &Path, out: &Path, options: &[&str]) -> Output {
    let mut args = vec!["eval", "--tasks", tasks.to_str().unwrap()];
    args.extend(options);
    args.extend(["--out", out.to_str().unwrap()]);
    swerve(cache, &args)
}

fn results(out: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

fn example_rows() -> Vec<Value> {
    std::fs::read_to_string(examples())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn write_jsonl(path: &Path, rows: &[Value]) {
    std::fs::write(
        path,
        rows.iter()
            .map(|row| format!("{row}\n"))
            .collect::<String>(),
    )
    .unwrap();
}

/// A checkout of an example task's repository at its base commit, with the gold patch applied
/// when `gold` is true, for building patches.
fn checkout(dir: &Path, row: &Value, gold: bool) -> PathBuf {
    let name = row["instance_id"].as_str().unwrap();
    let target = dir.join(format!("checkout-{name}-{gold}"));
    let bundle = root().join(format!(
        "examples/repos/{}.bundle",
        row["repo"].as_str().unwrap()
    ));
    sh(
        dir,
        &format!(
            "git clone -q {} {} && git -C {} checkout -q {}",
            bundle.display(),
            target.display(),
            target.display(),
            row["base_commit"].as_str().unwrap()
        ),
    );
    if gold {
        std::fs::write(dir.join("gold.patch"), row["patch"].as_str().unwrap()).unwrap();
        sh(
            &target,
            &format!("git apply {}", dir.join("gold.patch").display()),
        );
    }
    target
}

#[test]
fn gold_resolves_and_empty_and_wrong_patches_do_not_on_every_example() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let gold = cache.path().join("gold");
    succeeded(&eval(cache.path(), &tasks, &gold, &["--gold"]));
    let rows = example_rows();
    assert!(
        results(&gold)
            .values()
            .all(|report| report["resolved"] == true)
    );
    assert_eq!(results(&gold).len(), rows.len());
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(gold.join("report.json")).unwrap()).unwrap();
    assert_eq!(run["resolved_instances"], rows.len());

    let empty = cache.path().join("empty");
    succeeded(&eval(cache.path(), &tasks, &empty, &["--empty"]));
    for report in results(&empty).values() {
        assert_eq!(report["resolved"], false);
        assert!(
            report["tests_status"]["FAIL_TO_PASS"]["success"]
                .as_array()
                .unwrap()
                .is_empty(),
            "{report}"
        );
    }

    // A wrong patch: applies cleanly, changes something, fixes nothing.
    let wrong: Vec<Value> = rows
        .iter()
        .map(|row| {
            let patch = "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n";
            let first_line = sh_exact(&checkout(cache.path(), row, false), "head -1 README.md");
            json!({"instance_id": row["instance_id"], "model_name_or_path": "wrong", "model_patch": format!("{patch} {}+A note.\n", first_line)})
        })
        .collect();
    let predictions = cache.path().join("wrong.jsonl");
    write_jsonl(&predictions, &wrong);
    let out = cache.path().join("wrong");
    eval(
        cache.path(),
        &tasks,
        &out,
        &["--predictions", predictions.to_str().unwrap()],
    );
    for (id, report) in results(&out) {
        assert_eq!(report["patch_successfully_applied"], true, "{id}: {report}");
        assert_eq!(report["resolved"], false, "{id}");
    }
}

#[test]
fn a_partial_fix_is_partial_and_fake_passed_lines_do_not_pass() {
    let cache = tempfile::tempdir().unwrap();
    let row = example_rows()
        .into_iter()
        .find(|row| row["instance_id"] == "swerve-examples__calc-1")
        .unwrap();
    let fixed = checkout(cache.path(), &row, true);
    // Undo half of the gold fix: keep left-associative subtraction, break division again.
    let parser = std::fs::read_to_string(fixed.join("calc/parser.py")).unwrap();
    let base = checkout(cache.path(), &row, false);
    let base_parser = std::fs::read_to_string(base.join("calc/parser.py")).unwrap();
    assert_ne!(parser, base_parser);
    let term_start = |text: &str| text.find("def term").unwrap();
    let term_end = |text: &str| {
        text[term_start(text)..]
            .find("\n    def ")
            .map(|i| term_start(text) + i)
            .unwrap()
    };
    let partial = format!(
        "{}{}{}",
        &parser[..term_start(&parser)],
        &base_parser[term_start(&base_parser)..term_end(&base_parser)],
        &parser[term_end(&parser)..]
    );
    std::fs::write(fixed.join("calc/parser.py"), partial).unwrap();
    let partial_patch = sh_exact(&fixed, "git diff");

    // A cheat: make the test run print every expected test as passing, then exit non-zero.
    let ids: Vec<String> =
        serde_json::from_str::<Vec<String>>(row["FAIL_TO_PASS"].as_str().unwrap())
            .unwrap()
            .into_iter()
            .chain(
                serde_json::from_str::<Vec<String>>(row["PASS_TO_PASS"].as_str().unwrap()).unwrap(),
            )
            .collect();
    let lines: String = ids
        .iter()
        .map(|id| format!("sys.stderr.write({:?})\n", format!("{id} ... ok\n")))
        .collect();
    std::fs::write(
        base.join("tests/__init__.py"),
        format!("import os, sys\n{lines}sys.stderr.write('OK\\n')\nos._exit(1)\n"),
    )
    .unwrap();
    let fake_patch = sh_exact(&base, "git add -A && git diff --cached");

    let tasks = cache.path().join("tasks.jsonl");
    let mut partial_row = row.clone();
    partial_row["instance_id"] = json!("calc-partial");
    let mut fake_row = row.clone();
    fake_row["instance_id"] = json!("calc-fake-passed");
    write_jsonl(&tasks, &[partial_row, fake_row]);
    let predictions = cache.path().join("preds.jsonl");
    write_jsonl(
        &predictions,
        &[
            json!({"instance_id": "calc-partial", "model_name_or_path": "m", "model_patch": partial_patch}),
            json!({"instance_id": "calc-fake-passed", "model_name_or_path": "m", "model_patch": fake_patch}),
        ],
    );
    let repos = root().join("examples/repos");
    let out = cache.path().join("out");
    swerve(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--predictions",
            predictions.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let reports = results(&out);
    assert_eq!(
        reports["calc-partial"]["resolution"], "RESOLVED_PARTIAL",
        "{}",
        reports["calc-partial"]
    );
    // tests/__init__.py is test machinery: put back before the tests run, so the fake lines
    // are never printed, and the change alone is not resolved (`reject`, the default).
    let fake = &reports["calc-fake-passed"];
    assert_eq!(fake["resolved"], false, "{fake}");
    assert_eq!(
        fake["guard"]["verdict"], "test_machinery_rejected",
        "{fake}"
    );
    assert_eq!(
        fake["guard"]["test_machinery"][0]["path"],
        "tests/__init__.py"
    );
    assert!(fake["log_rejection"].is_null(), "{fake}");
}

/// A patch that rewrites its judge is not rewarded by `swerve eval`, in both forms the guard
/// catches, and `reward.test_machinery_change = "flag"` grades the tests run without the
/// change (here: not resolved, the bug is still there) and names it (docs/security.md).
#[test]
fn a_patch_that_rewrites_its_judge_is_not_resolved_by_swerve_eval() {
    let cache = tempfile::tempdir().unwrap();
    let row = example_rows()
        .into_iter()
        .find(|row| row["instance_id"] == "swerve-examples__calc-1")
        .unwrap();
    let base = checkout(cache.path(), &row, false);
    let flip = "import unittest\nunittest.TextTestResult.addFailure = lambda self, test, err: self.addSuccess(test)\n";
    let mut rows = Vec::new();
    let mut predictions = Vec::new();
    for (id, path) in [
        ("machinery", "tests/__init__.py"),
        ("runtime", "calc/__init__.py"),
    ] {
        let file = base.join(path);
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        std::fs::write(&file, format!("{text}\n{flip}")).unwrap();
        let patch = sh_exact(&base, "git add -A && git diff --cached");
        sh_exact(&base, "git reset -q --hard");
        let mut hacked = row.clone();
        hacked["instance_id"] = json!(format!("calc-{id}"));
        rows.push(hacked);
        predictions.push(json!({"instance_id": format!("calc-{id}"), "model_name_or_path": "m", "model_patch": patch}));
    }
    let tasks = cache.path().join("tasks.jsonl");
    write_jsonl(&tasks, &rows);
    let preds = cache.path().join("preds.jsonl");
    write_jsonl(&preds, &predictions);
    let repos = root().join("examples/repos");
    let grade = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--predictions",
            preds.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        swerve(cache.path(), &args);
        results(out)
    };
    let rejected = grade(&cache.path().join("reject"), &[]);
    assert_eq!(rejected["calc-machinery"]["resolved"], false);
    assert_eq!(
        rejected["calc-machinery"]["guard"]["verdict"], "test_machinery_rejected",
        "{}",
        rejected["calc-machinery"]
    );
    assert_eq!(rejected["calc-runtime"]["resolved"], false);
    assert_eq!(
        rejected["calc-runtime"]["guard"]["verdict"], "tampered",
        "{}",
        rejected["calc-runtime"]
    );
    // Re-grading the saved logs keeps the guard's findings: nothing becomes resolved.
    let regraded = cache.path().join("regraded");
    swerve(
        cache.path(),
        &[
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--regrade",
            cache.path().join("reject").to_str().unwrap(),
            "--out",
            regraded.to_str().unwrap(),
        ],
    );
    let regraded = results(&regraded);
    for (id, verdict) in [
        ("calc-machinery", "test_machinery_rejected"),
        ("calc-runtime", "tampered"),
    ] {
        assert_eq!(regraded[id]["resolved"], false, "{}", regraded[id]);
        assert_eq!(
            regraded[id]["guard"]["verdict"], verdict,
            "{}",
            regraded[id]
        );
    }
    let flagged = grade(
        &cache.path().join("flag"),
        &["--set", "reward.test_machinery_change=flag"],
    );
    let machinery = &flagged["calc-machinery"];
    assert_eq!(machinery["resolved"], false, "{machinery}");
    assert_eq!(machinery["guard"]["verdict"], "clean", "{machinery}");
    assert_eq!(machinery["guard"]["test_machinery_change"], "flag");
    assert_eq!(
        machinery["guard"]["test_machinery"][0]["path"],
        "tests/__init__.py"
    );
    assert_eq!(
        machinery["tests_status"]["FAIL_TO_PASS"]["failure"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{machinery}"
    );
}

#[test]
fn repeated_runs_find_no_flaky_test_in_the_examples_but_find_a_planted_one() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let out = cache.path().join("repeat");
    let printed = succeeded(&eval(
        cache.path(),
        &tasks,
        &out,
        &["--gold", "--repeat", "5"],
    ));
    assert!(printed.contains("no flaky test in 5 runs"));
    assert_eq!(
        std::fs::read_to_string(out.join("flaky.json"))
            .unwrap()
            .trim(),
        "{}"
    );

    // A repository whose test fails on a coin flip.
    let repo = cache.path().join("repos/planted/coin");
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(repo.join("tests/__init__.py"), "").unwrap();
    std::fs::write(
        repo.join("tests/test_coin.py"),
        "import os, unittest\n\nclass Coin(unittest.TestCase):\n    def test_flip(self):\n        self.assertTrue(os.urandom(1)[0] < 128)\n\n    def test_stable(self):\n        self.assertTrue(True)\n",
    )
    .unwrap();
    sh(
        &repo,
        "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base",
    );
    let commit = sh(&repo, "git rev-parse HEAD").trim().to_owned();
    let task = json!({
        "instance_id": "planted__coin-1", "repo": "planted/coin", "base_commit": commit, "problem_statement": "x",
        "patch": "", "test_patch": "", "test_cmd": "python3 -m unittest -v",
        "FAIL_TO_PASS": [], "PASS_TO_PASS": ["test_flip (tests.test_coin.Coin.test_flip)", "test_stable (tests.test_coin.Coin.test_stable)"],
    });
    let tasks = cache.path().join("planted.jsonl");
    write_jsonl(&tasks, &[task]);
    let out = cache.path().join("planted-out");
    let repos = cache.path().join("repos");
    let output = swerve(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--empty",
            "--repeat",
            "16",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let flaky: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("flaky.json")).unwrap()).unwrap();
    assert_eq!(
        flaky,
        json!({"planted__coin-1": ["test_flip (tests.test_coin.Coin.test_flip)"]}),
        "{}",
        stdout(&output)
    );
}

#[test]
fn bad_inputs_get_classified_errors_while_the_run_goes_on() {
    let cache = tempfile::tempdir().unwrap();
    let row = example_rows()
        .into_iter()
        .find(|row| row["instance_id"] == "swerve-examples__calc-1")
        .unwrap();
    let gold = row["patch"].as_str().unwrap().to_owned();
    let variant = |id: &str| {
        let mut task = row.clone();
        task["instance_id"] = json!(id);
        task
    };
    // Patches built on top of the gold fix.
    let with_gold = checkout(cache.path(), &row, true);
    let edit = |label: &str, file: &str, prefix: &str| {
        let dir = cache.path().join(format!("edit-{label}"));
        sh(
            cache.path(),
            &format!("cp -a {} {}", with_gold.display(), dir.display()),
        );
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        std::fs::write(dir.join(file), format!("{prefix}{text}")).unwrap();
        sh_exact(&dir, "git diff")
    };
    let hang = edit(
        "hang",
        "calc/__init__.py",
        "import time\ntime.sleep(1000)\n",
    );
    let daemon = edit(
        "daemon",
        "calc/__init__.py",
        "import subprocess\nsubprocess.Popen(['sleep', '1000.8642'])\n",
    );

    let mut conflict = variant("calc-test-patch-conflict");
    conflict["test_patch"] = json!(
        "diff --git a/tests/test_parser.py b/tests/test_parser.py\n--- a/tests/test_parser.py\n+++ b/tests/test_parser.py\n@@ -1,2 +1,2 @@\n-this line is not in the file\n+neither is this one\n context\n"
    );
    let mut no_python = variant("calc-missing-python");
    no_python["python"] = json!("3.2");
    let tasks = cache.path().join("tasks.jsonl");
    write_jsonl(
        &tasks,
        &[
            variant("calc-ok"),
            variant("calc-bad-patch"),
            conflict,
            variant("calc-hang"),
            variant("calc-daemon"),
            no_python,
        ],
    );
    let predictions = cache.path().join("preds.jsonl");
    let prediction = |id: &str, patch: &str| {
        json!({"instance_id": id, "model_name_or_path": "m", "model_patch": patch}).to_string()
    };
    let lines = [
        prediction("calc-ok", &gold),
        prediction(
            "calc-bad-patch",
            "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n",
        ),
        "{this line is corrupt".to_owned(),
        prediction("calc-test-patch-conflict", &gold),
        prediction("calc-hang", &hang),
        prediction("calc-daemon", &daemon),
        prediction("calc-missing-python", &gold),
    ];
    std::fs::write(&predictions, lines.join("\n") + "\n").unwrap();
    let repos = root().join("examples/repos");
    let out = cache.path().join("out");
    let output = swerve(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--predictions",
            predictions.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--timeout",
            "5",
            "--workers",
            "3",
        ],
    );
    let printed = stderr(&output);
    assert!(output.status.success(), "{printed}");
    assert!(
        printed.contains("preds.jsonl line 3: invalid JSON"),
        "{printed}"
    );
    let reports = results(&out);
    let class = |id: &str| reports[id]["error_class"].clone();
    assert_eq!(
        reports["calc-ok"]["resolved"], true,
        "{}",
        reports["calc-ok"]
    );
    assert_eq!(class("calc-bad-patch"), "patch_failed");
    assert_eq!(
        class("calc-test-patch-conflict"),
        "tests_errored",
        "{}",
        reports["calc-test-patch-conflict"]
    );
    assert_eq!(class("calc-hang"), "timeout");
    assert_eq!(
        reports["calc-daemon"]["resolved"], true,
        "{}",
        reports["calc-daemon"]
    );
    assert_eq!(class("calc-missing-python"), "infra");
    assert!(
        reports["calc-missing-python"]["error"]
            .as_str()
            .unwrap()
            .contains("Python 3.2 not found"),
        "{}",
        reports["calc-missing-python"]
    );
    let leftover = sh(
        cache.path(),
        "ps -eo args | grep -c '^sleep 1000.8642' || true",
    );
    assert_eq!(leftover.trim(), "0", "the daemon outlived its evaluation");
}

#[test]
fn saved_logs_are_regraded_without_running_anything() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let first = cache.path().join("first");
    eval(
        cache.path(),
        &tasks,
        &first,
        &[
            "--gold",
            "swerve-examples__calc-1",
            "swerve-examples__spans-1",
        ],
    );
    // Tamper with one saved log: its FAIL_TO_PASS tests now fail.
    let log_path = first.join("logs/swerve-examples__calc-1/test_output.txt");
    let log = std::fs::read_to_string(&log_path)
        .unwrap()
        .replace("_left_associative) ... ok", "_left_associative) ... FAIL");
    std::fs::write(&log_path, log).unwrap();
    let second = cache.path().join("second");
    let output = eval(
        cache.path(),
        &tasks,
        &second,
        &[
            "--regrade",
            first.to_str().unwrap(),
            "swerve-examples__calc-1",
            "swerve-examples__spans-1",
        ],
    );
    succeeded(&output);
    let reports = results(&second);
    assert_eq!(reports["swerve-examples__spans-1"]["resolved"], true);
    assert_eq!(reports["swerve-examples__calc-1"]["resolved"], false);
    assert_eq!(
        reports["swerve-examples__calc-1"]["tests_status"]["FAIL_TO_PASS"]["failure"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// The bundled Rust tasks, in a tasks file of their own under `dir`, and their ids, sorted.
fn rust_tasks(dir: &Path) -> (PathBuf, Vec<String>) {
    let rows: Vec<Value> = example_rows()
        .into_iter()
        .filter(|row| row["language"] == "rust")
        .collect();
    assert!(!rows.is_empty());
    let tasks = dir.join("rust-tasks.jsonl");
    write_jsonl(&tasks, &rows);
    let mut ids: Vec<String> = rows
        .iter()
        .map(|row| row["instance_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    (tasks, ids)
}

#[test]
fn a_task_whose_toolchain_is_absent_is_infra_and_earns_no_reward() {
    let cache = tempfile::tempdir().unwrap();
    let (tasks, ids) = rust_tasks(cache.path());
    let out = cache.path().join("no-cargo");
    let repos = root().join("examples/repos");
    let output = swerve_without_cargo(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--gold",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(
        stderr(&output).contains("ERROR (infra)"),
        "{}",
        stderr(&output)
    );
    let reports = results(&out);
    for id in &ids {
        let report = &reports[id.as_str()];
        assert_eq!(report["error_class"], "infra", "{id}: {report}");
        assert_eq!(report["infra_failure"], true, "{id}: {report}");
        assert_eq!(report["infra_failure_reason"], "test_runner_missing");
        // The gold patch applied; the tests could not start.
        assert_eq!(report["patch_successfully_applied"], true, "{report}");
        assert_eq!(report["resolved"], false);
        assert!(
            report["error"].as_str().unwrap().contains("'cargo'"),
            "{report}"
        );
        let log =
            std::fs::read_to_string(out.join("logs").join(id).join("run_instance.log")).unwrap();
        assert!(
            log.contains("swerve probe: the test runner 'cargo' is not on PATH"),
            "{log}"
        );
    }
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(run["infra_failure_ids"], json!(ids), "{run}");
    assert_eq!(run["infra_failure_instances"], ids.len());
    assert_eq!(run["resolved_instances"], 0);
    assert_eq!(run["failure_reasons"][&ids[0]], "test_runner_missing");

    // A rollout graded so earns no reward: `reward` null in its outcome, and left out of
    // the advantages.
    let run_dir = cache.path().join("run");
    let rollout = swerve_without_cargo(
        cache.path(),
        &RunArgs::new(&run_dir)
            .model("replay")
            .args(["--eval", "tests", ids[0].as_str()])
            .strs(),
    );
    succeeded(&rollout);
    let trajectory = run_dir.join(format!("trajectories/{}__0.jsonl", ids[0]));
    let outcome = swerve_core::trajectory::read_trajectory(&trajectory)
        .unwrap()
        .trajectory
        .outcome
        .unwrap();
    assert_eq!(outcome.reward, None, "{outcome:?}");
    let report = outcome.eval_report.as_ref().unwrap();
    assert_eq!(report["error_class"], "infra", "{report}");
    assert_eq!(outcome.extra["reward"], Value::Null, "{outcome:?}");
    let advantages = swerve(
        cache.path(),
        &[
            "data",
            "advantages",
            "--run",
            run_dir.to_str().unwrap(),
            "--json",
        ],
    );
    succeeded(&advantages);
    let summary: Value = serde_json::from_str(stdout(&advantages).trim()).unwrap();
    assert_eq!(summary["trajectories"], 0, "{summary}");
    assert_eq!(
        summary["no_reward"].as_array().unwrap().len(),
        1,
        "{summary}"
    );

    // With cargo in sight the same gold patches resolve: the failure was the environment's,
    // and it was not cached.
    let with_cargo = cache.path().join("with-cargo");
    succeeded(&swerve(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--gold",
            "--out",
            with_cargo.to_str().unwrap(),
        ],
    ));
    for id in &ids {
        assert_eq!(results(&with_cargo)[id.as_str()]["resolved"], true);
    }
}

#[test]
fn a_patch_that_breaks_the_test_runner_is_the_models_failure() {
    let cache = tempfile::tempdir().unwrap();
    let row = example_rows()
        .into_iter()
        .find(|row| row["instance_id"] == "swerve-examples__calc-1")
        .unwrap();
    assert_eq!(row["test_cmd"], "python3 -m unittest -v");
    // The gold fix, plus a `unittest` package at the repository's root that shadows the
    // standard library's (`python3 -m` puts the working directory first on `sys.path`) and
    // fails the way a runner that cannot start does: exit 127, "command not found".
    let dir = checkout(cache.path(), &row, true);
    std::fs::create_dir(dir.join("unittest")).unwrap();
    std::fs::write(dir.join("unittest/__init__.py"), "").unwrap();
    std::fs::write(
        dir.join("unittest/__main__.py"),
        "import sys\nprint('python3: command not found')\nsys.exit(127)\n",
    )
    .unwrap();
    sh(&dir, "git add -A");
    let patch = sh_exact(&dir, "git diff --cached");
    let predictions = cache.path().join("preds.jsonl");
    write_jsonl(
        &predictions,
        &[
            json!({"instance_id": row["instance_id"], "model_name_or_path": "m", "model_patch": patch}),
        ],
    );
    let tasks = cache.path().join("tasks.jsonl");
    write_jsonl(&tasks, std::slice::from_ref(&row));
    let out = cache.path().join("out");
    let repos = root().join("examples/repos");
    swerve(
        cache.path(),
        &[
            "--repos",
            repos.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--predictions",
            predictions.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let report = &results(&out)["swerve-examples__calc-1"];
    assert_ne!(report["error_class"], "infra", "{report}");
    assert_eq!(report["infra_failure"], false, "{report}");
    assert_eq!(report["patch_successfully_applied"], true, "{report}");
    assert_eq!(report["resolved"], false, "{report}");
    let test_output = std::fs::read_to_string(report["log_path"].as_str().unwrap()).unwrap();
    assert!(
        test_output.contains(">>>>> Test Exit Code: 127"),
        "{test_output}"
    );
}

#[test]
fn a_cache_hit_still_writes_the_instances_logs_into_out_and_needs_the_same_configuration() {
    let cache = tempfile::tempdir().unwrap();
    let tasks = examples();
    let id = "swerve-examples__calc-1";
    let first = cache.path().join("first");
    succeeded(&eval(cache.path(), &tasks, &first, &["--gold", id]));
    let second = cache.path().join("second");
    let started = std::time::Instant::now();
    succeeded(&eval(cache.path(), &tasks, &second, &["--gold", id]));
    let report = &results(&second)[id];
    assert_eq!(report["resolved"], true, "{report}");
    let logs = second.join("logs").join(id);
    assert_eq!(
        report["log_path"],
        json!(logs.join("test_output.txt")),
        "log_path points into the older run: {report} ({:?})",
        started.elapsed()
    );
    for name in [
        "patch.diff",
        "eval.sh",
        "run_instance.log",
        "test_output.txt",
        "report.json",
    ] {
        let cached = std::fs::read_to_string(logs.join(name))
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        if name != "report.json" {
            assert_eq!(
                cached,
                std::fs::read_to_string(first.join("logs").join(id).join(name)).unwrap(),
                "{name}"
            );
        }
    }
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(logs.join("report.json")).unwrap()).unwrap();
    assert_eq!(saved[id]["log_path"], report["log_path"]);

    // The second run was a hit: one entry. Under another configuration that could change the
    // verdict (another time allowed, a sandbox with other limits) the result is graded again.
    let entries = || {
        std::fs::read_dir(cache.path().join("evals"))
            .unwrap()
            .filter(|entry| {
                entry.as_ref().unwrap().path().extension() == Some(std::ffi::OsStr::new("json"))
            })
            .count()
    };
    assert_eq!(entries(), 1, "the same configuration reuses the result");
    succeeded(&eval(
        cache.path(),
        &tasks,
        &cache.path().join("third"),
        &["--gold", id, "--timeout", "600"],
    ));
    assert_eq!(entries(), 2, "another test timeout is graded again");
    let config = cache.path().join("swerve.toml");
    std::fs::write(&config, "[sandbox.limits]\nmax_processes = 300\n").unwrap();
    succeeded(&swerve(
        cache.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "eval",
            "--tasks",
            tasks.to_str().unwrap(),
            "--gold",
            id,
            "--out",
            cache.path().join("fourth").to_str().unwrap(),
        ],
    ));
    assert_eq!(entries(), 3, "other sandbox limits are graded again");
}
