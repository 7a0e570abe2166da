//! Which family's reward rule grades a task, and the rules of R2E-Gym and SWE-smith.
//!
//! SWE-bench, SWE-Gym and SWE-rebench rows grade as SWE-bench does ([`crate::grading`]):
//! the `FAIL_TO_PASS` tests must pass and the `PASS_TO_PASS` ones keep passing, a test the
//! log does not show counting as failed.
//!
//! A SWE-smith row (its `image_name` is a `swesmith.` image) grades as SWE-smith's
//! `get_eval_report` does (`swesmith/harness/grading.py`): the tests run with SWE-smith's
//! command for the repository ([`swe_smith_test_command`]); the log is parsed with
//! SWE-smith's parser for the repository ([`crate::parsers::swe_smith::for_repo`]); where
//! the command is pytest's, the test lists are first narrowed to the files of the
//! `FAIL_TO_PASS` tests (the files the command runs); a test succeeds when the log does not
//! show it or shows it PASSED or XFAIL, fails when it shows it FAILED or ERROR, and is left
//! out of both when SKIPPED; resolved when nothing failed.
//!
//! An R2E-Gym row
//! (one with `expected_output_json` and no test lists) is graded by R2E-Gym's own rule,
//! `_calculate_reward_r2e` (`r2egym/agenthub/runtime/docker.py`): the log is parsed with
//! R2E-Gym's parser ([`crate::parsers::r2e_gym`]) and the task is resolved only when the
//! parsed tests are exactly the expected ones, each with exactly the expected status
//! (`FAILED` and `ERROR` expectations included; as many tests parsed as expected).
//!
//! A Multi-SWE-bench row (one with `test_patch_result` and `p2p_tests`) is graded as
//! Multi-SWE-bench's `gen_eval_reports` grades a prediction
//! (`multi_swe_bench/harness/report.py`, `gen_report.py`): the log is parsed with the
//! repository's Multi-SWE-bench parser ([`crate::parsers::multi_swe_bench`]) and compared,
//! test by test, with the row's `test_patch_result` (the run with the test patch alone):
//! resolved when no test that passed there fails, none that passed in `run_result` and was
//! absent or skipped there fails, some test that did not pass there passes, and every test
//! of the row's `p2p_tests`, `f2p_tests`, `s2p_tests` and `n2p_tests` is again in its
//! class (passing now, and passing, failing, skipped or absent with the test patch alone).
//! [`grade_multi_swe_bench`] reports those as `FAIL_TO_PASS` (the last three) and
//! `PASS_TO_PASS` (`p2p_tests` and the tests that broke).
//!
//! The report says which rule applied ([`crate::report::InstanceReport::rule`]). Under
//! R2E-Gym's rule `tests_status.FAIL_TO_PASS` lists every expected test (a success when its
//! status is the expected one) and, as failures, the tests the log shows that the row does
//! not expect.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::Task;

use crate::grading::{TestResults, TestsStatus};
use crate::parsers::StatusMap;
use crate::parsers::r2e_gym::cut;
use crate::reverse::{ReverseError, reverse_patch};
use crate::spec::quote;
use crate::status::TestStatus;

/// The field of an R2E-Gym row holding its expected test statuses.
pub const EXPECTED_FIELD: &str = "expected_output_json";

/// The rule that grades a task's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum RewardRule {
    /// SWE-bench's (`swebench/harness/grading.py`): SWE-bench, SWE-Gym, SWE-rebench,
    /// SWE-smith and every task with test lists.
    #[default]
    #[serde(rename = "swe-bench")]
    SweBench,
    /// R2E-Gym's exact-status rule (`_calculate_reward_r2e`).
    #[serde(rename = "r2e-gym")]
    R2eGym,
    /// SWE-smith's rule (`get_eval_report`): a test not in the log counts as passed.
    #[serde(rename = "swe-smith")]
    SweSmith,
    /// Multi-SWE-bench's (`Report.check` and `gen_eval_reports`): the whole log against
    /// the row's test-patch run, every expected test in its class.
    #[serde(rename = "multi-swe-bench")]
    MultiSweBench,
}

impl RewardRule {
    /// The rule for `task`: R2E-Gym's for a row with `expected_output_json` and neither
    /// `FAIL_TO_PASS` nor `PASS_TO_PASS`, SWE-smith's for a row whose `image_name` is a
    /// SWE-smith image (`[REGISTRY/]swesmith.ARCH.OWNER__REPO.COMMIT`), Multi-SWE-bench's
    /// for a row with its `test_patch_result` and `p2p_tests`, SWE-bench's otherwise.
    pub fn for_task(task: &Task) -> Self {
        if is_multi_swe_bench(task) {
            Self::MultiSweBench
        } else if task.fail_to_pass.is_empty()
            && task.pass_to_pass.is_empty()
            && task.extra.contains_key(EXPECTED_FIELD)
        {
            Self::R2eGym
        } else if is_swe_smith(task) {
            Self::SweSmith
        } else {
            Self::SweBench
        }
    }
}

/// ANSI colour codes, which R2E-Gym removes from the expected ids (`decolor_dict_keys`).
static COLOUR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[\d+m").expect("colour pattern is valid"));

/// The expected statuses of an R2E-Gym row, keyed as `_calculate_reward_r2e` keys them
/// (colour codes removed, cut at the first ` - `, later ids in sorted order winning).
/// `expected_output_json` may be a JSON-encoded string (as on the hub) or an object.
pub fn r2e_gym_expected(task: &Task) -> Result<BTreeMap<String, Value>, String> {
    let bad = |problem: &str| {
        format!(
            "task {}: field \"{EXPECTED_FIELD}\" {problem}; it must map test ids to statuses, e.g. {{\"test_a\": \"PASSED\"}}",
            task.instance_id
        )
    };
    let object = match task.extra.get(EXPECTED_FIELD) {
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Object(object)) => object,
            Ok(_) => return Err(bad("is a JSON string that does not hold an object")),
            Err(_) => return Err(bad("is a string that is not JSON")),
        },
        Some(Value::Object(object)) => object.clone(),
        Some(_) => return Err(bad("is neither an object nor a JSON-encoded one")),
        None => return Err(bad("is missing")),
    };
    let decoloured: BTreeMap<String, Value> = object
        .into_iter()
        .map(|(id, status)| (COLOUR.replace_all(&id, "").into_owned(), status))
        .collect();
    Ok(decoloured
        .into_iter()
        .map(|(id, status)| (cut(&id).to_owned(), status))
        .collect())
}

/// Grades R2E-Gym's way: `statuses` (from [`crate::parsers::r2e_gym`]) against `expected`
/// (from [`r2e_gym_expected`]). Resolved (no failure anywhere) exactly when R2E-Gym's
/// reward is 1.
pub fn grade_r2e_gym(statuses: &StatusMap, expected: &BTreeMap<String, Value>) -> TestsStatus {
    let status_name = |id: &str| {
        statuses
            .get(id)
            .and_then(|status| serde_json::to_value(status).ok())
    };
    let (mut success, mut failure) = (Vec::new(), Vec::new());
    for (id, want) in expected {
        match status_name(id).as_ref() == Some(want) {
            true => success.push(id.clone()),
            false => failure.push(id.clone()),
        }
    }
    failure.extend(
        statuses
            .keys()
            .filter(|id| !expected.contains_key(*id))
            .cloned(),
    );
    TestsStatus {
        fail_to_pass: TestResults { success, failure },
        ..TestsStatus::default()
    }
}

/// SWE-smith's pytest command (`TEST_PYTEST`, `swesmith/constants.py`), its default.
const SWE_SMITH_PYTEST: &str = "pytest --disable-warnings --color=no --tb=no --verbose";

/// The repositories whose test command in SWE-smith's specs (`MAP_REPO_TO_SPECS`) is not
/// [`SWE_SMITH_PYTEST`] (each has one commit there).
const SWE_SMITH_TEST_COMMANDS: [(&str, &str); 8] = [
    ("gin-gonic/gin", "go test -v ./..."),
    (
        "jax-ml/jax",
        "pytest --disable-warnings --color=no --tb=no --verbose -n auto",
    ),
    (
        "mido/mido",
        "pytest --disable-warnings --color=no --tb=no --verbose -rs -c /dev/null",
    ),
    (
        "paramiko/paramiko",
        "pytest -rA --color=no --disable-warnings",
    ),
    (
        "pydantic/pydantic",
        "/root/.local/bin/uv run pytest --disable-warnings --color=no --tb=no --verbose",
    ),
    ("python/mypy", "pytest --color=no -rA -k"),
    (
        "tkrajina/gpxpy",
        "pytest test.py --verbose --color=no --tb=no --disable-warnings",
    ),
    ("tornadoweb/tornado", "python -m tornado.test --verbose"),
];

/// The repository whose test command SWE-smith builds from the test names
/// (`MAP_REPO_TO_TEST_CMD`): `-k "name or name"`.
const SWE_SMITH_BY_NAME: &str = "python/mypy";

/// How SWE-smith tests a row (`get_test_command`, `swesmith/harness/utils.py`, for an
/// evaluation: the row has `FAIL_TO_PASS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweSmithTests {
    /// The whole shell command.
    pub command: String,
    /// The files the command runs, to which the test lists are narrowed; empty when it
    /// runs what the repository's command runs (nothing is narrowed).
    pub files: Vec<String>,
}

/// SWE-smith's test command for `task`: the repository's command from its specs (pytest's
/// by default); a pytest command runs the `FAIL_TO_PASS` tests' files, or, for mypy, the
/// tests named with `-k`. Commands of other runners (go, tornado's, unittest's) run as
/// they are. The `minimal_testing` selection SWE-smith applies when validating (rows
/// without `FAIL_TO_PASS`) is not made: such a row runs the repository's command.
pub fn swe_smith_test_command(task: &Task) -> SweSmithTests {
    let repo = swe_smith_repo(task);
    let command = SWE_SMITH_TEST_COMMANDS
        .iter()
        .find(|(name, _)| *name == repo)
        .map_or(SWE_SMITH_PYTEST, |(_, command)| command);
    let runs = |command: String, files: Vec<String>| SweSmithTests { command, files };
    if task.fail_to_pass.is_empty() || !command.contains("pytest") {
        return runs(command.to_owned(), Vec::new());
    }
    if repo == SWE_SMITH_BY_NAME {
        let names: Vec<&str> = task
            .fail_to_pass
            .iter()
            .map(|id| id.rsplit("::").next().unwrap_or(id))
            .collect();
        let names = names.join(" or ");
        return runs(format!("{command} {}", quote(&names)), Vec::new());
    }
    let mut files: Vec<String> = task
        .fail_to_pass
        .iter()
        .map(|id| id.split("::").next().unwrap_or(id).to_owned())
        .collect();
    files.sort_unstable();
    files.dedup();
    let arguments: Vec<String> = files.iter().map(|file| quote(file)).collect();
    runs(format!("{command} {}", arguments.join(" ")), files)
}

/// The repository SWE-smith grades `task` as: its instance id up to the first `.`, with
/// `__` as `/` (`pandas-dev__pandas.95280573.pr_53652` is `pandas-dev/pandas`).
pub fn swe_smith_repo(task: &Task) -> String {
    let head = task.instance_id.split('.').next().unwrap_or("");
    head.replace("__", "/")
}

/// Whether `task` is a SWE-smith row: its `image_name`'s last path part starts `swesmith.`.
pub fn is_swe_smith(task: &Task) -> bool {
    task.extra
        .get("image_name")
        .and_then(Value::as_str)
        .and_then(|image| image.rsplit('/').next())
        .is_some_and(|name| name.starts_with("swesmith."))
}

/// Grades SWE-smith's way (`get_eval_report`, `get_eval_tests_report`): `statuses` (from
/// the repository's parser, [`crate::parsers::swe_smith::for_repo`]) against the row's
/// lists, narrowed to the files SWE-smith's command runs ([`SweSmithTests::files`]).
pub fn grade_swe_smith(statuses: &StatusMap, task: &Task) -> TestsStatus {
    let files = swe_smith_test_command(task).files;
    let relevant =
        |id: &&String| files.is_empty() || files.iter().any(|file| id.starts_with(file.as_str()));
    let sort = |tests: &[String]| {
        let mut results = TestResults::default();
        for id in tests.iter().filter(relevant) {
            match statuses.get(id) {
                None | Some(TestStatus::Passed | TestStatus::Xfail) => {
                    results.success.push(id.clone());
                }
                Some(TestStatus::Failed | TestStatus::Error) => results.failure.push(id.clone()),
                Some(TestStatus::Skipped) => {}
            }
        }
        results
    };
    TestsStatus {
        fail_to_pass: sort(&task.fail_to_pass),
        pass_to_pass: sort(&task.pass_to_pass),
        ..TestsStatus::default()
    }
}

/// The fields of a Multi-SWE-bench row the rule reads: the runs with the test patch alone
/// and without patches, and the test classes.
const MULTI_SWE_BENCH_TEST_RUN: &str = "test_patch_result";
const MULTI_SWE_BENCH_PLAIN_RUN: &str = "run_result";
const MULTI_SWE_BENCH_CLASSES: [&str; 4] = ["p2p_tests", "f2p_tests", "s2p_tests", "n2p_tests"];

/// Every field of a Multi-SWE-bench row its verdict depends on.
pub const MULTI_SWE_BENCH_FIELDS: [&str; 6] = [
    MULTI_SWE_BENCH_PLAIN_RUN,
    MULTI_SWE_BENCH_TEST_RUN,
    MULTI_SWE_BENCH_CLASSES[0],
    MULTI_SWE_BENCH_CLASSES[1],
    MULTI_SWE_BENCH_CLASSES[2],
    MULTI_SWE_BENCH_CLASSES[3],
];

/// Whether `task` is a Multi-SWE-bench row: it carries the test-patch run and `p2p_tests`.
pub fn is_multi_swe_bench(task: &Task) -> bool {
    task.extra.contains_key(MULTI_SWE_BENCH_TEST_RUN) && task.extra.contains_key("p2p_tests")
}

/// A test's status in a Multi-SWE-bench run (`TestStatus` of `test_result.py`): `NONE` is
/// absent from the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunStatus {
    Pass,
    Fail,
    Skip,
    None,
}

/// A run of a Multi-SWE-bench row (`run_result`, `test_patch_result`): test → status.
fn multi_swe_bench_run(task: &Task, field: &str) -> Result<BTreeMap<String, RunStatus>, String> {
    let bad = |problem: String| {
        format!(
            "task {}: field \"{field}\" {problem}; it must hold passed_tests, failed_tests and skipped_tests, lists of test names",
            task.instance_id
        )
    };
    let run = task
        .extra
        .get(field)
        .and_then(Value::as_object)
        .ok_or_else(|| bad("is missing or not an object".into()))?;
    let mut statuses = BTreeMap::new();
    for (key, status) in [
        ("passed_tests", RunStatus::Pass),
        ("failed_tests", RunStatus::Fail),
        ("skipped_tests", RunStatus::Skip),
    ] {
        let names = run
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("has no list \"{key}\"")))?;
        for name in names {
            let name = name
                .as_str()
                .ok_or_else(|| bad(format!("has a non-string item in \"{key}\"")))?;
            if statuses.insert(name.to_owned(), status).is_some() {
                return Err(bad(format!("names {name:?} in two lists")));
            }
        }
    }
    Ok(statuses)
}

/// Grades Multi-SWE-bench's way (see the module's documentation): `statuses` (from
/// [`crate::parsers::multi_swe_bench::for_repo`]) against the row's runs and classes.
/// Resolved (no failure anywhere) exactly when Multi-SWE-bench's report on this log is
/// valid and holds every expected test in its class. `Err` when the row's fields cannot be
/// read (the machinery's failure, not the model's).
pub fn grade_multi_swe_bench(statuses: &StatusMap, task: &Task) -> Result<TestsStatus, String> {
    let plain = multi_swe_bench_run(task, MULTI_SWE_BENCH_PLAIN_RUN)?;
    let with_tests = multi_swe_bench_run(task, MULTI_SWE_BENCH_TEST_RUN)?;
    let now = |name: &str| match statuses.get(name) {
        Some(TestStatus::Passed | TestStatus::Xfail) => RunStatus::Pass,
        Some(TestStatus::Failed | TestStatus::Error) => RunStatus::Fail,
        Some(TestStatus::Skipped) => RunStatus::Skip,
        None => RunStatus::None,
    };
    let before = |run: &BTreeMap<String, RunStatus>, name: &str| {
        run.get(name).copied().unwrap_or(RunStatus::None)
    };
    let mut status = TestsStatus::default();
    // Each expected test must be in its class again: passing now, with the test-patch run's
    // status the class names.
    for (class, wanted) in MULTI_SWE_BENCH_CLASSES.into_iter().zip([
        RunStatus::Pass,
        RunStatus::Fail,
        RunStatus::Skip,
        RunStatus::None,
    ]) {
        let Some(tests) = task.extra.get(class).and_then(Value::as_object) else {
            continue;
        };
        let results = match class {
            "p2p_tests" => &mut status.pass_to_pass,
            _ => &mut status.fail_to_pass,
        };
        for name in tests.keys() {
            match before(&with_tests, name) == wanted && now(name) == RunStatus::Pass {
                true => results.success.push(name.clone()),
                false => results.failure.push(name.clone()),
            }
        }
    }
    // The whole log: a log without tests, a test that broke, an anomalous one (`Report.check`).
    let mut broken: Vec<String> = statuses
        .iter()
        .filter(|(name, seen)| {
            let was = before(&with_tests, name);
            let failing = now(name) == RunStatus::Fail;
            let error = **seen == TestStatus::Error;
            let anomalous = matches!(was, RunStatus::None | RunStatus::Skip)
                && before(&plain, name) == RunStatus::Pass;
            error || (failing && (was == RunStatus::Pass || anomalous))
        })
        .map(|(name, _)| name.clone())
        .filter(|name| {
            !status.pass_to_pass.failure.contains(name)
                && !status.fail_to_pass.failure.contains(name)
        })
        .collect();
    status.pass_to_pass.failure.append(&mut broken);
    let fixed = statuses
        .keys()
        .any(|name| before(&with_tests, name) != RunStatus::Pass && now(name) == RunStatus::Pass);
    if !fixed && status.fail_to_pass.failure.is_empty() {
        status
            .fail_to_pass
            .failure
            .push("(no test passes that did not pass with the test patch alone)".into());
    }
    Ok(status)
}

/// Why a row's gold patch cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum GoldError {
    /// A SWE-smith row's bug does not reverse.
    #[error(transparent)]
    Reverse(#[from] ReverseError),
    /// An R2E-Gym row's parsed commit is not readable.
    #[error(transparent)]
    R2eGymCommit(#[from] crate::r2e_gym_commit::CommitError),
}

/// The patch that resolves `task` by its family's rule: the reverse of `patch` for a
/// SWE-smith row (its `patch` is the bug); for an R2E-Gym row without a `patch`, the fix
/// its `parsed_commit_content` holds ([`crate::r2e_gym_commit`]); `patch` itself otherwise.
/// `Ok(None)` when the row has none.
pub fn gold_patch(task: &Task) -> Result<Option<String>, GoldError> {
    match (RewardRule::for_task(task), task.patch.as_deref()) {
        (RewardRule::R2eGym, None) => match task.extra.get(crate::r2e_gym_commit::FIELD) {
            Some(commit) => Ok(Some(crate::r2e_gym_commit::gold_patch(commit)?)),
            None => Ok(None),
        },
        (_, None) => Ok(None),
        (RewardRule::SweSmith, Some(bug)) => Ok(Some(reverse_patch(bug)?)),
        (_, Some(patch)) => Ok(Some(patch.to_owned())),
    }
}

/// The patch that makes `task`'s starting state from its image's code: a SWE-smith row's
/// `patch`, the bug (SWE-smith's task branch is the image's commit with it applied,
/// `swesmith/harness/gather.py`); nothing for other families.
pub fn starting_patch(task: &Task) -> Option<&str> {
    (RewardRule::for_task(task) == RewardRule::SweSmith)
        .then_some(task.patch.as_deref())
        .flatten()
        .filter(|patch| !patch.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::grading::Resolution;

    /// A Multi-SWE-bench row: `a` failed with the test patch (f2p), `b` passed (p2p), `c`
    /// passed without patches and was not run with the test patch (n2p), `d` passed there
    /// and is not expected.
    fn row() -> Task {
        let run = |passed: &[&str], failed: &[&str]| {
            json!({"passed_count": passed.len(), "failed_count": failed.len(), "skipped_count": 0,
                   "passed_tests": passed, "failed_tests": failed, "skipped_tests": []})
        };
        serde_json::from_value(json!({
            "org": "o", "repo": "r", "number": 1, "base": {"sha": "abc1234"},
            "title": "t", "body": "b", "fix_patch": "", "test_patch": "",
            "p2p_tests": {"b": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
            "f2p_tests": {"a": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
            "s2p_tests": {},
            "n2p_tests": {"c": {"run": "PASS", "test": "NONE", "fix": "PASS"}},
            "run_result": run(&["b", "c", "d"], &[]),
            "test_patch_result": run(&["b", "d"], &["a"]),
        }))
        .unwrap()
    }

    fn statuses(entries: &[(&str, TestStatus)]) -> StatusMap {
        entries.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    fn resolved(entries: &[(&str, TestStatus)]) -> bool {
        let graded = grade_multi_swe_bench(&statuses(entries), &row()).unwrap();
        crate::grading::resolution(&graded) == Resolution::Full
    }

    use TestStatus::*;

    #[test]
    fn multi_swe_bench_rows_get_their_rule() {
        assert_eq!(RewardRule::for_task(&row()), RewardRule::MultiSweBench);
        assert_eq!(row().fail_to_pass, ["a", "c"]);
    }

    #[test]
    fn every_expected_test_passing_and_nothing_broken_resolves() {
        assert!(resolved(&[
            ("a", Passed),
            ("b", Passed),
            ("c", Passed),
            ("d", Passed)
        ]));
        // A test not expected may be absent or skipped, as Multi-SWE-bench allows.
        assert!(resolved(&[("a", Passed), ("b", Passed), ("c", Passed)]));
        assert!(resolved(&[
            ("a", Passed),
            ("b", Passed),
            ("c", Passed),
            ("d", Skipped)
        ]));
    }

    #[test]
    fn an_expected_test_not_passing_does_not_resolve() {
        assert!(!resolved(&[("a", Failed), ("b", Passed), ("c", Passed)]));
        assert!(!resolved(&[("b", Passed), ("c", Passed)]));
        assert!(!resolved(&[("a", Passed), ("b", Skipped), ("c", Passed)]));
        assert!(!resolved(&[]));
    }

    #[test]
    fn a_test_that_passed_with_the_test_patch_and_now_fails_does_not_resolve() {
        assert!(!resolved(&[
            ("a", Passed),
            ("b", Passed),
            ("c", Passed),
            ("d", Failed)
        ]));
        let graded = grade_multi_swe_bench(
            &statuses(&[("a", Passed), ("b", Passed), ("c", Passed), ("d", Failed)]),
            &row(),
        )
        .unwrap();
        assert_eq!(graded.pass_to_pass.failure, ["d"]);
    }

    #[test]
    fn an_anomalous_or_doubly_reported_test_does_not_resolve() {
        // `e` passed without patches, was absent with the test patch, fails now.
        let mut task = row();
        task.extra["run_result"]["passed_tests"] = json!(["b", "c", "d", "e"]);
        let log = statuses(&[("a", Passed), ("b", Passed), ("c", Passed), ("e", Failed)]);
        let graded = grade_multi_swe_bench(&log, &task).unwrap();
        assert_eq!(crate::grading::resolution(&graded), Resolution::No);
        assert_eq!(graded.pass_to_pass.failure, ["e"]);
        assert!(!resolved(&[
            ("a", Passed),
            ("b", Passed),
            ("c", Passed),
            ("x", Error)
        ]));
    }

    #[test]
    fn an_unreadable_run_is_the_machinery_s_failure() {
        let mut task = row();
        task.extra["test_patch_result"] = json!({"passed_tests": ["a"]});
        let error = grade_multi_swe_bench(&StatusMap::new(), &task).unwrap_err();
        assert!(error.contains("test_patch_result"), "{error}");
        assert!(error.contains("failed_tests"), "{error}");
    }
}
