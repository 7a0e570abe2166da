//! Reports: SWE-bench's key names and run-report arithmetic.

use serde_json::json;
use swerve_eval::grading::{self, LogRejection, Resolution, TestsStatus};
use swerve_eval::parsers::InvalidMarker;
use swerve_eval::report::{
    ErrorClass, InfraReason, InstanceReport, ReportFile, RunReport, SpecSummary,
};
use swerve_eval::{EvalType, TestStatus};

fn graded(resolved: bool) -> InstanceReport {
    let log = [("t".to_string(), TestStatus::Passed)]
        .into_iter()
        .collect();
    let f2p = vec![if resolved { "t" } else { "u" }.to_string()];
    let mut report = InstanceReport::new(Some("diff --git a/f b/f\n"));
    report.record_grade(grading::grade(&log, &f2p, &[], EvalType::PassAndFail));
    report
}

#[test]
fn instance_report_has_swe_bench_keys_first() {
    let mut report = graded(true);
    report.timings.tests = Some(12.5);
    report.test_exit_code = Some(0);
    report.spec = Some(SpecSummary {
        repo: "pylint-dev/astroid".into(),
        version: Some("2.9".into()),
        log_parser: "pytest".into(),
        eval_type: EvalType::PassAndFail,
        test_command: Some("pytest -rA tests/unittest_nodes.py".into()),
    });
    let file: ReportFile = [("pylint-dev__astroid-1268".to_string(), report)]
        .into_iter()
        .collect();
    let json = serde_json::to_value(&file).unwrap();
    let entry = &json["pylint-dev__astroid-1268"];
    let keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // SWE-bench 5.x's `get_eval_report` (swebench/harness/grading.py) writes these, in this
    // order; `infra_failure_reason` follows `infra_failure` when there is one.
    assert_eq!(
        keys[..6],
        [
            "patch_is_None",
            "patch_exists",
            "patch_successfully_applied",
            "resolved",
            "infra_failure",
            "tests_status"
        ]
    );
    assert_eq!(entry["infra_failure"], false);
    assert!(entry.get("infra_failure_reason").is_none());
    assert_eq!(entry["patch_is_None"], false);
    assert_eq!(entry["patch_exists"], true);
    assert_eq!(entry["patch_successfully_applied"], true);
    assert_eq!(entry["resolved"], true);
    assert_eq!(
        entry["tests_status"],
        json!({
            "FAIL_TO_PASS": {"success": ["t"], "failure": []},
            "PASS_TO_PASS": {"success": [], "failure": []},
            "FAIL_TO_FAIL": {"success": [], "failure": []},
            "PASS_TO_FAIL": {"success": [], "failure": []},
        })
    );
    assert_eq!(entry["resolution"], "RESOLVED_FULL");
    assert_eq!(entry["error_class"], json!(null));
    assert_eq!(entry["timings"], json!({"tests": 12.5}));
    assert_eq!(entry["spec"]["eval_type"], "pass_and_fail");
    // And it reads back, from its own JSON and from SWE-bench's.
    let back: ReportFile = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(serde_json::to_value(&back).unwrap(), json);
    let upstream: ReportFile = serde_json::from_str(
        r#"{"x": {"patch_is_None": false, "patch_exists": true, "patch_successfully_applied": true,
            "resolved": false, "tests_status": {"FAIL_TO_PASS": {"success": [], "failure": ["a"]},
            "PASS_TO_PASS": {"success": ["b"], "failure": []}}}}"#,
    )
    .unwrap();
    let x = &upstream["x"];
    assert_eq!(x.tests_status.as_ref().unwrap().fail_to_pass.failure, ["a"]);
    assert_eq!(x.resolution, None);
}

#[test]
fn ungraded_reports_leave_tests_status_out() {
    let report = InstanceReport::new(None);
    assert!(report.patch_is_none && report.is_empty_patch());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["patch_is_None"], true);
    assert!(json.get("tests_status").is_none());
    assert!(InstanceReport::new(Some("")).is_empty_patch());
    assert!(!InstanceReport::new(Some("")).patch_is_none);
}

#[test]
fn rejections_and_errors_are_recorded() {
    let mut report = InstanceReport::new(Some("p"));
    report.record_rejection(LogRejection::ExitCodeWithoutFailure { exit_code: 2 });
    assert!(!report.patch_successfully_applied && !report.resolved);
    assert_eq!(report.error_class, None);
    assert_eq!(
        serde_json::to_value(&report).unwrap()["log_rejection"],
        json!({"reason": "exit_code_without_failure", "exit_code": 2})
    );

    let mut timed_out = InstanceReport::new(Some("p"));
    timed_out.record_rejection(LogRejection::InvalidMarker {
        marker: InvalidMarker::TestsTimedOut,
    });
    assert_eq!(timed_out.error_class, Some(ErrorClass::Timeout));
    assert_eq!(
        serde_json::to_value(&timed_out).unwrap()["error_class"],
        "timeout"
    );

    let mut broken = InstanceReport::new(Some("p"));
    broken.record_error(ErrorClass::Infra, "sandbox could not start");
    assert_eq!(broken.error.as_deref(), Some("sandbox could not start"));
    assert!(broken.infra_failure && broken.infra_failure_reason.is_none());

    // The patch applied, then the test command could not start: SWE-bench's infra fields
    // say why, and `patch_successfully_applied` still says the patch applied.
    let mut no_runner = InstanceReport::new(Some("p"));
    no_runner.patch_successfully_applied = true;
    no_runner.record_infra(InfraReason::TestRunnerMissing, "cargo is not on PATH");
    let json = serde_json::to_value(&no_runner).unwrap();
    assert_eq!(json["error_class"], "infra");
    assert_eq!(json["infra_failure"], true);
    assert_eq!(json["infra_failure_reason"], "test_runner_missing");
    assert_eq!(json["patch_successfully_applied"], true);
    // A log that cannot be graded keeps what happened to the patch, and a regrade that
    // grades it clears the infra fields with the error.
    let mut applied = InstanceReport::new(Some("p"));
    applied.patch_successfully_applied = true;
    applied.record_rejection(LogRejection::NoTestsRan);
    assert!(applied.patch_successfully_applied && !applied.infra_failure);

    // `>>>>> Reset Failed` in a test log was printed by the tests (swerve's harness never
    // prints it): the tests' error, never infra, so a patch cannot dodge its 0 with it.
    let mut reset = InstanceReport::new(Some("p"));
    reset.record_rejection(LogRejection::InvalidMarker {
        marker: InvalidMarker::ResetFailed,
    });
    assert_eq!(reset.error_class, Some(ErrorClass::TestsErrored));
    assert!(!reset.infra_failure);
    assert_eq!(
        ErrorClass::for_rejection(&LogRejection::InvalidMarker {
            marker: InvalidMarker::PatchApplyFailed
        }),
        Some(ErrorClass::PatchFailed)
    );
    assert_eq!(ErrorClass::for_rejection(&LogRejection::NoTestsRan), None);
}

#[test]
fn regrading_replaces_the_previous_outcome() {
    let mut report = graded(true);
    report.record_rejection(LogRejection::InvalidMarker {
        marker: InvalidMarker::TestsErrored,
    });
    assert_eq!(report.tests_status, None);
    assert_eq!(report.resolution, None);
    assert_eq!(report.error_class, Some(ErrorClass::TestsErrored));
    report.record_grade(graded(true).tests_status.unwrap());
    assert!(report.resolved);
    assert_eq!(report.error_class, None);
    assert_eq!(report.error, None);
    assert_eq!(report.log_rejection, None);
    // An error of the run itself is not a grade's to clear.
    report.record_error(ErrorClass::Infra, "disk full");
    report.record_grade(graded(false).tests_status.unwrap());
    assert_eq!(report.error_class, Some(ErrorClass::Infra));
}

#[test]
fn partial_resolution_is_not_resolved() {
    let log = [("a".to_string(), TestStatus::Passed)]
        .into_iter()
        .collect();
    let mut report = InstanceReport::new(Some("p"));
    let tests: TestsStatus = grading::grade(
        &log,
        &["a".to_string(), "b".to_string()],
        &[],
        EvalType::PassAndFail,
    );
    report.record_grade(tests);
    assert_eq!(report.resolution, Some(Resolution::Partial));
    assert!(!report.resolved);
}

#[test]
fn run_report_counts_like_swe_bench() {
    let tasks: Vec<String> = ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut errored = InstanceReport::new(Some("p"));
    errored.record_error(ErrorClass::PatchFailed, "patch does not apply");
    let mut rejected = InstanceReport::new(Some("p"));
    rejected.record_rejection(LogRejection::NoTestsRan);
    let mut no_runner = InstanceReport::new(Some("p"));
    no_runner.record_infra(InfraReason::TestRunnerMissing, "cargo is not on PATH");
    let mut timed_out = InstanceReport::new(Some("p"));
    timed_out.record_error(ErrorClass::Timeout, "the tests ran too long");
    let results = vec![
        ("a".to_string(), Some(graded(true))),
        ("b".to_string(), Some(graded(false))),
        ("c".to_string(), Some(InstanceReport::new(None))),
        ("d".to_string(), None),
        ("e".to_string(), Some(errored)),
        ("f".to_string(), Some(rejected)),
        ("h".to_string(), Some(no_runner)),
        ("i".to_string(), Some(timed_out)),
        ("zz-not-in-dataset".to_string(), Some(graded(true))),
        ("b".to_string(), Some(graded(true))),
    ];
    let run = RunReport::new(&tasks, &results);
    let json = serde_json::to_value(&run).unwrap();
    // The keys of SWE-bench 5.x's `make_run_report` (swebench/harness/reporting.py, without a
    // Docker client), in its order.
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "total_instances",
            "submitted_instances",
            "completed_instances",
            "resolved_instances",
            "unresolved_instances",
            "infra_failure_instances",
            "ambiguous_failure_instances",
            "empty_patch_instances",
            "error_instances",
            "completed_ids",
            "incomplete_ids",
            "empty_patch_ids",
            "submitted_ids",
            "resolved_ids",
            "unresolved_ids",
            "infra_failure_ids",
            "ambiguous_failure_ids",
            "failure_reasons",
            "error_ids",
            "schema_version",
        ]
    );
    assert_eq!(
        json,
        json!({
            "total_instances": 9,
            "submitted_instances": 9,
            "completed_instances": 3,
            "resolved_instances": 2,
            "unresolved_instances": 1,
            "infra_failure_instances": 1,
            "ambiguous_failure_instances": 1,
            "empty_patch_instances": 1,
            "error_instances": 4,
            "completed_ids": ["a", "b", "f"],
            "incomplete_ids": ["g"],
            "empty_patch_ids": ["c"],
            "submitted_ids": ["a", "b", "c", "d", "e", "f", "h", "i", "zz-not-in-dataset"],
            "resolved_ids": ["a", "b"],
            "unresolved_ids": ["f"],
            "infra_failure_ids": ["h"],
            "ambiguous_failure_ids": ["i"],
            "failure_reasons": {"h": "test_runner_missing", "i": "tests_timed_out"},
            "error_ids": ["d", "e", "h", "i"],
            "schema_version": 2,
        })
    );
    let back: RunReport = serde_json::from_value(serde_json::to_value(&run).unwrap()).unwrap();
    assert_eq!(back, run);
}
