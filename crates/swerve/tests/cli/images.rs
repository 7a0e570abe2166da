//! Tasks that name an image in a registry on loopback (Debian's `docker-registry`, images
//! built by `scripts/test-images.sh`): `swerve run --model replay --eval` and `swerve eval
//! --gold / --empty` give the right verdicts for a SWE-bench-style image (repository at
//! /testbed, conda-style environment activated by the eval script) and an R2E-Gym-style row
//! (docker_image, run_tests.sh, expected_output_json, no base_commit; graded by R2E-Gym's
//! exact-status rule) and a SWE-smith-style row (its `patch` is the bug, applied to the image's
//! code to make the task's starting state, with no history that holds the code before it;
//! gold is the patch reversed); a task whose image does not exist is an error of its own while
//! the others are graded.

use crate::common;
use crate::image_support;

use common::{stdout, succeeded, swerve};

const GOLD_SWE: &str = "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -4,4 +4,4 @@ def add(a, b):\n \n \n def subtract(a, b):\n-    return a + b\n+    return a - b\n";
const TEST_SWE: &str = "diff --git a/tests/test_calc.py b/tests/test_calc.py\n--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -7,3 +7,7 @@ def test_add():\n \n def test_subtract_small():\n     assert subtract(1, 1) == 0\n+\n+\n+def test_subtract():\n+    assert subtract(5, 3) == 2\n";
const GOLD_R2E: &str = "diff --git a/textutil/__init__.py b/textutil/__init__.py\n--- a/textutil/__init__.py\n+++ b/textutil/__init__.py\n@@ -3,4 +3,4 @@ def shout(text):\n \n \n def whisper(text):\n-    return text.upper()\n+    return text.lower()\n";

/// The SWE-smith row's `patch`: a bug put into the image's `add`.
const BUG_SMITH: &str = "diff --git a/calc/__init__.py b/calc/__init__.py\n--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1,5 +1,5 @@\n def add(a, b):\n-    return a + b\n+    return a * b\n \n \n def subtract(a, b):\n";
const SMITH_ID: &str = "swerve__calc.0123abcd.func_pm_op_change__add1";

#[test]
fn image_tasks_are_run_and_graded_in_their_images() {
    let Some(layout) = image_support::layout() else {
        return;
    };
    let registry = image_support::Registry::start(None);
    registry.push(&layout, "swe", "swerve/swe");
    registry.push(&layout, "r2e", "swerve/r2e");
    // SWE-smith names its images `swesmith.<arch>.<owner>_1776_<repo>.<commit>`.
    registry.push(
        &layout,
        "swe",
        "swerve/swesmith.x86_64.swerve_1776_calc.0123abcd",
    );
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let host = registry.host();
    let swe = serde_json::json!({
        "instance_id": "swerve__calc-1", "repo": "swerve/calc", "base_commit": "",
        "image": format!("{host}/swerve/swe:latest"),
        "problem_statement": "subtract(a, b) adds its arguments instead of subtracting them.",
        "patch": GOLD_SWE, "test_patch": TEST_SWE,
        // `python` exists only in the image's activated environment.
        "test_cmd": "python run_pytest.py", "log_parser": "pytest",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_subtract"],
        "PASS_TO_PASS": ["tests/test_calc.py::test_add"]
    });
    let r2e = serde_json::json!({
        "repo_name": "textutil", "docker_image": format!("{host}/swerve/r2e:latest"),
        "commit_hash": "0123456789abcdef0123456789abcdef01234567",
        "problem_statement": "whisper() should lowercase its argument.",
        "patch": GOLD_R2E,
        // As R2E-Gym's rows carry it: `json.dumps(parse_log_pytest(gold's log), indent=4)`,
        // the ids after the file's `::`. Gold reproduces every status; the empty patch's
        // FAILED test_whisper does not.
        "expected_output_json": "{\n    \"test_shout\": \"PASSED\",\n    \"test_whisper\": \"PASSED\"\n}"
    });
    let smith = serde_json::json!({
        "instance_id": SMITH_ID, "repo": "swerve/calc",
        "image_name": format!("{host}/swerve/swesmith.x86_64.swerve_1776_calc.0123abcd:latest"),
        "problem_statement": "add(2, 3) is 6.",
        "patch": BUG_SMITH,
        // The image's runner prints `STATUS ID`; SWE-smith's parser reads pytest's `ID STATUS`.
        "test_cmd": "python run_pytest.py | sed -E 's/^(PASSED|FAILED) (.*)$/\\2 \\1/'",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_add"],
        "PASS_TO_PASS": []
    });
    let missing = serde_json::json!({
        "instance_id": "swerve__missing-1", "repo": "swerve/missing",
        "image": format!("{host}/swerve/missing:latest"),
        "problem_statement": "x", "patch": GOLD_SWE
    });
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(&tasks, format!("{swe}\n{r2e}\n{smith}\n{missing}\n")).unwrap();
    let demos = dir.path().join("demos");
    std::fs::create_dir(&demos).unwrap();
    std::fs::write(demos.join("swerve__calc-1.json"), serde_json::json!({
        "instance_id": "swerve__calc-1", "calls": [
            {"name": "execute_bash", "arguments": {"cmd": "source /opt/miniconda3/bin/activate && conda activate testbed && python -c 'from calc import subtract; print(subtract(5, 3))'"}},
            {"name": "file_editor", "arguments": {"command": "str_replace", "path": "/testbed/calc/__init__.py",
                "old_str": "def subtract(a, b):\n    return a + b", "new_str": "def subtract(a, b):\n    return a - b"}},
            {"name": "finish", "arguments": {"command": "submit"}}]}).to_string()).unwrap();
    // Fixing the bug needs the bug to be there: the edit fails on the image's own code.
    std::fs::write(demos.join(format!("{SMITH_ID}.json")), serde_json::json!({
        "instance_id": SMITH_ID, "calls": [
            {"name": "execute_bash", "arguments": {"cmd": "echo commits=$(git log --all --oneline | wc -l)"}},
            {"name": "file_editor", "arguments": {"command": "str_replace", "path": "/testbed/calc/__init__.py",
                "old_str": "def add(a, b):\n    return a * b", "new_str": "def add(a, b):\n    return a + b"}},
            {"name": "finish", "arguments": {"command": "submit"}}]}).to_string()).unwrap();
    std::fs::write(demos.join("textutil__0123456789ab.json"), serde_json::json!({
        "instance_id": "textutil__0123456789ab", "calls": [
            {"name": "file_editor", "arguments": {"command": "str_replace", "path": "/testbed/textutil/__init__.py",
                "old_str": "def whisper(text):\n    return text.upper()", "new_str": "def whisper(text):\n    return text.lower()"}},
            {"name": "finish", "arguments": {"command": "submit"}}]}).to_string()).unwrap();

    let tasks_arg = tasks.to_str().unwrap();
    // The images are pulled on first use; `swerve images pull --tasks` does it ahead.
    let pulled = swerve(&cache, &["images", "pull", "--tasks", tasks_arg]);
    let text = format!("{}{}", stdout(&pulled), common::stderr(&pulled));
    assert!(
        !pulled.status.success(),
        "the missing image must fail the pull: {text}"
    );
    assert!(
        text.contains("swerve/swe:latest") && text.contains("10 layers"),
        "{text}"
    );
    assert!(text.contains("[unknown_image]"), "{text}");
    let listed = succeeded(&swerve(&cache, &["images", "list"]));
    assert!(listed.contains("3 images"), "{listed}");

    let gold = swerve(
        &cache,
        &[
            "eval",
            "--tasks",
            tasks_arg,
            "--gold",
            "--out",
            dir.path().join("gold").to_str().unwrap(),
        ],
    );
    let text = format!("{}{}", stdout(&gold), common::stderr(&gold));
    assert!(text.contains("3/4 gold patches resolve"), "{text}");
    assert!(
        text.contains("swerve__missing-1") && text.contains("ERROR (infra)"),
        "{text}"
    );
    let report = std::fs::read_to_string(dir.path().join("gold/results.json")).unwrap();
    assert!(
        report.contains("not found"),
        "the unknown image is not named: {report}"
    );
    let report_of = |out: &str, id: &str| {
        let text = std::fs::read_to_string(dir.path().join(out).join("results.json")).unwrap();
        let reports: serde_json::Value = serde_json::from_str(&text).unwrap();
        reports[id].clone()
    };
    let r2e_report = |out: &str| report_of(out, "textutil__0123456789ab");
    // R2E-Gym's rule graded the R2E-Gym row: every expected status reproduced.
    let gold_r2e = r2e_report("gold");
    assert_eq!(gold_r2e["rule"], "r2e-gym", "{gold_r2e}");
    assert_eq!(gold_r2e["resolved"], true, "{gold_r2e}");
    // SWE-smith's rule graded its row, gold being the bug reversed.
    let gold_smith = report_of("gold", SMITH_ID);
    assert_eq!(gold_smith["rule"], "swe-smith", "{gold_smith}");
    assert_eq!(gold_smith["resolved"], true, "{gold_smith}");
    let empty = swerve(
        &cache,
        &[
            "eval",
            "--tasks",
            tasks_arg,
            "--empty",
            "--out",
            dir.path().join("empty").to_str().unwrap(),
        ],
    );
    let text = format!("{}{}", stdout(&empty), common::stderr(&empty));
    assert!(
        text.contains("0/4 tasks resolved with an empty patch"),
        "{text}"
    );
    // The empty patch leaves test_whisper FAILED where the row expects PASSED.
    let empty_r2e = r2e_report("empty");
    assert_eq!(empty_r2e["rule"], "r2e-gym", "{empty_r2e}");
    assert_eq!(empty_r2e["resolved"], false, "{empty_r2e}");
    assert_eq!(
        empty_r2e["tests_status"]["FAIL_TO_PASS"]["failure"],
        serde_json::json!(["test_whisper"]),
        "{empty_r2e}"
    );

    // `tasks check` certifies image tasks in their images: no repository of theirs is
    // anywhere (no --repos), nor a recipe; the missing image is that task's error alone.
    let checked = dir.path().join("check");
    swerve(
        &cache,
        &[
            "tasks",
            "check",
            tasks_arg,
            "--out",
            checked.to_str().unwrap(),
        ],
    );
    let checks: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(checked.join("check.json")).unwrap())
            .unwrap();
    for check in &checks {
        let id = check["instance_id"].as_str().unwrap();
        if id == "swerve__missing-1" {
            assert_eq!(check["status"], "error", "{check}");
            assert!(
                check["reason"].as_str().unwrap().starts_with("image: "),
                "{check}"
            );
        } else {
            assert_eq!(check["status"], "ok", "{check}");
            assert_eq!(check["seconds"]["base"], 0.0, "{check}");
        }
    }
    assert_eq!(checks.len(), 4);

    let run = swerve(
        &cache,
        &[
            "run",
            "--tasks",
            tasks_arg,
            "--model",
            "replay",
            "--demos",
            demos.to_str().unwrap(),
            "--out",
            dir.path().join("run").to_str().unwrap(),
            "--eval=tests",
            "swerve__calc-1",
            "textutil__0123456789ab",
            SMITH_ID,
        ],
    );
    let text = format!("{}{}", stdout(&run), common::stderr(&run));
    assert!(text.contains("3 of 3 graded resolved"), "{text}");
    let preds = std::fs::read_to_string(dir.path().join("run/preds.jsonl")).unwrap();
    assert!(
        preds.contains("return a - b") && preds.contains("text.lower()"),
        "{preds}"
    );
    // The SWE-smith agent started from the bug, in a repository of one commit, and its patch
    // is the bug reversed.
    let trajectory = std::fs::read_to_string(
        dir.path()
            .join("run/trajectories")
            .join(format!("{SMITH_ID}__0.jsonl")),
    )
    .unwrap();
    // (The image's repository has 4 commits in all, 2 in the base's history.)
    assert!(trajectory.contains("commits=1 "), "{trajectory}");
    let smith_pred = preds
        .lines()
        .find(|line| line.contains(SMITH_ID))
        .expect("a prediction for the SWE-smith row");
    assert!(
        smith_pred.contains("-    return a * b\\n+    return a + b"),
        "{smith_pred}"
    );
}
