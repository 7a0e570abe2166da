//! [`SwrGrader`], SWR as a [`Grader`]: a patch is graded by the reward model instead of by running its
//! tests. The evaluation context is read from a fresh workspace at the base commit with the
//! patch applied by SWE-bench's cascade and the test files reset and patched as the eval
//! script would (git only: no project code runs), and the test command is SWE-bench's from
//! the test spec. The report is SWE-bench's per-instance report, marked as predicted
//! (`"evaluator": "swr"`) and carrying the votes.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use swerve_core::atomic::write_json_atomically;
use swerve_core::{Shell, Task};
use swerve_eval::apply::{apply_patch, write_file};
use swerve_eval::evaluate::sha256;
use swerve_eval::grader::{Grade, GradeFuture, Grader};
use swerve_eval::report::{ErrorClass, InstanceReport, SpecSummary};
use swerve_eval::spec::{RecipeTable, resolve_spec};
use swerve_eval::workspaces::{self, Origin};
use swerve_llm::Model;
use swerve_sandbox::{Cache, RepoMap, WorkspaceOptions};
use swerve_tools::WorkspaceFs;

use crate::analysis::cache::Analyses;
use crate::tokens::ApproxTokens;
use crate::{IssueInputs, Sources, SwrContext, SwrScore, WorldConfig, score};

/// What the evaluator field of a predicted report says.
pub const EVALUATOR: &str = "swr";

/// Where the test patch is written inside the sandbox.
const TEST_PATCH_PATH: &str = "/tmp/swerve-test.patch";

/// Builds evaluation contexts for patches.
pub struct EvaluationContexts {
    /// Base checkouts and workspace layers.
    pub cache: Cache,
    /// Where the tasks' repositories are.
    pub repos: RepoMap,
    /// How each task is tested (its test command and files).
    pub recipes: RecipeTable,
    /// How grading workspaces are made.
    pub workspace: WorkspaceOptions,
    /// The `[world]` settings: context budgets, prompts, SWR's votes and threshold.
    pub world: WorldConfig,
    /// The tasks' initial analyses.
    pub analyses: Arc<Analyses>,
}

/// Why no context could be built: the error class and message of the report.
pub type ContextError = (ErrorClass, String);

impl EvaluationContexts {
    /// The context for grading `patch` (non-empty) of `task`, and what the task is tested
    /// with. Must run on a multi-threaded tokio runtime (the workspace work blocks).
    pub async fn assemble(
        &self,
        task: &Task,
        patch: &str,
    ) -> Result<(SwrContext, SpecSummary), ContextError> {
        let analysis = self.analyses.get(task).await;
        tokio::task::block_in_place(|| self.assemble_blocking(task, patch, analysis.as_deref()))
    }

    fn assemble_blocking(
        &self,
        task: &Task,
        patch: &str,
        analysis: Option<&str>,
    ) -> Result<(SwrContext, SpecSummary), ContextError> {
        let infra = |what: &str, error: &dyn std::fmt::Display| {
            (ErrorClass::Infra, format!("{what}: {error}"))
        };
        let base = self
            .cache
            .prepare_task_base(
                &self.repos,
                task,
                swerve_eval::prepare::submodules_for(&self.recipes, task, false),
            )
            .map_err(|error| infra("preparing the base checkout", &error))?;
        let spec = resolve_spec(task, &base.path, &self.recipes)
            .map_err(|error| infra("working out how to test the task", &error))?;
        let workspace = workspaces::create(&self.cache, Origin::Checkout(&base), &self.workspace)
            .map_err(|error| infra("creating the workspace", &error))?;
        let shell = workspace.shell();
        let short = Duration::from_secs(120);
        let applied = apply_patch(shell.as_ref(), patch, short)
            .map_err(|error| infra("applying the patch", &error))?;
        if applied.method.is_none() {
            return Err((
                ErrorClass::PatchFailed,
                "no attempt of the apply cascade applied the patch".to_owned(),
            ));
        }
        if let Some(test_patch) = task.test_patch.as_deref().filter(|p| !p.trim().is_empty())
            && let Err(error) = apply_test_patch(
                shell.as_ref(),
                &task.base_commit,
                &spec.test_files,
                test_patch,
                short,
            )
        {
            tracing::warn!(
                "task {}: the test patch does not apply over the patch ({error}); the reward \
                 model sees the test files as they are",
                task.instance_id
            );
        }
        let mount_point = self.workspace.sandbox.mount_point.to_string_lossy();
        let workspace_fs = WorkspaceFs::with_sandbox_root(workspace.host_root(), &mount_point);
        let original = WorkspaceFs::with_sandbox_root(&base.path, &mount_point);
        let inputs = IssueInputs {
            task,
            initial_analysis: analysis,
            agent_patch: patch,
        };
        let sources = Sources {
            workspace: &workspace_fs,
            original: &original,
            counter: &ApproxTokens,
        };
        let context =
            SwrContext::assemble(&inputs, &spec.test_command(), &sources, &self.world.context)
                .with_prompts(self.world.prompts);
        if let Err(error) = workspace.destroy() {
            tracing::warn!("cannot remove a grading workspace: {error}");
        }
        Ok((context, spec.summary(task)))
    }
}

/// Resets the test files to the base commit and applies the test patch, as SWE-bench's
/// eval script does before running the tests.
fn apply_test_patch(
    shell: &dyn Shell,
    base_commit: &str,
    test_files: &[String],
    test_patch: &str,
    timeout: Duration,
) -> Result<(), String> {
    let quote = |path: &String| format!("'{}'", path.replace('\'', r"'\''"));
    if !test_files.is_empty() {
        let files: Vec<String> = test_files.iter().map(quote).collect();
        let reset = shell
            .run(
                &format!("git checkout -q {base_commit} -- {}", files.join(" ")),
                timeout,
            )
            .map_err(|error| error.to_string())?;
        if !reset.success() {
            return Err(reset.stderr_text());
        }
    }
    write_file(shell, TEST_PATCH_PATH, test_patch, timeout).map_err(|error| error.to_string())?;
    let applied = shell
        .run(&format!("git apply {TEST_PATCH_PATH}"), timeout)
        .map_err(|error| error.to_string())?;
    if applied.success() {
        Ok(())
    } else {
        Err(applied.stderr_text().trim().to_owned())
    }
}

/// One vote, as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Vote {
    /// 1 (resolved) or 0.
    pub reward: u8,
    /// The test report the model wrote.
    pub test_report: String,
}

/// The reward model's part of a predicted report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwrSummary {
    /// The reward model's name.
    pub model: String,
    /// The mean reward of the usable votes; `None` when no call gave one (or no context
    /// could be built).
    pub score: Option<f64>,
    /// The score at which the patch counts as resolved.
    pub threshold: f64,
    /// Calls made (M), zero for an empty patch.
    pub calls: usize,
    /// The usable votes.
    pub votes: Vec<Vote>,
    /// Replies that could not be read.
    pub parse_failures: usize,
    /// Calls that failed (HTTP errors, timeouts).
    pub call_failures: usize,
    /// What went wrong with each failed call or reply.
    pub errors: Vec<String>,
    /// The patch was empty: scored 0 without a call.
    pub empty_patch: bool,
}

/// A per-instance report predicted by the reward model: SWE-bench's fields (with
/// `resolved` the score reaching the threshold), `evaluator = "swr"` and the votes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwrReport {
    /// SWE-bench's fields.
    #[serde(flatten)]
    pub report: InstanceReport,
    /// Always [`EVALUATOR`]: the grade is predicted, no test ran.
    pub evaluator: &'static str,
    /// The votes.
    pub swr: SwrSummary,
}

/// Grades patches with the reward model.
pub struct SwrGrader {
    /// Where evaluation contexts come from.
    pub contexts: Arc<EvaluationContexts>,
    /// The reward model.
    pub model: Arc<dyn Model>,
    /// Where each instance's full score (replies, reasoning, usage) is written as
    /// `<log_dir>/<instance_id>/swr.json` (`<log_dir>/<label>/<instance_id>/swr.json` when
    /// graded with a label).
    pub log_dir: Option<PathBuf>,
}

impl SwrGrader {
    /// The reward model's score of `context` (M calls as `[world.swr]` says).
    pub async fn score(&self, context: &SwrContext) -> SwrScore {
        let swr = &self.contexts.world.swr;
        score(self.model.as_ref(), context, swr.votes, &swr.sampling).await
    }

    /// Grades `patch` (`None`: the model gave none) for `task`, its votes saved under
    /// `label` (a rollout's id) when given. Never fails: problems are the report's error, as
    /// in real evaluation.
    pub async fn report(&self, task: &Task, patch: Option<&str>, label: Option<&str>) -> SwrReport {
        let swr = &self.contexts.world.swr;
        let mut report = InstanceReport::new(patch);
        report.patch_hash = patch.map(sha256);
        let scored = match patch.filter(|patch| !patch.trim().is_empty()) {
            None => Some(SwrScore {
                votes: Vec::new(),
                failures: Vec::new(),
                mean: Some(0.0),
                empty_patch: true,
            }),
            Some(patch) => match self.contexts.assemble(task, patch).await {
                Ok((context, spec)) => {
                    report.spec = Some(spec);
                    report.patch_successfully_applied = true;
                    Some(self.score(&context).await)
                }
                Err((class, message)) => {
                    report.record_error(class, message);
                    None
                }
            },
        };
        if let Some(scored) = &scored {
            report.resolved = scored.resolved(swr.threshold);
            self.save(task, label, scored);
        }
        let summary = SwrSummary {
            model: self.model.name().to_owned(),
            score: scored.as_ref().and_then(|scored| scored.mean),
            threshold: swr.threshold,
            calls: scored
                .as_ref()
                .map_or(0, |s| s.votes.len() + s.failures.len()),
            votes: scored
                .iter()
                .flat_map(|scored| &scored.votes)
                .map(|vote| Vote {
                    reward: vote.reply.reward,
                    test_report: vote.reply.test_report.clone(),
                })
                .collect(),
            parse_failures: scored.as_ref().map_or(0, SwrScore::parse_failures),
            call_failures: scored
                .as_ref()
                .map_or(0, |scored| scored.failures.len() - scored.parse_failures()),
            errors: scored
                .iter()
                .flat_map(|scored| &scored.failures)
                .map(|failure| failure.error.clone())
                .collect(),
            empty_patch: scored.as_ref().is_some_and(|scored| scored.empty_patch),
        };
        SwrReport {
            report,
            evaluator: EVALUATOR,
            swr: summary,
        }
    }

    /// Writes the full score to the instance's log directory, if there is one.
    fn save(&self, task: &Task, label: Option<&str>, scored: &SwrScore) {
        let Some(dir) = &self.log_dir else {
            return;
        };
        let dir = match label {
            Some(label) => dir.join(label),
            None => dir.clone(),
        }
        .join(&task.instance_id);
        let saved = std::fs::create_dir_all(&dir)
            .and_then(|()| write_json_atomically(&dir.join("swr.json"), scored));
        if let Err(error) = saved {
            tracing::warn!(
                "cannot save the reward model's votes in {}: {error}",
                dir.display()
            );
        }
    }
}

impl Grader for SwrGrader {
    fn grade<'a>(
        &'a self,
        task: &'a Task,
        patch: Option<&'a str>,
        label: Option<&'a str>,
    ) -> GradeFuture<'a> {
        Box::pin(async move {
            let predicted = self.report(task, patch, label).await;
            let mut prediction = serde_json::Map::new();
            prediction.insert("evaluator".into(), EVALUATOR.into());
            prediction.insert(
                "swr".into(),
                serde_json::to_value(&predicted.swr).unwrap_or_default(),
            );
            Grade {
                score: predicted.swr.score,
                report: predicted.report,
                prediction: Some(prediction),
            }
        })
    }

    fn runs_tests(&self) -> bool {
        false
    }
}
