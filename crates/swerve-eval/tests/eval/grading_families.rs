//! Each family's reward rule on real recorded logs, against the family's own verdicts.
//!
//! `fixtures/r2e-gym/`: real pytest logs recorded as an R2E-Gym image runs its tests
//! (`scripts/make-r2e-gym-fixtures.sh`) and R2E-Gym's own example log, with R2E-Gym rows;
//! `verdicts.json` holds the rewards R2E-Gym's own `_calculate_reward_r2e`, run from its
//! source, gives them (`scripts/r2e-gym-crosscheck.py`). `fixtures/swe-smith/`: SWE-smith's
//! recorded evaluation logs and the reports its own grading wrote for them (SWE-smith's
//! tests/test_logs, commit cf2e649d), and its two validation logs of one task (clean code,
//! bug applied); `fixtures/swe-smith/parsers/`: logs of the runners of the six repositories
//! SWE-smith parses its own way, and `parsers.json`, the status maps SWE-smith's own parsers
//! give them (`scripts/swe-smith-crosscheck.py`, which says where each log comes from).
//! `fixtures/multi-swe-bench/`: real Multi-SWE-bench rows (patches and texts cut), the test
//! output of their gold and empty evaluations in swerve, and `verdicts.json`, what
//! Multi-SWE-bench's own parser and report give those logs
//! (`scripts/multi-swe-bench-crosscheck.py`). `fixtures/families/`: real SWE-bench, SWE-Gym
//! and SWE-rebench rows, the test output of their gold and empty evaluations in images
//! rebuilt offline in each family's layout (`scripts/family-images.py`), and what each
//! family's own harness code says of those logs (`scripts/swe-bench-harness-crosscheck.py`).
//! `fixtures/multilingual/`: real SWE-bench
//! Multilingual rows (SWE-agent's batch format), the test output of their gold and empty
//! evaluations in swerve, and `verdicts.json`, the status maps and resolution SWE-bench's own
//! `get_logs_eval`, parsers and grading give those logs
//! (`scripts/swe-bench-multilingual-crosscheck.py`).

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
fn r2e_gym_gold_is_the_patch_r2e_gyms_code_writes_from_the_rows_parsed_commit() {
    // Real commits of psf/requests parsed by R2E-Gym's own pipeline, with the gold its own
    // `get_patch(test_file=False)` writes (scripts/r2e-gym-gold-fixtures.py): one with a
    // note line ("\\ No newline at end of file"), one where a test file is left out.
    let commits: Vec<serde_json::Value> =
        serde_json::from_str(&fixture("r2e-gym/commits.json")).unwrap();
    assert_eq!(commits.len(), 3);
    let mut task = rows("r2e-gym/rows.json").remove(0);
    assert_eq!(task.patch, None);
    for commit in &commits {
        task.extra.insert(
            swerve_eval::r2e_gym_commit::FIELD.into(),
            commit["parsed_commit_content"].clone(),
        );
        let gold = swerve_eval::rule::gold_patch(&task).unwrap().unwrap();
        assert_eq!(
            gold,
            commit["gold"].as_str().unwrap(),
            "{}",
            commit["commit"]
        );
        let files = commit["files"].as_array().unwrap();
        for file in files.iter().map(|file| file.as_str().unwrap()) {
            assert_eq!(
                gold.contains(&format!("diff --git a/{file} ")),
                !file.starts_with("tests/"),
                "{file}"
            );
        }
    }
    assert!(commits.iter().any(|commit| {
        commit["gold"]
            .as_str()
            .unwrap()
            .contains("\\ No newline at end of file")
    }));
    // A row that has a `patch` keeps it; one without either has no gold.
    task.patch = Some("diff --git a/x.py b/x.py\n".into());
    assert_eq!(
        swerve_eval::rule::gold_patch(&task).unwrap().as_deref(),
        task.patch.as_deref()
    );
    task.patch = None;
    task.extra.remove(swerve_eval::r2e_gym_commit::FIELD);
    assert_eq!(swerve_eval::rule::gold_patch(&task).unwrap(), None);
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
fn swe_smith_parsers_read_every_log_as_swe_smiths_own_do() {
    let expected: BTreeMap<String, BTreeMap<String, String>> =
        serde_json::from_str(&fixture("swe-smith/parsers/parsers.json")).unwrap();
    assert_eq!(expected.len(), 8);
    for (log_name, statuses) in &expected {
        let parse = match log_name.as_str() {
            "default.log" => swerve_eval::parsers::swe_smith,
            name => {
                let repo = name.split('.').next().unwrap().replace("__", "/");
                swerve_eval::parsers::swe_smith::for_repo(&repo)
            }
        };
        let parsed: BTreeMap<String, String> =
            parse(&fixture(&format!("swe-smith/parsers/{log_name}")))
                .into_iter()
                .map(|(id, status)| {
                    (
                        id,
                        serde_json::to_value(status)
                            .unwrap()
                            .as_str()
                            .unwrap()
                            .to_owned(),
                    )
                })
                .collect();
        assert_eq!(&parsed, statuses, "{log_name}");
    }
    // The logs exercise every status each parser knows (autograd's progress-style log is
    // one SWE-smith's pattern does not read at all: nothing, on both sides).
    for (log_name, count) in [
        ("gin-gonic__gin.log", 558),
        ("tornadoweb__tornado.log", 1514),
        ("HIPS__autograd.log", 0),
    ] {
        assert_eq!(expected[log_name].len(), count, "{log_name}");
    }
}

/// A SWE-smith row of `repo` (`owner/name`) with these test lists.
fn swe_smith_row(repo: &str, fail_to_pass: &[&str], pass_to_pass: &[&str]) -> Task {
    let image_repo = repo.replace('/', "__");
    let mut task = Task::new(
        format!("{image_repo}.0123abcd.lm_rewrite__x"),
        format!("swesmith/{image_repo}.0123abcd"),
        "",
        "bug",
    );
    task.fail_to_pass = fail_to_pass.iter().map(|id| (*id).to_owned()).collect();
    task.pass_to_pass = pass_to_pass.iter().map(|id| (*id).to_owned()).collect();
    task.extra.insert(
        "image_name".into(),
        format!(
            "jyangballin/swesmith.x86_64.{}.0123abcd",
            image_repo.to_lowercase()
        )
        .into(),
    );
    task
}

#[test]
fn swe_smith_rows_run_swe_smiths_command_for_their_repository() {
    use swerve_eval::rule::swe_smith_test_command;
    // pytest's (the default): the FAIL_TO_PASS tests' files, to which the lists narrow.
    let pandas = swe_smith_row(
        "pandas-dev/pandas",
        &[
            "pandas/tests/a.py::test_x",
            "pandas/tests/b.py::T::test_y[1 2]",
            "pandas/tests/a.py::test_z",
        ],
        &[],
    );
    let tests = swe_smith_test_command(&pandas);
    assert_eq!(
        tests.command,
        "pytest --disable-warnings --color=no --tb=no --verbose pandas/tests/a.py pandas/tests/b.py"
    );
    assert_eq!(tests.files, ["pandas/tests/a.py", "pandas/tests/b.py"]);
    // mypy's: the tests by name, nothing narrowed.
    let mypy = swe_smith_row(
        "python/mypy",
        &[
            "mypy/test/testcheck.py::TypeCheckSuite::check-classes.test::testA",
            "mypy/test/testcheck.py::TypeCheckSuite::check-x.test::testB",
        ],
        &[],
    );
    let tests = swe_smith_test_command(&mypy);
    assert_eq!(tests.command, "pytest --color=no -rA -k 'testA or testB'");
    assert!(tests.files.is_empty());
    // Runners other than pytest run as the specs say, nothing narrowed.
    for (repo, command) in [
        ("tornadoweb/tornado", "python -m tornado.test --verbose"),
        ("gin-gonic/gin", "go test -v ./..."),
    ] {
        let tests = swe_smith_test_command(&swe_smith_row(repo, &["x"], &[]));
        assert_eq!(
            (tests.command.as_str(), tests.files.len()),
            (command, 0),
            "{repo}"
        );
    }
}

#[test]
fn a_swe_smith_row_of_a_repository_with_its_own_parser_grades_by_it() {
    let log = format!(
        "+ : '>>>>> Start Test Output'\n+ python -m tornado.test --verbose\n{}\n+ : '>>>>> End Test Output'\n",
        fixture("swe-smith/parsers/tornadoweb__tornado.log")
    );
    let passing =
        "test_100_continue (tornado.test.httpserver_test.HTTPConnectionTest.test_100_continue)";
    let erroring = "test_request_timeout (tornado.test.simple_httpclient_test.SimpleHTTPSClientTestCase.test_request_timeout)";
    let other = "test_unknown (tornado.test.nowhere.Nowhere.test_unknown)";
    let parsed = swerve_eval::parsers::swe_smith::tornado(&log);
    assert_eq!(
        parsed.get(passing),
        Some(&swerve_eval::TestStatus::Passed),
        "{passing}"
    );
    // Passing FAIL_TO_PASS, and a PASS_TO_PASS test of another module the log does not
    // show (SWE-smith counts it as passed; no narrowing for tornado's runner).
    let resolved = graded(
        &log,
        &swe_smith_row("tornadoweb/tornado", &[passing], &[other]),
    );
    assert_eq!(
        (resolved.rule, resolved.error.as_deref()),
        (RewardRule::SweSmith, None)
    );
    assert!(resolved.resolved);
    assert_eq!(resolved.tests_status.unwrap().pass_to_pass.success, [other]);
    let failed = graded(
        &log,
        &swe_smith_row("tornadoweb/tornado", &[passing, erroring], &[]),
    );
    assert!(!failed.resolved);
    assert_eq!(
        failed.tests_status.unwrap().fail_to_pass.failure,
        [erroring]
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

/// What Multi-SWE-bench's own code gives one log (`scripts/multi-swe-bench-crosscheck.py`).
#[derive(serde::Deserialize)]
struct MultiSweBenchVerdict {
    /// The passed, failed and skipped sets of the repository's `parse_log`.
    sets: Option<BTreeMap<String, Vec<String>>>,
    resolved: bool,
    reason: String,
}

#[test]
fn multi_swe_bench_rows_get_multi_swe_benchs_verdicts_on_real_logs() {
    let tasks = rows("multi-swe-bench/rows.json");
    let verdicts: BTreeMap<String, MultiSweBenchVerdict> =
        serde_json::from_str(&fixture("multi-swe-bench/verdicts.json")).unwrap();
    assert!(verdicts.len() >= 6, "{} logs", verdicts.len());
    let mut outcomes = (0, 0);
    for (log_name, verdict) in &verdicts {
        let id = log_name.split('.').next().unwrap();
        let task = tasks.iter().find(|t| t.instance_id == id).unwrap();
        assert_eq!(RewardRule::for_task(task), RewardRule::MultiSweBench);
        let log = fixture(&format!("multi-swe-bench/{log_name}"));
        let parse = swerve_eval::parsers::multi_swe_bench::for_repo(&task.repo).unwrap();
        if let Some(sets) = &verdict.sets {
            let mut parsed: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for (test, status) in parse(&log) {
                let set = match status {
                    swerve_eval::TestStatus::Passed => "passed_tests",
                    swerve_eval::TestStatus::Failed => "failed_tests",
                    _ => "skipped_tests",
                };
                parsed.entry(set.to_owned()).or_default().push(test);
            }
            for (set, tests) in sets {
                let mine = parsed.get(set).cloned().unwrap_or_default();
                assert_eq!(&mine, tests, "{log_name}: {set}");
            }
        }
        let report = graded(&log, task);
        assert_eq!(report.rule, RewardRule::MultiSweBench);
        assert!(!report.infra_failure, "{log_name}: {:?}", report.error);
        assert_eq!(
            report.resolved, verdict.resolved,
            "{log_name}: Multi-SWE-bench says {:?}; swerve {:?}",
            verdict.reason, report.tests_status
        );
        match verdict.resolved {
            true => outcomes.0 += 1,
            false => outcomes.1 += 1,
        }
    }
    // The logs hold both outcomes: gold resolving and the empty patch not.
    assert!(outcomes.0 >= 3 && outcomes.1 >= 3, "{outcomes:?}");
}

/// What a harness's own `get_eval_report` gives one log
/// (`scripts/swe-bench-harness-crosscheck.py`).
#[derive(serde::Deserialize)]
struct HarnessVerdict {
    resolved: bool,
    patch_successfully_applied: bool,
    #[serde(rename = "FAIL_TO_PASS_success")]
    fail_to_pass_success: Vec<String>,
    #[serde(rename = "FAIL_TO_PASS_failure")]
    fail_to_pass_failure: Vec<String>,
    #[serde(rename = "PASS_TO_PASS_success")]
    pass_to_pass_success: Vec<String>,
    #[serde(rename = "PASS_TO_PASS_failure")]
    pass_to_pass_failure: Vec<String>,
}

fn sorted(tests: &[String]) -> Vec<String> {
    let mut tests = tests.to_vec();
    tests.sort();
    tests
}

/// `fixtures/families/<family>.jsonl`: real rows; `families/logs/<family>/`: the test output
/// of their gold and empty evaluations in images rebuilt offline in the family's layout
/// (`scripts/family-images.py`); `<family>.verdicts.json`: what the family's own harness
/// code says of each log. swerve, with the spec its recipes give the row, must agree on the
/// verdict and on every test list.
fn swe_bench_shaped_family_agrees_with_its_harness(family: &str) {
    let tasks = rows(&format!("families/{family}.jsonl"));
    let verdicts: BTreeMap<String, HarnessVerdict> =
        serde_json::from_str(&fixture(&format!("families/{family}.verdicts.json"))).unwrap();
    let recipes = swerve_eval::spec::RecipeTable::shipped();
    let mut outcomes = (0, 0);
    for (log_name, verdict) in &verdicts {
        let id = log_name.rsplitn(3, '.').nth(2).unwrap();
        let task = tasks.iter().find(|t| t.instance_id == id).unwrap();
        assert_eq!(RewardRule::for_task(task), RewardRule::SweBench, "{id}");
        let spec = swerve_eval::spec::resolve_spec(
            task,
            std::path::Path::new("/nonexistent/swerve-families"),
            &recipes,
        )
        .unwrap();
        let log = fixture(&format!("families/logs/{family}/{log_name}"));
        let mut report = InstanceReport::new(Some("diff"));
        grade_log(&mut report, &log, &spec.log_parser, spec.eval_type, task);
        assert!(!report.infra_failure, "{log_name}: {:?}", report.error);
        assert_eq!(
            report.patch_successfully_applied, verdict.patch_successfully_applied,
            "{log_name}"
        );
        assert_eq!(report.resolved, verdict.resolved, "{log_name}");
        let status = report.tests_status.expect("graded");
        let lists = [
            (
                &status.fail_to_pass.success,
                &verdict.fail_to_pass_success,
                "FAIL_TO_PASS success",
            ),
            (
                &status.fail_to_pass.failure,
                &verdict.fail_to_pass_failure,
                "FAIL_TO_PASS failure",
            ),
            (
                &status.pass_to_pass.success,
                &verdict.pass_to_pass_success,
                "PASS_TO_PASS success",
            ),
            (
                &status.pass_to_pass.failure,
                &verdict.pass_to_pass_failure,
                "PASS_TO_PASS failure",
            ),
        ];
        for (mine, theirs, which) in lists {
            assert_eq!(&sorted(mine), theirs, "{log_name}: {which}");
        }
        match verdict.resolved {
            true => outcomes.0 += 1,
            false => outcomes.1 += 1,
        }
    }
    // Every row's gold resolves and its empty patch does not, by the harness's own code.
    assert_eq!(outcomes.0, outcomes.1, "{family}: {outcomes:?}");
    assert!(outcomes.0 >= 1, "{family}: {outcomes:?}");
}

#[test]
fn swe_bench_rows_in_rebuilt_images_get_swe_benchs_verdicts() {
    swe_bench_shaped_family_agrees_with_its_harness("swe-bench");
}

#[test]
fn swe_rebench_rows_in_rebuilt_images_get_swe_rebenchs_verdicts() {
    swe_bench_shaped_family_agrees_with_its_harness("swe-rebench");
}

#[test]
fn swe_gym_rows_in_rebuilt_images_get_swe_gyms_verdicts() {
    swe_bench_shaped_family_agrees_with_its_harness("swe-gym");
}

/// What SWE-bench's own code gives one log (`scripts/swe-bench-multilingual-crosscheck.py`).
#[derive(serde::Deserialize)]
struct SweBenchVerdict {
    /// The status map of the repository's parser (`MAP_REPO_TO_PARSER`), `None` when
    /// `get_logs_eval` did not find the test output.
    statuses: Option<BTreeMap<String, String>>,
    resolved: bool,
    status: String,
}

#[test]
fn swe_bench_multilingual_rows_get_swe_benchs_verdicts_on_real_logs() {
    let tasks = rows("multilingual/rows.jsonl");
    let verdicts: BTreeMap<String, SweBenchVerdict> =
        serde_json::from_str(&fixture("multilingual/verdicts.json")).unwrap();
    let recipes = swerve_eval::spec::RecipeTable::shipped();
    let mut outcomes = (0, 0);
    let mut parsers = std::collections::BTreeSet::new();
    for (log_name, verdict) in &verdicts {
        let id = log_name.split('.').next().unwrap();
        let task = tasks.iter().find(|t| t.instance_id == id).unwrap();
        // SWE-bench-shaped rows: SWE-bench's rule, whatever else the batch format carries.
        assert_eq!(RewardRule::for_task(task), RewardRule::SweBench, "{id}");
        // The row's own version picks SWE-bench's spec for it, not the "*" entry that
        // Multi-SWE-bench rows of the same repository use.
        let entry = recipes
            .lookup(&task.repo, task.version.as_deref())
            .unwrap_or_else(|| panic!("{id}: no recipe"));
        assert!(
            entry
                .versions
                .iter()
                .any(|v| Some(v.as_str()) == task.version.as_deref())
        );
        let parser_name = entry.log_parser.unwrap();
        assert_eq!(
            swerve_eval::parsers::parser_for_repo(&task.repo),
            Some(parser_name),
            "{id}"
        );
        parsers.insert(parser_name);
        let log = fixture(&format!("multilingual/{log_name}"));
        let statuses = verdict
            .statuses
            .as_ref()
            .expect("SWE-bench found the test output");
        let output = swerve_eval::parsers::test_output(&log);
        let parse = swerve_eval::parsers::parser(parser_name).unwrap();
        let mine: BTreeMap<String, String> = parse(output.text)
            .into_iter()
            .map(|(test, status)| {
                let status = serde_json::to_value(status).unwrap();
                (test, status.as_str().unwrap().to_owned())
            })
            .collect();
        assert_eq!(&mine, statuses, "{log_name}: status map");
        let mut report = InstanceReport::new(Some("diff"));
        grade_log(&mut report, &log, parser_name, EvalType::PassAndFail, task);
        assert_eq!(report.rule, RewardRule::SweBench);
        assert!(!report.infra_failure, "{log_name}: {:?}", report.error);
        assert_eq!(
            report.resolved, verdict.resolved,
            "{log_name}: SWE-bench says {}; swerve {:?}",
            verdict.status, report.tests_status
        );
        match verdict.resolved {
            true => outcomes.0 += 1,
            false => outcomes.1 += 1,
        }
    }
    // Both outcomes (gold resolving, the empty patch not) and the three languages' parsers.
    assert!(outcomes.0 >= 3 && outcomes.1 >= 3, "{outcomes:?}");
    assert_eq!(
        parsers.into_iter().collect::<Vec<_>>(),
        ["cargo_exact", "jq", "tap"]
    );
}
