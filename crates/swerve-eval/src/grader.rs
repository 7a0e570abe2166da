//! The [`Grader`] seam: how a patch becomes a grade. [`TestGrader`] runs the task's tests by
//! SWE-bench's rules (the [`Evaluator`]); SWE-World's reward model predicts the grade
//! instead (`swerve_world::swr::SwrGrader`). `swerve eval`, `swerve run --eval`, `swerve
//! serve` and `swerve select` each hold one `Arc<dyn Grader>` and never ask which it is.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};
use swerve_core::Task;
use swerve_sandbox::{Cache, RepoMap};

use crate::evaluate::{EvalSettings, Evaluator, ImageProvider};
use crate::report::InstanceReport;
use crate::spec::RecipeTable;

/// One patch's grade.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    /// SWE-bench's per-instance report (`resolved`, test statuses, errors).
    pub report: InstanceReport,
    /// The grade as a number: 1 or 0 when tests ran, the mean vote of a reward model;
    /// `None` when a reward model gave no usable vote.
    pub score: Option<f64>,
    /// What a predicted grade adds to the report as it is saved (`"evaluator"` and the
    /// votes); `None` when tests ran.
    pub prediction: Option<Map<String, Value>>,
}

impl Grade {
    /// A grade by tests: the score is 1 when the report says resolved, else 0.
    pub fn by_tests(report: InstanceReport) -> Grade {
        Grade {
            score: Some(if report.resolved { 1.0 } else { 0.0 }),
            report,
            prediction: None,
        }
    }

    /// Whether the patch resolves its task.
    pub fn resolved(&self) -> bool {
        self.report.resolved
    }

    /// The report as it is saved (`results.json`, a trajectory's `eval_report`): SWE-bench's
    /// fields, then those of the prediction.
    pub fn to_json(&self) -> Value {
        let mut saved = match serde_json::to_value(&self.report) {
            Ok(Value::Object(fields)) => fields,
            _ => Map::new(),
        };
        if let Some(prediction) = &self.prediction {
            saved.extend(prediction.clone());
        }
        Value::Object(saved)
    }
}

/// The future a [`Grader::grade`] call returns (boxed so that graders are chosen at run
/// time, as models are).
pub type GradeFuture<'a> = Pin<Box<dyn Future<Output = Grade> + Send + 'a>>;

/// Grades patches. Never fails: problems (a patch that does not apply, a broken
/// environment, an unreachable reward model) are the report's error, as in SWE-bench.
pub trait Grader: Send + Sync {
    /// Grades `patch` (`None`: no patch) for `task`. `label` (a rollout's or a session's id)
    /// keeps the logs of several grades of one task apart: `<logs>/<label>/<instance_id>/`.
    /// Must run on a multi-threaded tokio runtime (grading blocks in `block_in_place`).
    fn grade<'a>(
        &'a self,
        task: &'a Task,
        patch: Option<&'a str>,
        label: Option<&'a str>,
    ) -> GradeFuture<'a>;

    /// Whether grading runs the task's tests (a reward model only predicts the outcome).
    fn runs_tests(&self) -> bool;
}

/// Grading by running the task's tests: the [`Evaluator`] over owned parts.
pub struct TestGrader {
    /// Base checkouts and workspace layers.
    pub cache: Cache,
    /// Where the tasks' repositories are.
    pub repos: RepoMap,
    /// How each task is tested.
    pub recipes: RecipeTable,
    /// Timeouts, logs, caching.
    pub settings: EvalSettings,
    /// Where tasks that name an image get it; `None`: every task uses a base checkout.
    pub images: Option<Arc<dyn ImageProvider + Send>>,
}

impl TestGrader {
    /// Grades on the calling thread (blocks for as long as the tests run).
    pub fn grade_blocking(&self, task: &Task, patch: Option<&str>, label: Option<&str>) -> Grade {
        let mut settings = self.settings.clone();
        if let Some(label) = label {
            settings.log_dir = settings.log_dir.map(|logs| logs.join(label));
        }
        let evaluator = Evaluator {
            cache: &self.cache,
            repos: &self.repos,
            recipes: &self.recipes,
            settings,
            images: self
                .images
                .as_deref()
                .map(|images| images as &dyn ImageProvider),
        };
        Grade::by_tests(evaluator.evaluate(task, patch))
    }
}

impl Grader for TestGrader {
    fn grade<'a>(
        &'a self,
        task: &'a Task,
        patch: Option<&'a str>,
        label: Option<&'a str>,
    ) -> GradeFuture<'a> {
        Box::pin(
            async move { tokio::task::block_in_place(|| self.grade_blocking(task, patch, label)) },
        )
    }

    fn runs_tests(&self) -> bool {
        true
    }
}
