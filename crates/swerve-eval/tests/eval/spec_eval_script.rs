//! Tests of `swerve_eval::spec::eval_script`: snapshots for bundled example tasks, the
//! SWE-bench shape, reset of new files, and a task's own v5 script.
//!
//! Snapshots live in `tests/fixtures/spec/*.eval.sh`; run with `SWERVE_UPDATE_SNAPSHOTS=1`
//! to rewrite them after an intended change.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use swerve_core::task::{Task, load_tasks};
use swerve_eval::spec::{RecipeTable, eval_script, resolve_spec};

fn manifest_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn example(instance_id: &str) -> Task {
    load_tasks(&manifest_path("../../examples/tasks/tasks.jsonl"))
        .unwrap()
        .into_iter()
        .find(|task| task.instance_id == instance_id)
        .unwrap()
}

fn nowhere() -> &'static Path {
    Path::new("/nonexistent/swerve-spec-test")
}

fn script_for(task: &Task, recipes: &RecipeTable) -> String {
    let spec = resolve_spec(task, nowhere(), recipes).unwrap();
    eval_script(&spec, task, "/testbed", None)
}

fn assert_snapshot(name: &str, actual: &str) {
    let path = manifest_path("tests/fixtures/spec").join(name);
    if std::env::var_os("SWERVE_UPDATE_SNAPSHOTS").is_some() {
        fs::write(&path, actual).unwrap();
    }
    let expected = fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "{name} differs from the snapshot; got:\n{actual}"
    );
}

#[test]
fn python_example_snapshot() {
    let task = example("swerve-examples__pager-1");
    let script = script_for(&task, &RecipeTable::shipped());
    assert_snapshot("pager-1.eval.sh", &script);
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "#!/bin/bash",
            "set -uxo pipefail",
            "cd /testbed",
            "git status",
            "git show",
            "git -c core.fileMode=false diff 68cc8fca77519d9178a35d647a21e4aacb8bb4fd",
        ]
    );
    assert!(script.contains(
        "git checkout 68cc8fca77519d9178a35d647a21e4aacb8bb4fd tests/test_core.py\ngit apply -v - <<'EOF_114329324912' || echo '>>>>> Tests Errored: the test patch does not apply'\ndiff --git a/tests/test_core.py"
    ));
    assert!(script.ends_with(
        ": '>>>>> Start Test Output'\npython3 -m unittest -v tests.test_core\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\ngit checkout 68cc8fca77519d9178a35d647a21e4aacb8bb4fd tests/test_core.py\n"
    ));
}

#[test]
fn rust_example_snapshot() {
    let task = example("swerve-examples__wrapline-1");
    let script = script_for(&task, &RecipeTable::shipped());
    assert_snapshot("wrapline-1.eval.sh", &script);
    assert!(script.contains(
        ": '>>>>> Start Test Output'\ncargo test --offline --no-fail-fast\nSWEBENCH_TEST_EXIT_CODE=$?\n"
    ));
}

#[test]
fn recipe_env_and_install_are_in_the_script() {
    let mut task = Task::new("octo__demo-2", "octo/demo", "abc1234", "Fix it.");
    task.version = Some("1.0".into());
    task.test_patch = Some(
        "diff --git a/tests/test_old.py b/tests/test_old.py\n--- a/tests/test_old.py\n+++ b/tests/test_old.py\n@@ -1 +1 @@\n-a\n+b\n\
         diff --git a/tests/test new.py b/tests/test new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test new.py\n@@ -0,0 +1 @@\n+x\n"
            .into(),
    );
    let recipes = RecipeTable::parse(
        "[[recipe]]\nrepo = \"octo/demo\"\nversions = [\"1.0\"]\ntest_cmd = \"pytest -rA\"\ninstall = \"python -m pip install -e .\"\nenv = { LANG = \"en_US.UTF-8\", GREETING = \"it's here\" }\n",
        "user.toml",
    )
    .unwrap();
    // A prediction that changes packaging metadata: the editable install is re-run.
    let spec = resolve_spec(&task, nowhere(), &recipes).unwrap();
    let setup_patch =
        "diff --git a/setup.py b/setup.py\n--- a/setup.py\n+++ b/setup.py\n@@ -1 +1 @@\n-a\n+b\n";
    let script = eval_script(&spec, &task, "/testbed", Some(setup_patch));
    let expected_start = "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n\
        export GREETING='it'\\''s here'\nexport LANG=en_US.UTF-8\n\
        git status\ngit show\ngit -c core.fileMode=false diff abc1234\n\
        python -m pip install -e .\n\
        git checkout abc1234 tests/test_old.py\nrm -f 'tests/test new.py'\n\
        git apply -v - <<'EOF_114329324912' || echo '>>>>> Tests Errored: the test patch does not apply'\n";
    assert!(
        script.starts_with(expected_start),
        "script starts:\n{script}"
    );
    assert!(script.ends_with(
        "pytest -rA tests/test_old.py 'tests/test new.py'\nSWEBENCH_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\necho \">>>>> Test Exit Code: $SWEBENCH_TEST_EXIT_CODE\"\ngit checkout abc1234 tests/test_old.py\nrm -f 'tests/test new.py'\n"
    ));

    // No prediction (or one that only edits Python sources): the environment's editable
    // install is kept, and the script says so where the install would run.
    let py_patch = "diff --git a/demo/core.py b/demo/core.py\n--- a/demo/core.py\n+++ b/demo/core.py\n@@ -1 +1 @@\n-a\n+b\n";
    for patch in [None, Some(py_patch)] {
        let script = eval_script(&spec, &task, "/testbed", patch);
        assert!(
            script.contains(
                "git -c core.fileMode=false diff abc1234\n: 'swerve: editable install kept (the patch changes no build input): python -m pip install -e .'\ngit checkout abc1234 tests/test_old.py\n"
            ),
            "{script}"
        );
        assert!(
            !script.contains("\npython -m pip install -e .\n"),
            "{script}"
        );
    }
}

#[test]
fn task_without_test_patch_runs_the_suite() {
    let task = Task::new("octo__demo-3", "octo/demo", "abc1234", "Fix it.");
    let script = script_for(&task, &RecipeTable::default());
    assert!(!script.contains("git apply"));
    assert!(!script.contains("git checkout"));
    assert!(script.contains(": '>>>>> Start Test Output'\npython3 -m unittest -v\n"));
}

#[test]
fn task_eval_script_is_used_verbatim() {
    let own =
        "#!/bin/bash\n# v5\n: '>>>>> Start Test Output'\nmake check\n: '>>>>> End Test Output'\n";
    let mut task = example("swerve-examples__pager-1");
    if let serde_json::Value::Object(extra) = json!({"eval_script": own}) {
        task.extra.extend(extra);
    }
    assert_eq!(script_for(&task, &RecipeTable::shipped()), own);
}

#[test]
fn expected_exit_codes_are_recorded_as_zero_after_the_test_command() {
    let task: Task = serde_json::from_value(json!({
        "instance_id": "a__b-1", "repo": "a/b", "base_commit": "0123abc",
        "problem_statement": "x", "version": "1"
    }))
    .unwrap();
    let recipes = RecipeTable::parse(
        "[[recipe]]\nrepo = \"a/b\"\nversions = [\"1\"]\ntest_cmd = \"timeout 10s npx mocha -R tap t.js\"\nlog_parser = \"tap\"\ndirectives = \"none\"\ntest_exit_codes = [124]\n",
        "recipes.toml",
    )
    .unwrap();
    let script = script_for(&task, &recipes);
    let lines: Vec<&str> = script.lines().collect();
    let at = |text: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(text))
            .unwrap()
    };
    let case = at("case $SWEBENCH_TEST_EXIT_CODE in 124)");
    assert_eq!(case, at("SWEBENCH_TEST_EXIT_CODE=$?") + 1);
    assert_eq!(at(": '>>>>> End Test Output'"), case + 1);
    assert!(lines[case].contains("SWEBENCH_TEST_EXIT_CODE=0 ;; esac"));
    // Run it: 124 becomes 0, any other code stays.
    for (code, recorded) in [(124, "0"), (1, "1"), (0, "0")] {
        let snippet = format!(
            "(exit {code})\nSWEBENCH_TEST_EXIT_CODE=$?\n{}\necho \"$SWEBENCH_TEST_EXIT_CODE\"\n",
            lines[case]
        );
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&snippet)
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert_eq!(stdout.lines().last(), Some(recorded), "{code}: {stdout}");
    }
    // Without the field, no such line.
    let plain = RecipeTable::parse(
        "[[recipe]]\nrepo = \"a/b\"\nversions = [\"1\"]\ntest_cmd = \"npx mocha\"\nlog_parser = \"tap\"\n",
        "recipes.toml",
    )
    .unwrap();
    assert!(!script_for(&task, &plain).contains("case $SWEBENCH_TEST_EXIT_CODE"));
}
