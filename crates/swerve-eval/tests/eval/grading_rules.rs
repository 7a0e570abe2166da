//! Every grading rule, as a table: statuses in a log, the task's lists, and what grading must
//! make of them; then the log-validity rules of `check_log`.

use swerve_eval::grading::{self, LogRejection, Resolution, TestResults, TestsStatus};
use swerve_eval::parsers::{self, InvalidMarker, StatusMap};
use swerve_eval::{EvalType, TestStatus};

use EvalType::{FailOnly, PassAndFail};
use Resolution::{Full, No, Partial};
use TestStatus::{Error, Failed, Passed, Skipped, Xfail};

struct Row {
    rule: &'static str,
    log: &'static [(&'static str, TestStatus)],
    f2p: &'static [&'static str],
    p2p: &'static [&'static str],
    eval_type: EvalType,
    /// (F2P successes, P2P successes); everything else in the lists must fail.
    success: (&'static [&'static str], &'static [&'static str]),
    resolution: Resolution,
}

const ROWS: &[Row] = &[
    Row {
        rule: "PASSED and XFAIL pass FAIL_TO_PASS and PASS_TO_PASS",
        log: &[("a", Passed), ("b", Xfail), ("c", Passed), ("d", Xfail)],
        f2p: &["a", "b"],
        p2p: &["c", "d"],
        eval_type: PassAndFail,
        success: (&["a", "b"], &["c", "d"]),
        resolution: Full,
    },
    Row {
        rule: "FAILED and ERROR fail both lists",
        log: &[("a", Failed), ("b", Error), ("c", Failed), ("d", Error)],
        f2p: &["a", "b"],
        p2p: &["c", "d"],
        eval_type: PassAndFail,
        success: (&[], &[]),
        resolution: No,
    },
    Row {
        rule: "SKIPPED fails FAIL_TO_PASS but maintains PASS_TO_PASS",
        log: &[("a", Skipped), ("b", Passed), ("c", Skipped)],
        f2p: &["a", "b"],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&["b"], &["c"]),
        resolution: Partial,
    },
    Row {
        rule: "a skipped FAIL_TO_PASS test alone is no fix",
        log: &[("a", Skipped), ("c", Passed)],
        f2p: &["a"],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&[], &["c"]),
        resolution: No,
    },
    Row {
        rule: "a test missing from the log fails",
        log: &[("a", Passed)],
        f2p: &["a", "gone"],
        p2p: &["also_gone"],
        eval_type: PassAndFail,
        success: (&["a"], &[]),
        resolution: No,
    },
    Row {
        rule: "a truncated id matches by prefix when all candidates pass",
        log: &[
            ("t.py::f[a b]", Passed),
            ("t.py::f[a c]", Xfail),
            ("t.py::g", Failed),
        ],
        f2p: &["t.py::f[a"],
        p2p: &[],
        eval_type: PassAndFail,
        success: (&["t.py::f[a"], &[]),
        resolution: Full,
    },
    Row {
        rule: "a truncated id matches by prefix when all candidates fail",
        log: &[("t.py::f[a b]", Failed), ("t.py::f[a c]", Error)],
        f2p: &["t.py::f[a"],
        p2p: &[],
        eval_type: PassAndFail,
        success: (&[], &[]),
        resolution: No,
    },
    Row {
        rule: "a truncated id whose candidates disagree is missing",
        log: &[
            ("t.py::f[a b]", Passed),
            ("t.py::f[a c]", Failed),
            ("t.py::h[x y]", Passed),
            ("t.py::h[x z]", Skipped),
        ],
        f2p: &["t.py::f[a"],
        p2p: &["t.py::h[x"],
        eval_type: PassAndFail,
        success: (&[], &[]),
        resolution: No,
    },
    Row {
        rule: "a truncated PASS_TO_PASS id is maintained when its candidates are all skipped",
        log: &[
            ("t.py::f[a b]", Skipped),
            ("t.py::f[a c]", Skipped),
            ("t.py::g[x y]", Skipped),
            ("t.py::g[x z]", Failed),
        ],
        f2p: &[],
        p2p: &["t.py::f[a", "t.py::g[x"],
        eval_type: PassAndFail,
        success: (&[], &["t.py::f[a"]),
        resolution: No,
    },
    Row {
        rule: "a balanced id is never matched by prefix",
        log: &[("t.py::f[a]", Passed), ("t.py::test_ab", Passed)],
        f2p: &["t.py::f[", "t.py::test_a"],
        p2p: &["t.py::f"],
        eval_type: PassAndFail,
        success: (&["t.py::f["], &[]),
        resolution: No,
    },
    Row {
        rule: "fail_only: only FAILED or ERROR fails; missing and skipped tests succeed",
        log: &[
            ("a", Failed),
            ("b", Error),
            ("c", Skipped),
            ("e", Passed),
            ("f", Failed),
        ],
        f2p: &["a", "b", "c", "d"],
        p2p: &["e", "f", "g"],
        eval_type: FailOnly,
        success: (&["c", "d"], &["e", "g"]),
        resolution: No,
    },
    Row {
        rule: "fail_only: an empty log resolves",
        log: &[],
        f2p: &["a", "b"],
        p2p: &["c"],
        eval_type: FailOnly,
        success: (&["a", "b"], &["c"]),
        resolution: Full,
    },
    Row {
        rule: "fail_only: truncated ids are not matched by prefix",
        log: &[("t.py::f[a b]", Failed)],
        f2p: &["t.py::f[a"],
        p2p: &[],
        eval_type: FailOnly,
        success: (&["t.py::f[a"], &[]),
        resolution: Full,
    },
    Row {
        rule: "PARTIAL: some FAIL_TO_PASS pass and every PASS_TO_PASS is maintained",
        log: &[("a", Passed), ("b", Failed), ("c", Passed)],
        f2p: &["a", "b"],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&["a"], &["c"]),
        resolution: Partial,
    },
    Row {
        rule: "NO: a broken PASS_TO_PASS test undoes a full fix",
        log: &[("a", Passed), ("b", Passed), ("c", Failed)],
        f2p: &["a", "b"],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&["a", "b"], &[]),
        resolution: No,
    },
    Row {
        rule: "NO: a partial fix with a regression",
        log: &[("a", Passed), ("b", Failed), ("c", Failed)],
        f2p: &["a", "b"],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&["a"], &[]),
        resolution: No,
    },
    Row {
        rule: "empty FAIL_TO_PASS counts as fully passing",
        log: &[("c", Passed)],
        f2p: &[],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&[], &["c"]),
        resolution: Full,
    },
    Row {
        rule: "empty FAIL_TO_PASS with a regression is NO",
        log: &[("c", Error)],
        f2p: &[],
        p2p: &["c"],
        eval_type: PassAndFail,
        success: (&[], &[]),
        resolution: No,
    },
    Row {
        rule: "both lists empty is FULL",
        log: &[],
        f2p: &[],
        p2p: &[],
        eval_type: PassAndFail,
        success: (&[], &[]),
        resolution: Full,
    },
    Row {
        rule: "unittest ids with spaces match exactly",
        log: &[
            ("test_a (m.tests.T)", Passed),
            ("test_b (m.tests.T)", Skipped),
        ],
        f2p: &["test_a (m.tests.T)"],
        p2p: &["test_b (m.tests.T)"],
        eval_type: PassAndFail,
        success: (&["test_a (m.tests.T)"], &["test_b (m.tests.T)"]),
        resolution: Full,
    },
];

fn strings(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// `tests` split into `success` and the rest, in list order.
fn expected(tests: &[&str], success: &[&str]) -> TestResults {
    TestResults {
        success: strings(
            &tests
                .iter()
                .copied()
                .filter(|t| success.contains(t))
                .collect::<Vec<_>>(),
        ),
        failure: strings(
            &tests
                .iter()
                .copied()
                .filter(|t| !success.contains(t))
                .collect::<Vec<_>>(),
        ),
    }
}

#[test]
fn grading_table() {
    for row in ROWS {
        let log: StatusMap = row.log.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let got = grading::grade(&log, &strings(row.f2p), &strings(row.p2p), row.eval_type);
        let want = TestsStatus {
            fail_to_pass: expected(row.f2p, row.success.0),
            pass_to_pass: expected(row.p2p, row.success.1),
            ..TestsStatus::default()
        };
        assert_eq!(got, want, "{}", row.rule);
        assert_eq!(grading::resolution(&got), row.resolution, "{}", row.rule);
    }
}

#[test]
fn lists_keep_their_order_and_duplicates() {
    let log: StatusMap = [("b".to_string(), Passed)].into_iter().collect();
    let got = grading::grade(&log, &strings(&["z", "b", "a", "b"]), &[], PassAndFail);
    assert_eq!(got.fail_to_pass.success, strings(&["b", "b"]));
    assert_eq!(got.fail_to_pass.failure, strings(&["z", "a"]));
}

#[test]
fn to_fail_lists_use_the_fail_to_pass_rule() {
    let log: StatusMap = [("x".to_string(), Passed), ("y".to_string(), Skipped)]
        .into_iter()
        .collect();
    let lists = strings(&["x", "y", "z"]);
    let mut tests = grading::grade(&log, &[], &[], PassAndFail);
    tests.fail_to_fail = grading::check_tests(&log, &lists, PassAndFail);
    tests.pass_to_fail = grading::check_tests(&log, &lists, FailOnly);
    assert_eq!(tests.fail_to_fail, expected(&["x", "y", "z"], &["x"]));
    assert_eq!(
        tests.pass_to_fail,
        expected(&["x", "y", "z"], &["x", "y", "z"])
    );
    // They do not count towards the resolution.
    assert_eq!(grading::resolution(&tests), Full);
    let json = serde_json::to_value(&tests).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "FAIL_TO_PASS",
            "PASS_TO_PASS",
            "FAIL_TO_FAIL",
            "PASS_TO_FAIL"
        ]
    );
    assert_eq!(
        json["FAIL_TO_FAIL"],
        serde_json::json!({"success": ["x"], "failure": ["y", "z"]})
    );
}

/// A SWE-bench evaluation log around `output`, with the test command's exit code.
fn eval_log(output: &str, exit_code: Option<i32>) -> String {
    let code = exit_code.map_or(String::new(), |c| {
        format!("+ echo '>>>>> Test Exit Code: {c}'\n>>>>> Test Exit Code: {c}\n")
    });
    format!(
        "+ git status\n+ : '>>>>> Start Test Output'\n+ pytest -rA tests/test_fix.py\n{output}+ : '>>>>> End Test Output'\n{code}"
    )
}

const HONEST_FAILURE: &str = "\
=========================== short test summary info ============================
PASSED tests/test_fix.py::test_other
FAILED tests/test_fix.py::test_fix - AssertionError: assert 1 == 2
========================= 1 failed, 1 passed in 0.03s ==========================
";

/// What a patch that prints its own results makes of the same run: the real failure's
/// summary line is replaced by a fake PASSED one (e.g. from a `conftest.py` hook that
/// rewrites the terminal report), but pytest still exits 1.
const FAKE_PASS: &str = "\
=========================== short test summary info ============================
PASSED tests/test_fix.py::test_other
PASSED tests/test_fix.py::test_fix
============================== 2 passed in 0.03s ===============================
";

#[test]
fn fake_passed_lines_with_a_failing_exit_code_are_rejected() {
    let f2p = strings(&["tests/test_fix.py::test_fix"]);
    // Graded on its statuses alone, the fake log would resolve the task...
    let faked = parsers::pytest(FAKE_PASS);
    let tests = grading::grade(&faked, &f2p, &[], PassAndFail);
    assert_eq!(grading::resolution(&tests), Full);
    // ...but the exit code the eval script recorded says the tests failed.
    assert_eq!(
        grading::check_log(&eval_log(FAKE_PASS, Some(1)), parsers::pytest),
        Err(LogRejection::ExitCodeWithoutFailure { exit_code: 1 })
    );
    // Printing a fake exit-code line as well does not help: the last one counts.
    let sneaky = format!("{FAKE_PASS}>>>>> Test Exit Code: 0\n");
    assert_eq!(
        grading::check_log(&eval_log(&sneaky, Some(1)), parsers::pytest),
        Err(LogRejection::ExitCodeWithoutFailure { exit_code: 1 })
    );
    // An honest failing run is graded, and does not resolve.
    let checked = grading::check_log(&eval_log(HONEST_FAILURE, Some(1)), parsers::pytest).unwrap();
    assert_eq!(checked.exit_code, Some(1));
    let tests = grading::grade(&checked.statuses, &f2p, &[], PassAndFail);
    assert_eq!(grading::resolution(&tests), No);
    // A passing run, and a log without an exit code (SWE-bench 4.x), are graded.
    assert!(grading::check_log(&eval_log(FAKE_PASS, Some(0)), parsers::pytest).is_ok());
    assert!(grading::check_log(&eval_log(FAKE_PASS, None), parsers::pytest).is_ok());
}

#[test]
fn logs_with_invalid_markers_or_without_markers_are_rejected() {
    for marker in InvalidMarker::ALL {
        let log = format!("{}{}\n", eval_log(HONEST_FAILURE, Some(1)), marker.text());
        assert_eq!(
            grading::check_log(&log, parsers::pytest),
            Err(LogRejection::InvalidMarker { marker })
        );
    }
    assert_eq!(
        grading::check_log(HONEST_FAILURE, parsers::pytest),
        Err(LogRejection::MissingMarkers)
    );
}

#[test]
fn an_empty_slice_falls_back_to_the_whole_log() {
    // Output that landed outside the markers (stderr ordering) is still found.
    let log = format!("{}{HONEST_FAILURE}", eval_log("", Some(1)));
    let checked = grading::check_log(&log, parsers::pytest).unwrap();
    assert!(checked.parsed_whole_log);
    assert_eq!(checked.statuses.len(), 2);
}

#[test]
fn nothing_parsed_needs_evidence_that_a_suite_ran() {
    let crashed = eval_log("ImportError: cannot import name 'x'\n", Some(1));
    assert_eq!(
        grading::check_log(&crashed, parsers::pytest),
        Err(LogRejection::NoTestsRan)
    );
    // A fail-only runner prints no test names on a clean run, only its summary...
    let clean = eval_log("Executed 12 of 12 SUCCESS (0.4 secs / 0.3 secs)\n", Some(0));
    let checked = grading::check_log(&clean, parsers::pytest).unwrap();
    assert!(checked.statuses.is_empty());
    // ...but a zero count is no evidence.
    let none_ran = eval_log("Executed 0 of 0 ERROR (0.001 secs / 0 secs)\n", Some(1));
    assert_eq!(
        grading::check_log(&none_ran, parsers::pytest),
        Err(LogRejection::NoTestsRan)
    );
}
