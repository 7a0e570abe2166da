//! Evaluation reports in SWE-bench's formats, with swerve's own fields added.
//!
//! An [`InstanceReport`] serializes with SWE-bench's per-instance keys (`patch_is_None`,
//! `patch_exists`, `patch_successfully_applied`, `resolved`, `tests_status`) followed by
//! swerve's; SWE-bench's `report.json` is a [`ReportFile`], `{instance_id: report}`, which
//! tools reading SWE-bench reports accept as they ignore unknown keys. A [`RunReport`] is
//! SWE-bench's run summary (`make_run_report`, schema version 2).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::grading::{LogRejection, Resolution, TestsStatus, resolution};
use crate::guard::GuardReport;
use crate::offline::NeedsNetwork;
use crate::parsers::InvalidMarker;
use crate::rule::RewardRule;
use crate::spec::Service;
use crate::status::EvalType;

/// SWE-bench's per-instance `report.json`: the instance id mapped to its report.
pub type ReportFile = BTreeMap<String, InstanceReport>;

/// One task's evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceReport {
    /// The prediction had no patch at all (`model_patch` was null).
    #[serde(rename = "patch_is_None")]
    pub patch_is_none: bool,
    /// The prediction had a non-empty patch. (SWE-bench sets this for an empty string too,
    /// but never evaluates one: it counts it among the empty patches.)
    pub patch_exists: bool,
    /// The patch applied (or there was none to apply), whatever happened next: also when
    /// the tests then could not start or their log could not be graded. (SWE-bench sets it
    /// only when the log could be graded.)
    pub patch_successfully_applied: bool,
    /// The task was fully resolved ([`Resolution::Full`]).
    pub resolved: bool,
    /// SWE-bench 5.x's `infra_failure`: the evaluation failed for the machinery's reason,
    /// not the model's. Here it is exactly [`error_class`](Self::error_class) `infra`, which
    /// swerve decides from what the harness controls (see [`ErrorClass::Infra`]); SWE-bench
    /// guesses it after the fact from log signatures, as advice.
    #[serde(default)]
    pub infra_failure: bool,
    /// SWE-bench 5.x's `infra_failure_reason`, with swerve's reasons; absent when the
    /// evaluation did not fail for the machinery's reason, or did so for an unnamed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infra_failure_reason: Option<InfraReason>,
    /// The graded test lists; absent when nothing was graded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_status: Option<TestsStatus>,
    /// The resolution, when graded.
    #[serde(default)]
    pub resolution: Option<Resolution>,
    /// What kind of error stopped the evaluation; `None` when it ran to a grade or to a log
    /// that could not be graded for a reason of its own (see [`log_rejection`](Self::log_rejection)).
    #[serde(default)]
    pub error_class: Option<ErrorClass>,
    /// A message saying what went wrong.
    #[serde(default)]
    pub error: Option<String>,
    /// Why the log could not be graded, if it could not.
    #[serde(default)]
    pub log_rejection: Option<LogRejection>,
    /// How long each phase took.
    #[serde(default)]
    pub timings: Timings,
    /// Where the evaluation log was written.
    #[serde(default)]
    pub log_path: Option<PathBuf>,
    /// The test command's exit code, when the log records it.
    #[serde(default)]
    pub test_exit_code: Option<i32>,
    /// A hash of the evaluated patch, to tell a cached report from a stale one.
    #[serde(default)]
    pub patch_hash: Option<String>,
    /// What the task was tested with.
    #[serde(default)]
    pub spec: Option<SpecSummary>,
    /// The family rule that graded the log: `swe-bench`, or the family's own (`r2e-gym`,
    /// `swe-smith`, `multi-swe-bench`) for a row of it ([`crate::rule`]).
    #[serde(default)]
    pub rule: RewardRule,
    /// Set when the instance is not resolved and its test log shows the tests tried the
    /// network or an external download, which evaluation sandboxes do not allow: the
    /// instance cannot be validated offline, whatever the patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_network: Option<NeedsNetwork>,
    /// The network fixtures that served the tests ([`crate::fixtures`]: a local httpbin as
    /// `httpbin.org`, the tarpit), as the recipe asked; absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<Service>,
    /// What the guard found ([`crate::guard`]): the test machinery the patch changed, the
    /// canaries, and the verdict (`tampered` and `test_machinery_rejected` are not
    /// resolved). Absent when the tests did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardReport>,
}

/// The kinds of error that stop an evaluation; an instance with one is an error of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The patch could not be applied.
    PatchFailed,
    /// The test command could not be run.
    TestsErrored,
    /// The tests ran out of time.
    Timeout,
    /// The tests wrote more than the workspace's disk quota and were stopped.
    DiskLimit,
    /// The machinery failed, not the model: the test command cannot start in the task's
    /// environment (checked before the patch is applied), the environment or the workspace
    /// cannot be made, a harness step timed out, the sandbox failed, the repository reset
    /// failed. Such an instance earns no reward (neither 1 nor 0).
    Infra,
}

/// Why an evaluation failed for the machinery's reason ([`ErrorClass::Infra`]); written as
/// SWE-bench 5.x's `infra_failure_reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InfraReason {
    /// The test command's program, its `#!` interpreter or its Python module is missing
    /// from the task's environment: the probe run before the patch was applied failed
    /// ([`crate::spec::probe_script`]).
    TestRunnerMissing,
    /// The task's environment could not be made ready: base checkout, test spec, image or
    /// environment build.
    EnvironmentUnavailable,
    /// The sandbox failed: creating the workspace, running a harness step, resetting the
    /// repository.
    SandboxFault,
    /// A harness step (not the tests) ran out of time.
    HarnessTimeout,
}

impl InfraReason {
    /// The name written in reports (`test_runner_missing`, …), as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            InfraReason::TestRunnerMissing => "test_runner_missing",
            InfraReason::EnvironmentUnavailable => "environment_unavailable",
            InfraReason::SandboxFault => "sandbox_fault",
            InfraReason::HarnessTimeout => "harness_timeout",
        }
    }
}

impl ErrorClass {
    /// The error a log rejection stands for: the invalid-run markers are errors of the run,
    /// the other rejections leave the instance completed and unresolved, as in SWE-bench.
    /// None of them is `infra`: what the test log says is printed by the tests, which run
    /// the patch's code, so a patch could print `>>>>> Reset Failed` to turn its 0 into no
    /// reward. swerve's harness never prints that marker (its failures are recorded by the
    /// harness itself), so in a log it is the tests' error.
    pub fn for_rejection(rejection: &LogRejection) -> Option<ErrorClass> {
        match rejection {
            LogRejection::InvalidMarker { marker } => Some(match marker {
                InvalidMarker::PatchApplyFailed => ErrorClass::PatchFailed,
                InvalidMarker::ResetFailed => ErrorClass::TestsErrored,
                InvalidMarker::TestsErrored => ErrorClass::TestsErrored,
                InvalidMarker::TestsTimedOut => ErrorClass::Timeout,
            }),
            LogRejection::MissingMarkers
            | LogRejection::NoTestsRan
            | LogRejection::ExitCodeWithoutFailure { .. } => None,
        }
    }
}

/// Seconds spent in each phase of an evaluation; phases that did not run are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Preparing the repository workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<f64>,
    /// Building or reusing the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<f64>,
    /// Applying the patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<f64>,
    /// Running the tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<f64>,
    /// Parsing and grading the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parsing: Option<f64>,
}

/// What a task was tested with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecSummary {
    /// The repository, `owner/name`.
    pub repo: String,
    /// The task's version, if it has one.
    #[serde(default)]
    pub version: Option<String>,
    /// The log parser's name (see [`crate::parsers::PARSER_NAMES`]).
    pub log_parser: String,
    /// How the test lists were judged.
    #[serde(default)]
    pub eval_type: EvalType,
    /// The test command that was run.
    #[serde(default)]
    pub test_command: Option<String>,
}

impl InstanceReport {
    /// A report for a prediction with patch `patch` (`None`: the model gave none), before
    /// anything was evaluated.
    pub fn new(patch: Option<&str>) -> InstanceReport {
        InstanceReport {
            patch_is_none: patch.is_none(),
            patch_exists: patch.is_some_and(|p| !p.is_empty()),
            patch_successfully_applied: false,
            resolved: false,
            infra_failure: false,
            infra_failure_reason: None,
            tests_status: None,
            resolution: None,
            error_class: None,
            error: None,
            log_rejection: None,
            timings: Timings::default(),
            log_path: None,
            test_exit_code: None,
            patch_hash: None,
            spec: None,
            rule: RewardRule::SweBench,
            needs_network: None,
            services: Vec::new(),
            guard: None,
        }
    }

    /// Whether the prediction had no patch or an empty one (SWE-bench's empty-patch instances).
    pub fn is_empty_patch(&self) -> bool {
        !self.patch_exists
    }

    /// Records a grade: the log was graded, with this resolution. It replaces an earlier
    /// grade or rejection (with the error that rejection set), so a saved report can be
    /// re-graded.
    pub fn record_grade(&mut self, tests_status: TestsStatus) {
        if self.log_rejection.take().is_some() {
            self.set_error(None, None, None);
        }
        let resolution = resolution(&tests_status);
        self.patch_successfully_applied = true;
        self.resolved = resolution == Resolution::Full;
        self.resolution = Some(resolution);
        self.tests_status = Some(tests_status);
    }

    /// Records that the log could not be graded, with the error that stands for, if any
    /// ([`ErrorClass::for_rejection`]). It replaces an earlier grade or rejection.
    pub fn record_rejection(&mut self, rejection: LogRejection) {
        self.resolved = false;
        self.tests_status = None;
        self.resolution = None;
        let class = ErrorClass::for_rejection(&rejection);
        self.set_error(class, None, Some(rejection.to_string()));
        self.log_rejection = Some(rejection);
    }

    /// Records an error that stopped the evaluation (an `infra` one without a named reason:
    /// [`record_infra`](Self::record_infra) names it).
    pub fn record_error(&mut self, class: ErrorClass, message: impl Into<String>) {
        self.resolved = false;
        self.set_error(Some(class), None, Some(message.into()));
    }

    /// Records that the evaluation failed for the machinery's reason: `error_class` `infra`,
    /// SWE-bench's `infra_failure` with `reason`.
    pub fn record_infra(&mut self, reason: InfraReason, message: impl Into<String>) {
        self.resolved = false;
        self.set_error(Some(ErrorClass::Infra), Some(reason), Some(message.into()));
    }

    /// Sets the error fields together, so `infra_failure` always agrees with `error_class`.
    fn set_error(
        &mut self,
        class: Option<ErrorClass>,
        reason: Option<InfraReason>,
        message: Option<String>,
    ) {
        self.error_class = class;
        self.infra_failure = class == Some(ErrorClass::Infra);
        self.infra_failure_reason = reason.filter(|_| self.infra_failure);
        self.error = message;
    }
}

/// SWE-bench's run report (`make_run_report`, schema version 2), fields in its order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunReport {
    /// Tasks in the dataset.
    pub total_instances: usize,
    /// Predictions submitted (including any for tasks not in the dataset).
    pub submitted_instances: usize,
    /// Tasks evaluated to a report.
    pub completed_instances: usize,
    /// Completed tasks that were resolved.
    pub resolved_instances: usize,
    /// Completed tasks that were not.
    pub unresolved_instances: usize,
    /// Tasks whose evaluation failed for the machinery's reason (`infra_failure`; SWE-bench
    /// 5.x's key). They are among the errors too, as SWE-bench keeps them in its lists.
    pub infra_failure_instances: usize,
    /// Tasks whose failure could be the machinery's or the model's (SWE-bench 5.x's key):
    /// here, tests that timed out.
    pub ambiguous_failure_instances: usize,
    /// Tasks whose prediction had no or an empty patch.
    pub empty_patch_instances: usize,
    /// Tasks whose evaluation failed.
    pub error_instances: usize,
    /// Ids of completed tasks, sorted.
    pub completed_ids: Vec<String>,
    /// Ids of tasks without a prediction, sorted.
    pub incomplete_ids: Vec<String>,
    /// Ids of tasks with an empty patch, sorted.
    pub empty_patch_ids: Vec<String>,
    /// Ids of all predictions, sorted.
    pub submitted_ids: Vec<String>,
    /// Ids of resolved tasks, sorted.
    pub resolved_ids: Vec<String>,
    /// Ids of unresolved tasks, sorted.
    pub unresolved_ids: Vec<String>,
    /// Ids of tasks whose evaluation failed for the machinery's reason, sorted.
    pub infra_failure_ids: Vec<String>,
    /// Ids of tasks whose tests timed out, sorted.
    pub ambiguous_failure_ids: Vec<String>,
    /// Instance id → why it is an infra or ambiguous failure (SWE-bench 5.x's
    /// `failure_reasons`): an [`InfraReason`], or `tests_timed_out`.
    pub failure_reasons: BTreeMap<String, String>,
    /// Ids of tasks whose evaluation failed, sorted.
    pub error_ids: Vec<String>,
    /// Always [`RunReport::SCHEMA_VERSION`].
    pub schema_version: u32,
}

impl RunReport {
    /// The run-report schema version written.
    pub const SCHEMA_VERSION: u32 = 2;

    /// Summarizes a run over the tasks `task_ids` (the whole dataset) from each prediction's
    /// report: `None` when its evaluation produced none. As in SWE-bench, a task without a
    /// prediction is incomplete, one with an empty patch is an empty patch, one without a
    /// report (or, in swerve, with an [`ErrorClass`]) is an error, and the rest are completed
    /// and resolved or not. A prediction given twice counts once, with its last report.
    pub fn new(task_ids: &[String], results: &[(String, Option<InstanceReport>)]) -> RunReport {
        let reports: BTreeMap<&str, Option<&InstanceReport>> = results
            .iter()
            .map(|(id, report)| (id.as_str(), report.as_ref()))
            .collect();
        let mut completed = BTreeSet::new();
        let mut incomplete = BTreeSet::new();
        let mut empty_patch = BTreeSet::new();
        let mut resolved = BTreeSet::new();
        let mut unresolved = BTreeSet::new();
        let mut errors = BTreeSet::new();
        let mut infra = BTreeSet::new();
        let mut ambiguous = BTreeSet::new();
        let mut failure_reasons = BTreeMap::new();
        for id in task_ids {
            let id = id.as_str();
            match reports.get(id) {
                None => {
                    incomplete.insert(id);
                }
                Some(Some(report)) if report.is_empty_patch() => {
                    empty_patch.insert(id);
                }
                Some(Some(report)) if report.error_class.is_none() => {
                    completed.insert(id);
                    if report.resolved {
                        resolved.insert(id);
                    } else {
                        unresolved.insert(id);
                    }
                }
                Some(report) => {
                    errors.insert(id);
                    let Some(report) = report else { continue };
                    if report.infra_failure {
                        infra.insert(id);
                        if let Some(reason) = report.infra_failure_reason {
                            failure_reasons.insert(id.to_owned(), reason.as_str().to_owned());
                        }
                    } else if report.error_class == Some(ErrorClass::Timeout) {
                        ambiguous.insert(id);
                        failure_reasons.insert(id.to_owned(), "tests_timed_out".to_owned());
                    }
                }
            }
        }
        let ids = |set: BTreeSet<&str>| set.into_iter().map(str::to_owned).collect::<Vec<_>>();
        RunReport {
            total_instances: task_ids.len(),
            submitted_instances: reports.len(),
            completed_instances: completed.len(),
            resolved_instances: resolved.len(),
            unresolved_instances: unresolved.len(),
            infra_failure_instances: infra.len(),
            ambiguous_failure_instances: ambiguous.len(),
            empty_patch_instances: empty_patch.len(),
            error_instances: errors.len(),
            completed_ids: ids(completed),
            incomplete_ids: ids(incomplete),
            empty_patch_ids: ids(empty_patch),
            submitted_ids: reports.keys().map(|id| (*id).to_owned()).collect(),
            resolved_ids: ids(resolved),
            unresolved_ids: ids(unresolved),
            infra_failure_ids: ids(infra),
            ambiguous_failure_ids: ids(ambiguous),
            failure_reasons,
            error_ids: ids(errors),
            schema_version: RunReport::SCHEMA_VERSION,
        }
    }
}
