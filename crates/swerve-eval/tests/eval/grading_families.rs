//! Each family's reward rule on real recorded logs, against the family's own verdicts.
//!
//! `fixtures/r2e-gym/`: real pytest logs recorded as an R2E-Gym image runs its tests
//! (`scripts/make-r2e-gym-fixtures.sh`) and R2E-Gym's own example log, with R2E-Gym rows;
//! `verdicts.json` holds the rewards R2E-Gym's own `_calculate_reward_r2e`, run from its
//! source, gives them (`scripts/r2e-gym-crosscheck.py`). `fixtures/swe-smith/`: SWE-smith's
//! recorded evaluation logs and the reports its own grading wrote for them (SWE-smith's
//! tests/test_logs, commit cf2e649d), and its two validation logs of one task (clean code,
//! bug applied).

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use swerve_core::Task;
use swerve_core::task::parse_tasks;
use swerve_eval::EvalType;
use swerve_eval::evaluate::grade_log;
use swerve_eval::grading::TestsStatus;
use swerve_eval::report::InstanceReport;
use swerve_eval::rule::RewardRule;

fn fixture(path: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rows(path: &str) -> Vec<Task> {
    parse_tasks(&fixture(path), path).unwrap()
}

/// The test command's output as swerve's eval script brackets it (under `set -x`).
fn bracketed(output: &str) -> String {
    format!(
        "+ : '>>>>> Start Test Output'\n+ bash run_tests.sh\n{output}\n+ : '>>>>> End Test Output'\n"
    )
}

fn graded(log: &str, task: &Task) -> InstanceReport {
    let mut report = InstanceReport::new(Some("diff"));
    // The spec's parser is the SWE-bench one; the family's rule brings its own.
    grade_log(&mut report, log, "pytest", EvalType::PassAndFail, task);
    report
}

#[test]
fn r2e_gym_rows_get_r2e_gyms_reward_on_every_recorded_log() {
    let tasks = rows("r2e-gym/rows.json");
    let verdicts: BTreeMap<String, f64> =
        serde_json::from_str(&fixture("r2e-gym/verdicts.json")).unwrap();
    assert_eq!(verdicts.len(), 7);
    for (log_name, reward) in &verdicts {
        let repo = log_name.split('.').next().unwrap();
        let task = tasks.iter().find(|task| task.repo == repo).unwrap();
        assert_eq!(RewardRule::for_task(task), RewardRule::R2eGym);
        let report = graded(&bracketed(&fixture(&format!("r2e-gym/{log_name}"))), task);
        assert_eq!(report.rule, RewardRule::R2eGym);
        assert_eq!(report.error, None, "{log_name}");
        assert_eq!(
            report.resolved,
            *reward == 1.0,
            "{log_name}: R2E-Gym's reward is {reward}"
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["rule"], "r2e-gym");
    }
    // What the earlier rule (the expected PASSED tests must pass) rewarded and R2E-Gym does
    // not: a test the agent added, and a test expected to fail that passes.
    for log_name in ["pager.extra-test.log", "pager.xfail-fixed.log"] {
        assert_eq!(verdicts[log_name], 0.0);
    }
    let pager = tasks.iter().find(|task| task.repo == "pager").unwrap();
    let extra = graded(&bracketed(&fixture("r2e-gym/pager.extra-test.log")), pager);
    let status = extra.tests_status.unwrap();
    assert_eq!(status.fail_to_pass.failure, ["test_agent_reproduction"]);
}

#[test]
fn an_r2e_gym_row_with_a_broken_expectation_is_an_infrastructure_error() {
    let mut task = rows("r2e-gym/rows.json").remove(0);
    task.extra
        .insert("expected_output_json".into(), "not json".into());
    let report = graded(&bracketed(&fixture("r2e-gym/pager.gold.log")), &task);
    assert!(!report.resolved);
    let error = report.error.unwrap();
    assert!(
        error.contains("field \"expected_output_json\" is a string that is not JSON"),
        "{error}"
    );
    assert_eq!(
        report.error_class,
        Some(swerve_eval::report::ErrorClass::Infra)
    );
}

#[test]
fn swe_smith_rows_get_swe_smiths_reports_on_its_recorded_logs() {
    let tasks = rows("swe-smith/rows.json");
    assert_eq!(tasks.len(), 3);
    for task in &tasks {
        assert_eq!(RewardRule::for_task(task), RewardRule::SweSmith);
        let id = &task.instance_id;
        let recorded: serde_json::Value =
            serde_json::from_str(&fixture(&format!("swe-smith/{id}.report.json"))).unwrap();
        let recorded = recorded.get(id.as_str()).unwrap_or(&recorded).clone();
        let report = graded(&fixture(&format!("swe-smith/{id}.eval.log")), task);
        assert_eq!(report.rule, RewardRule::SweSmith);
        assert_eq!(
            report.resolved,
            recorded["resolved"].as_bool().unwrap(),
            "{id}"
        );
        let expected: TestsStatus =
            serde_json::from_value(recorded["tests_status"].clone()).unwrap();
        assert_eq!(report.tests_status.unwrap(), expected, "{id}");
    }
    // SWE-smith's validation logs of the same task: the image's clean code (its "pre-gold"
    // run, the state gold, the bug's reverse, leaves) resolves it; the code with the bug
    // applied (the agent's starting state, an empty patch) does not.
    let pandas = &tasks[0];
    let clean = graded(
        &fixture("swe-smith/pandas-dev__pandas.95280573.pr_53652.clean.log"),
        pandas,
    );
    assert!(clean.resolved);
    let bug = graded(
        &fixture("swe-smith/pandas-dev__pandas.95280573.pr_53652.bug.log"),
        pandas,
    );
    assert!(!bug.resolved);
    assert_eq!(
        bug.tests_status.unwrap().fail_to_pass.failure,
        pandas.fail_to_pass
    );
}

#[test]
fn swe_bench_rows_keep_swe_benchs_rule() {
    let mut task = Task::new("a__b-1", "a/b", "0123abc", "x");
    task.fail_to_pass = vec!["tests/t.py::test_a".into()];
    assert_eq!(RewardRule::for_task(&task), RewardRule::SweBench);
    task.extra.insert(
        "image_name".into(),
        "jyangballin/swesmith.x86_64.a__b.0123abcd".into(),
    );
    assert_eq!(RewardRule::for_task(&task), RewardRule::SweSmith);
    task.extra.insert(
        "image_name".into(),
        "swebench/sweb.eval.x86_64.a_1776_b-1".into(),
    );
    assert_eq!(RewardRule::for_task(&task), RewardRule::SweBench);
}
