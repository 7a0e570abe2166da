//! `swerve tasks check FILE`: certify a task file before training on it. For each task,
//! prepare its base checkout and environment (the ones rollouts get), grade its gold patch
//! (it must resolve) and an empty patch (FAIL_TO_PASS must fail), each in a fresh workspace,
//! and time every phase. Prints a table and writes `<out>/check.json` (one record per task)
//! and the evaluations' logs under `<out>/logs/{gold,empty}/<instance_id>/`.
//!
//! A task is `ok` when gold resolves and empty does not; `offline` when gold does not
//! resolve and its log shows the tests tried the network or an external download (named, with
//! the evidence, in `reason`); `dataset` when every expected test that failed has an id
//! holding a path of the machine the dataset was made on (SWE-bench's pydicom rows list
//! `[/n/fs/p-swe-bench/temp/…/test_files/x.dcm-data0]`), which no harness reproduces;
//! otherwise `gold_unresolved`, `empty_resolved` or `error`, with the report's error or the
//! failing tests as `reason`. The exit status is 1 if any task is `gold_unresolved`,
//! `empty_resolved` or `error`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;
use swerve_core::Task;
use swerve_core::atomic::write_json_atomically;
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::report::InstanceReport;
use swerve_eval::spec::RecipeTable;

use crate::cli::CheckArgs;
use swerve_rollout::config::Config;
use swerve_rollout::open;

/// One task's check, as written to `check.json`.
#[derive(Debug, Clone, Serialize)]
pub struct TaskCheck {
    pub instance_id: String,
    pub repo: String,
    pub version: Option<String>,
    /// `ok`, `offline`, `dataset`, `gold_unresolved`, `empty_resolved` or `error`.
    pub status: &'static str,
    /// Why the task is not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the gold patch resolves the task.
    pub gold_resolved: bool,
    /// Whether the empty patch leaves the task unresolved (as it must).
    pub empty_fails: bool,
    /// Seconds per phase.
    pub seconds: PhaseSeconds,
}

/// Seconds spent in each phase of a check.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PhaseSeconds {
    /// Preparing the base checkout and the test spec.
    pub base: f64,
    /// Building (cold) or finding (warm) the environment.
    pub environment: f64,
    /// Grading the gold patch: whole evaluation, and its tests alone.
    pub gold: f64,
    pub gold_tests: f64,
    /// Grading the empty patch: whole evaluation, and its tests alone.
    pub empty: f64,
    pub empty_tests: f64,
}

pub fn run(config: &Config, args: &CheckArgs) -> Result<ExitCode> {
    let tasks = open::selected_tasks(&args.file, &args.ids)?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.file));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let recipes =
        RecipeTable::shipped_with(args.recipes.as_deref().or(config.run.recipes.as_deref()))
            .map_err(|error| anyhow::anyhow!("{error}"))?;
    let cache = config.cache()?;
    let repos = config.repo_map(&args.file);
    let images = swerve_rollout::open::TaskImages(config.clone());
    let evaluator = |kind: &str| {
        let mut settings: EvalSettings = config.eval_settings(out.join("logs").join(kind));
        settings.use_cache = false;
        if let Some(seconds) = args.timeout {
            settings.test_timeout = Duration::from_secs_f64(seconds);
        }
        Evaluator {
            cache: &cache,
            repos: &repos,
            recipes: &recipes,
            settings,
            images: Some(&images),
        }
    };
    let (gold, empty) = (evaluator("gold"), evaluator("empty"));
    let checks: Mutex<Vec<Option<TaskCheck>>> = Mutex::new(vec![None; tasks.len()]);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.workers.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(index) else { break };
                    let check = check_task(task, &gold, &empty);
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    eprintln!(
                        "[{finished}/{}] {:<40} {}  {:.1} s",
                        tasks.len(),
                        task.instance_id,
                        check.status,
                        started.elapsed().as_secs_f64()
                    );
                    checks.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(check);
                }
            });
        }
    });
    let checks: Vec<TaskCheck> = checks
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect();
    let json = out.join("check.json");
    write_json_atomically(&json, &checks)
        .with_context(|| format!("cannot write {}", json.display()))?;
    print!("{}", table(&checks));
    let count = |status: &str| checks.iter().filter(|check| check.status == status).count();
    let failed = checks
        .iter()
        .filter(|check| !matches!(check.status, "ok" | "offline" | "dataset"))
        .count();
    println!(
        "{} tasks: {} ok, {} cannot be validated offline, {} with broken expected test ids, {failed} failed; details in {}",
        checks.len(),
        count("ok"),
        count("offline"),
        count("dataset"),
        json.display()
    );
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks one task: base and environment (timed apart), then gold and empty patches.
fn check_task(task: &Task, gold: &Evaluator<'_>, empty: &Evaluator<'_>) -> TaskCheck {
    let mut check = TaskCheck {
        instance_id: task.instance_id.clone(),
        repo: task.repo.clone(),
        version: task.version.clone(),
        status: "error",
        reason: None,
        gold_resolved: false,
        empty_fails: false,
        seconds: PhaseSeconds::default(),
    };
    let environments = gold.environments();
    let started = Instant::now();
    let resolved = environments.resolve(task);
    check.seconds.base = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let prepared = resolved.and_then(|resolved| environments.environment(resolved));
    check.seconds.environment = started.elapsed().as_secs_f64();
    if let Err(error) = prepared {
        check.reason = Some(error.to_string());
        return check;
    }
    let (gold_report, gold_seconds) = timed(|| gold.evaluate(task, task.patch.as_deref()));
    let (empty_report, empty_seconds) = timed(|| empty.evaluate(task, Some("")));
    check.seconds.gold = gold_seconds;
    check.seconds.gold_tests = gold_report.timings.tests.unwrap_or_default();
    check.seconds.empty = empty_seconds;
    check.seconds.empty_tests = empty_report.timings.tests.unwrap_or_default();
    check.gold_resolved = gold_report.resolved;
    check.empty_fails = !empty_report.resolved && empty_report.error_class.is_none();
    (check.status, check.reason) = verdict(&gold_report, &empty_report);
    check
}

fn timed<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let value = work();
    (value, started.elapsed().as_secs_f64())
}

/// The status and reason of a task from its gold and empty reports.
fn verdict(gold: &InstanceReport, empty: &InstanceReport) -> (&'static str, Option<String>) {
    if !gold.resolved {
        let failed = failed_tests(gold);
        let foreign: Vec<&str> = failed
            .iter()
            .filter_map(|test| foreign_path(test))
            .collect();
        if let Some(needs) = &gold.needs_network {
            let mut reason = needs.to_string();
            if !foreign.is_empty() {
                reason.push_str(&format!(
                    "; also {} failing expected tests have ids holding a path of the machine \
                     the dataset was made on ({}…)",
                    foreign.len(),
                    foreign[0]
                ));
            }
            return ("offline", Some(reason));
        }
        if let Some(error) = &gold.error {
            return ("error", Some(format!("gold: {error}")));
        }
        if !failed.is_empty() && foreign.len() == failed.len() {
            return (
                "dataset",
                Some(format!(
                    "the {} failing expected tests have ids holding a path of the machine the \
                     dataset was made on ({}…), which no harness reproduces",
                    failed.len(),
                    foreign[0]
                )),
            );
        }
        return ("gold_unresolved", Some(format!("gold: {}", failing(gold))));
    }
    if empty.resolved {
        return (
            "empty_resolved",
            Some("the empty patch resolves the task: FAIL_TO_PASS passes without a fix".into()),
        );
    }
    if let Some(error) = &empty.error {
        return ("error", Some(format!("empty: {error}")));
    }
    ("ok", None)
}

/// The expected tests that failed (FAIL_TO_PASS and PASS_TO_PASS).
fn failed_tests(report: &InstanceReport) -> Vec<&String> {
    report
        .tests_status
        .iter()
        .flat_map(|status| {
            status
                .fail_to_pass
                .failure
                .iter()
                .chain(&status.pass_to_pass.failure)
        })
        .collect()
}

/// The absolute path outside the sandbox's checkout that a test id holds (a parameter
/// such as `[/n/fs/…/test_files/x.dcm-data0]`), if any.
fn foreign_path(test: &str) -> Option<&str> {
    let start = test.find("[/")? + 1;
    let path = &test[start..];
    let path = &path[..path.find(']').unwrap_or(path.len())];
    (!path.starts_with("/testbed/")).then(|| {
        let end = path.char_indices().nth(40).map_or(path.len(), |(at, _)| at);
        &path[..end]
    })
}

/// The tests that kept an instance from resolving, shortened.
fn failing(report: &InstanceReport) -> String {
    if report.tests_status.is_none() {
        return "no test results".into();
    }
    let failed = failed_tests(report);
    let shown: Vec<&str> = failed.iter().take(3).map(|test| test.as_str()).collect();
    let more = failed.len().saturating_sub(shown.len());
    let mut text = format!("{} tests fail: {}", failed.len(), shown.join(", "));
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// The table printed at the end: one row per task.
pub fn table(checks: &[TaskCheck]) -> String {
    let mut out = format!(
        "{:<40} {:<16} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7}  reason\n",
        "instance", "status", "base", "env", "gold", "tests", "empty", "tests"
    );
    for check in checks {
        let s = &check.seconds;
        out.push_str(&format!(
            "{:<40} {:<16} {:>6.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1}  {}\n",
            check.instance_id,
            check.status,
            s.base,
            s.environment,
            s.gold,
            s.gold_tests,
            s.empty,
            s.empty_tests,
            check.reason.as_deref().unwrap_or("")
        ));
    }
    out
}

/// The default output directory for `file`: `<stem>.check` in the working directory.
pub fn default_out(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    PathBuf::from(format!("{stem}.check"))
}

#[cfg(test)]
mod tests {
    use super::foreign_path;

    #[test]
    fn paths_of_the_dataset_makers_machine_are_found_in_test_ids() {
        assert_eq!(
            foreign_path("t.py::T::test_x[/n/fs/p-swe-bench/temp/x.dcm-data0]"),
            Some("/n/fs/p-swe-bench/temp/x.dcm-data0")
        );
        assert_eq!(
            foreign_path("t.py::T::test_x[/testbed/data/x.dcm-data0]"),
            None
        );
        assert_eq!(foreign_path("t.py::T::test_x[a/b]"), None);
    }
}
