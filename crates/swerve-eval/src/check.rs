//! Certifying a task before training on it: prepare its base checkout and environment (the
//! ones rollouts get), grade its gold patch (it must resolve) and an empty patch
//! (FAIL_TO_PASS must fail), each with its own [`Evaluator`], and time every phase
//! ([`check_task`], one [`TaskCheck`] record per task).
//!
//! A task is `ok` when gold resolves and empty does not; `offline` when gold does not
//! resolve and its log shows the tests tried the network or an external download (named, with
//! the evidence, in `reason`); `dataset` when every expected test that failed has an id
//! holding a path of the machine the dataset was made on (SWE-bench's pydicom rows list
//! `[/n/fs/p-swe-bench/temp/…/test_files/x.dcm-data0]`), which no harness reproduces;
//! otherwise `gold_unresolved`, `empty_resolved` or `error`, with the report's error or the
//! failing tests as `reason`.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use swerve_core::Task;

use crate::evaluate::Evaluator;
use crate::report::InstanceReport;

/// What a task's check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Gold resolves and an empty patch does not.
    Ok,
    /// Gold fails and its tests tried the network or a download.
    Offline,
    /// Every failing expected test's id holds a path of the dataset maker's machine.
    Dataset,
    /// Gold fails for no reason outside the task.
    GoldUnresolved,
    /// An empty patch resolves the task.
    EmptyResolved,
    /// The task could not be checked (its environment, its patch, an evaluation's error).
    Error,
}

impl CheckStatus {
    /// Every status, in the order tables list them.
    pub const ALL: [Self; 6] = [
        Self::Ok,
        Self::Offline,
        Self::Dataset,
        Self::GoldUnresolved,
        Self::EmptyResolved,
        Self::Error,
    ];

    /// The status's name, as in `check.json`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Offline => "offline",
            Self::Dataset => "dataset",
            Self::GoldUnresolved => "gold_unresolved",
            Self::EmptyResolved => "empty_resolved",
            Self::Error => "error",
        }
    }

    /// Whether the task failed its check: neither fit to grade with (`ok`) nor unfit for a
    /// reason outside swerve that the check names (`offline`, `dataset`).
    #[must_use]
    pub const fn failed(self) -> bool {
        matches!(
            self,
            Self::GoldUnresolved | Self::EmptyResolved | Self::Error
        )
    }
}

impl std::fmt::Display for CheckStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One task's check, as written to `check.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskCheck {
    /// The task's instance id.
    pub instance_id: String,
    /// The task's repository (`owner/name`).
    pub repo: String,
    /// The task's version, if it has one.
    pub version: Option<String>,
    /// What the check found.
    pub status: CheckStatus,
    /// Why the task is not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the gold patch resolves the task.
    pub gold_resolved: bool,
    /// Whether the empty patch leaves the task unresolved (as it must).
    pub empty_fails: bool,
    /// Seconds per phase.
    pub seconds: PhaseSeconds,
}

/// Seconds spent in each phase of a check.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseSeconds {
    /// Preparing the base checkout and the test spec.
    pub base: f64,
    /// Building (cold) or finding (warm) the environment.
    pub environment: f64,
    /// Grading the gold patch: whole evaluation, and its tests alone.
    pub gold: f64,
    /// The gold patch's tests alone.
    pub gold_tests: f64,
    /// Grading the empty patch: whole evaluation, and its tests alone.
    pub empty: f64,
    /// The empty patch's tests alone.
    pub empty_tests: f64,
}

/// Checks one task: base and environment (timed apart, prepared through `gold`'s
/// environments), or its image, then the gold patch graded by `gold` and an empty patch
/// graded by `empty`.
pub fn check_task(task: &Task, gold: &Evaluator<'_>, empty: &Evaluator<'_>) -> TaskCheck {
    let mut check = TaskCheck {
        instance_id: task.instance_id.clone(),
        repo: task.repo.clone(),
        version: task.version.clone(),
        status: CheckStatus::Error,
        reason: None,
        gold_resolved: false,
        empty_fails: false,
        seconds: PhaseSeconds::default(),
    };
    let started = Instant::now();
    match gold.images.and_then(|images| images.image_root(task)) {
        // A task that runs in an image has its repository and environment there: no base
        // checkout and no recipe environment (it may have neither a repository under
        // --repos nor a recipe); the environment phase is the image's first use.
        Some(image) => {
            check.seconds.environment = started.elapsed().as_secs_f64();
            if let Err(error) = image {
                check.reason = Some(format!("image: {error}"));
                return check;
            }
        }
        None => {
            let environments = gold.environments();
            let resolved = environments.resolve(task);
            check.seconds.base = started.elapsed().as_secs_f64();
            let started = Instant::now();
            let prepared = resolved.and_then(|resolved| environments.environment(resolved));
            check.seconds.environment = started.elapsed().as_secs_f64();
            if let Err(error) = prepared {
                check.reason = Some(error.to_string());
                return check;
            }
        }
    }
    let gold_patch = match crate::rule::gold_patch(task) {
        Ok(patch) => patch,
        Err(error) => {
            check.reason = Some(format!("the gold patch: {error}"));
            return check;
        }
    };
    let (gold_report, gold_seconds) = timed(|| gold.evaluate(task, gold_patch.as_deref()));
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
fn verdict(gold: &InstanceReport, empty: &InstanceReport) -> (CheckStatus, Option<String>) {
    if !gold.resolved {
        let failed = failed_tests(gold);
        let foreign: Vec<&str> = failed
            .iter()
            .filter_map(|test| foreign_path(test))
            .collect();
        if let Some(needs) = &gold.needs_network {
            let mut reason = needs.to_string();
            if !gold.services.is_empty() {
                // What the fixtures could not stand in for: the expected tests that failed.
                let names: Vec<&str> = gold.services.iter().map(|service| service.name()).collect();
                reason.push_str(&format!(
                    "; served by fixtures: {}; expected tests that still failed: {}",
                    names.join(", "),
                    failed
                        .iter()
                        .map(|test| test.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if !foreign.is_empty() {
                reason.push_str(&format!(
                    "; also {} failing expected tests have ids holding a path of the machine \
                     the dataset was made on ({}…)",
                    foreign.len(),
                    foreign[0]
                ));
            }
            return (CheckStatus::Offline, Some(reason));
        }
        if let Some(error) = &gold.error {
            return (CheckStatus::Error, Some(format!("gold: {error}")));
        }
        if !failed.is_empty() && foreign.len() == failed.len() {
            return (
                CheckStatus::Dataset,
                Some(format!(
                    "the {} failing expected tests have ids holding a path of the machine the \
                     dataset was made on ({}…), which no harness reproduces",
                    failed.len(),
                    foreign[0]
                )),
            );
        }
        return (
            CheckStatus::GoldUnresolved,
            Some(format!("gold: {}", failing(gold))),
        );
    }
    if empty.resolved {
        return (
            CheckStatus::EmptyResolved,
            Some("the empty patch resolves the task: FAIL_TO_PASS passes without a fix".into()),
        );
    }
    if let Some(error) = &empty.error {
        return (CheckStatus::Error, Some(format!("empty: {error}")));
    }
    (CheckStatus::Ok, None)
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
