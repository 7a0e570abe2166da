//! Demonstrations (`swerve demo`): replaying a task's recorded solution through the native
//! tools in a fresh environment ([`replay`]), and grading a patch by the task's tests on a
//! fresh workspace ([`check`]).

use std::path::Path;

use anyhow::{Result, bail};
use swerve_core::Task;
use swerve_core::demonstration::Demonstration;
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::grading::TestResults;
use swerve_eval::report::InstanceReport;
use swerve_eval::spec::RecipeTable;

use crate::config::Config;
use crate::open;

/// What replaying one demonstration produced.
pub struct Replay {
    /// Observation texts, one per call.
    pub observations: Vec<String>,
    /// The workspace's patch after the calls.
    pub patch: String,
}

/// Replays `demonstration` in a fresh workspace of `task` and returns observations and patch.
pub fn replay(
    config: &Config,
    task_file: &Path,
    task: &Task,
    demonstration: &Demonstration,
) -> Result<Replay> {
    let environment = open::environment(config, &config.cache()?, task_file, task)?;
    let mut toolbox = open::toolbox(config, environment.as_ref());
    let mut observations = Vec::new();
    for call in &demonstration.calls {
        let result = toolbox.call(call);
        observations.push(result.observation);
        if result.done {
            break;
        }
    }
    let patch = environment.patch(&config.patch)?.diff;
    environment.destroy()?;
    Ok(Replay {
        observations,
        patch,
    })
}

/// Grades `patch` for `task` (loaded from `task_file`) with the evaluation harness.
pub fn check(
    config: &Config,
    task_file: &Path,
    task: &Task,
    patch: &str,
) -> Result<InstanceReport> {
    let cache = config.cache()?;
    let repos = config.repo_map(task_file);
    let recipes = RecipeTable::shipped();
    let mut settings = EvalSettings {
        use_cache: false,
        ..EvalSettings::default()
    };
    settings.workspace.sandbox = config.sandbox.clone();
    settings.test_machinery = config.reward.test_machinery_change;
    settings.workspace.sandbox.output_cap_bytes =
        settings.workspace.sandbox.output_cap_bytes.max(64 << 20);
    let evaluator = Evaluator {
        cache: &cache,
        repos: &repos,
        recipes: &recipes,
        settings,
        images: None,
    };
    let report = evaluator.evaluate(task, Some(patch));
    if let (Some(class), Some(error)) = (report.error_class, &report.error) {
        bail!(
            "task {}: evaluation failed ({class:?}): {error}",
            task.instance_id
        );
    }
    Ok(report)
}

/// How many of `tests` passed, and the ones that did not, from a graded report.
pub fn tally(results: Option<&TestResults>) -> (usize, usize, Vec<String>) {
    match results {
        Some(results) => (
            results.success.len(),
            results.success.len() + results.failure.len(),
            results.failure.clone(),
        ),
        None => (0, 0, Vec::new()),
    }
}
