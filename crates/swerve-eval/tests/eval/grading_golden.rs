//! Golden tests: real SWE-bench test logs graded against their tasks' real test lists.
//!
//! `tests/fixtures/logs/` holds the output of each task's tests before (`*.before.log`) and
//! after (`*.after.log`) the gold patch, and the tasks' rows (`tasks.json`, from SWE-bench
//! Lite and SWE-bench dev). The gold patch must resolve its task fully; the unpatched
//! repository must not.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use serde::Deserialize;
use swerve_eval::grading::{self, LogRejection, Resolution};
use swerve_eval::parsers::{self, StatusMap};
use swerve_eval::{EvalType, TestStatus};

#[derive(Deserialize)]
struct Task {
    repo: String,
    instance_id: String,
    #[serde(rename = "FAIL_TO_PASS")]
    fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS")]
    pass_to_pass: Vec<String>,
}

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/logs")
        .join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn task(instance_id: &str) -> Task {
    let tasks: Vec<Task> = serde_json::from_str(&fixture("tasks.json")).unwrap();
    tasks
        .into_iter()
        .find(|t| t.instance_id == instance_id)
        .unwrap()
}

/// The test output wrapped the way SWE-bench's eval script (under `set -x`) brackets it.
fn eval_log(test_output: &str, command: &str, exit_code: i32) -> String {
    format!(
        "+ git apply -v - <<'EOF_114329324912'\n\
         Applied patch testing/test_x.py cleanly.\n\
         + : '>>>>> Start Test Output'\n\
         + {command}\n\
         {test_output}\
         + SWEBENCH_TEST_EXIT_CODE={exit_code}\n\
         + : '>>>>> End Test Output'\n\
         + echo '>>>>> Test Exit Code: {exit_code}'\n\
         >>>>> Test Exit Code: {exit_code}\n\
         + git checkout 0123abc testing/test_x.py\n"
    )
}

fn parse(task: &Task, log: &str) -> StatusMap {
    let name = parsers::parser_for_repo(&task.repo).unwrap();
    parsers::parser(name).unwrap()(log)
}

struct Case {
    instance_id: &'static str,
    log: &'static str,
    command: &'static str,
}

const PYTEST: Case = Case {
    instance_id: "pytest-dev__pytest-11143",
    log: "pytest-11143",
    command: "pytest -rA testing/test_assertrewrite.py",
};
const ASTROID: Case = Case {
    instance_id: "pylint-dev__astroid-1268",
    log: "astroid-1268",
    command: "pytest -rA tests/unittest_nodes.py",
};

fn check_gold_resolves(case: &Case) {
    let task = task(case.instance_id);
    let log = fixture(&format!("{}.after.log", case.log));
    let statuses = parse(&task, &log);
    let tests = grading::grade(
        &statuses,
        &task.fail_to_pass,
        &task.pass_to_pass,
        EvalType::PassAndFail,
    );
    assert_eq!(tests.fail_to_pass.success, task.fail_to_pass);
    assert!(tests.fail_to_pass.failure.is_empty());
    assert_eq!(tests.pass_to_pass.success, task.pass_to_pass);
    assert!(
        tests.pass_to_pass.failure.is_empty(),
        "{:?}",
        tests.pass_to_pass.failure
    );
    assert_eq!(grading::resolution(&tests), Resolution::Full);

    // The same output inside a whole evaluation log passes the validity checks.
    let whole = eval_log(&log, case.command, 0);
    let parser = parsers::parser(parsers::parser_for_repo(&task.repo).unwrap()).unwrap();
    let checked = grading::check_log(&whole, parser).unwrap();
    assert!(!checked.parsed_whole_log);
    assert_eq!(checked.exit_code, Some(0));
    assert_eq!(checked.statuses, statuses);
}

fn check_unpatched_does_not_resolve(case: &Case) {
    let task = task(case.instance_id);
    let log = fixture(&format!("{}.before.log", case.log));
    let statuses = parse(&task, &log);
    for id in &task.fail_to_pass {
        assert_eq!(statuses.get(id), Some(&TestStatus::Failed), "{id}");
    }
    let tests = grading::grade(
        &statuses,
        &task.fail_to_pass,
        &task.pass_to_pass,
        EvalType::PassAndFail,
    );
    assert_eq!(tests.fail_to_pass.failure, task.fail_to_pass);
    assert!(tests.fail_to_pass.success.is_empty());
    assert!(tests.pass_to_pass.failure.is_empty());
    assert_eq!(grading::resolution(&tests), Resolution::No);

    let parser = parsers::parser(parsers::parser_for_repo(&task.repo).unwrap()).unwrap();
    let checked = grading::check_log(&eval_log(&log, case.command, 1), parser).unwrap();
    assert_eq!(checked.exit_code, Some(1));
}

#[test]
fn pytest_11143_gold_patch_resolves() {
    check_gold_resolves(&PYTEST);
}

#[test]
fn pytest_11143_unpatched_does_not_resolve() {
    check_unpatched_does_not_resolve(&PYTEST);
}

#[test]
fn astroid_1268_gold_patch_resolves() {
    check_gold_resolves(&ASTROID);
}

#[test]
fn astroid_1268_unpatched_does_not_resolve() {
    check_unpatched_does_not_resolve(&ASTROID);
}

#[test]
fn pytest_11143_truncated_ids_match_by_prefix() {
    // PASS_TO_PASS lists `test_get_assertion_exprs[assert` and friends: ids SWE-bench cut at
    // the first space of `test_get_assertion_exprs[assert statement not on own line]`.
    let task = task(PYTEST.instance_id);
    let statuses = parse(&task, &fixture("pytest-11143.after.log"));
    let truncated: Vec<&String> = task
        .pass_to_pass
        .iter()
        .filter(|id| id.matches('[').count() > id.matches(']').count())
        .collect();
    assert_eq!(truncated.len(), 10);
    for id in truncated {
        assert!(!statuses.contains_key(id.as_str()), "{id}");
    }
    assert_eq!(
        statuses.get(
            "testing/test_assertrewrite.py::test_get_assertion_exprs[assert statement not on own line]"
        ),
        Some(&TestStatus::Passed)
    );
}

#[test]
fn a_gold_log_with_a_failing_exit_code_is_rejected() {
    // astroid's gold log shows no FAILED or ERROR test, so a failing exit code contradicts it.
    // (pytest's own log cannot show this: the pytester runs inside its tests print FAILED.)
    let task = task(ASTROID.instance_id);
    let log = fixture("astroid-1268.after.log");
    let parser = parsers::parser(parsers::parser_for_repo(&task.repo).unwrap()).unwrap();
    assert_eq!(
        grading::check_log(&eval_log(&log, ASTROID.command, 1), parser),
        Err(LogRejection::ExitCodeWithoutFailure { exit_code: 1 })
    );
}

#[test]
fn reports_for_the_golden_logs_use_swe_bench_keys() {
    let task = task(ASTROID.instance_id);
    let statuses = parse(&task, &fixture("astroid-1268.after.log"));
    let tests = grading::grade(
        &statuses,
        &task.fail_to_pass,
        &task.pass_to_pass,
        EvalType::PassAndFail,
    );
    let mut report = swerve_eval::report::InstanceReport::new(Some("diff --git a/x b/x\n"));
    report.record_grade(tests);
    let file: BTreeMap<String, _> = [(task.instance_id.clone(), report)].into_iter().collect();
    let json = serde_json::to_value(&file).unwrap();
    let entry = &json[&task.instance_id];
    assert_eq!(entry["resolved"], true);
    assert_eq!(entry["patch_is_None"], false);
    assert_eq!(entry["resolution"], "RESOLVED_FULL");
    assert_eq!(
        entry["tests_status"]["FAIL_TO_PASS"]["success"][0],
        "tests/unittest_nodes.py::AsStringTest::test_as_string_unknown"
    );
}
