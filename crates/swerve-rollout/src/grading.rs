//! The one grader factory: from the configuration to an `Arc<dyn Grader>` (swerve-eval's
//! seam), running the tests ([`TestGrader`]) or asking SWE-World's reward model
//! ([`SwrGrader`]). Every command that grades (`eval`, `run --eval`, `serve`, `select`)
//! builds its grader here and uses it without asking which it is.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use swerve_core::Task;
use swerve_eval::evaluate::EvalSettings;
use swerve_eval::grader::{Grade, Grader, TestGrader};
use swerve_eval::spec::RecipeTable;
use swerve_world::analysis::cache::Analyses;
use swerve_world::swr::grader::{EvaluationContexts, SwrGrader};

use crate::config::{Config, EvaluatorKind};
use crate::{models, open};

/// The grader `kind` under `config`, for tasks loaded from `task_file` (their repositories
/// are found from it). Test runs follow `settings`; both graders keep their logs in
/// `settings.log_dir`. A reward model shares the initial analyses `analyses`.
pub fn grader(
    config: &Config,
    kind: EvaluatorKind,
    task_file: &Path,
    settings: EvalSettings,
    analyses: &Arc<Analyses>,
) -> Result<Arc<dyn Grader>> {
    Ok(match kind {
        EvaluatorKind::Tests => Arc::new(TestGrader {
            cache: config.cache()?,
            repos: config.repo_map(task_file),
            recipes: recipes(config)?,
            settings,
            images: Some(Arc::new(open::TaskImages(config.clone()))),
        }),
        EvaluatorKind::Swr => Arc::new(swr(
            config,
            contexts(config, task_file, analyses.clone())?,
            settings.log_dir,
        )?),
    })
}

/// Grades `jobs` (a task and its patch; `None`: no patch) with `grader`, `workers` at a
/// time, on the current tokio runtime (multi-threaded); `done` is called as each grade
/// ends. The grades come back in the order of `jobs`.
pub async fn grade_all(
    grader: Arc<dyn Grader>,
    jobs: Vec<(Task, Option<String>)>,
    workers: usize,
    done: impl Fn(&Task, &Grade) + Send + Sync + 'static,
) -> Result<Vec<(Task, Grade)>> {
    let permits = Arc::new(tokio::sync::Semaphore::new(workers.max(1)));
    let done = Arc::new(done);
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|(task, patch)| {
            let (grader, permits, done) = (grader.clone(), permits.clone(), done.clone());
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                let grade = grader.grade(&task, patch.as_deref(), None).await;
                done(&task, &grade);
                (task, grade)
            })
        })
        .collect();
    let mut grades = Vec::with_capacity(handles.len());
    for handle in handles {
        grades.push(handle.await?);
    }
    Ok(grades)
}

/// The reward model of `config` (`[world.reward_model]`, required) over `contexts`, its
/// votes saved under `log_dir`.
pub fn swr(
    config: &Config,
    contexts: Arc<EvaluationContexts>,
    log_dir: Option<std::path::PathBuf>,
) -> Result<SwrGrader> {
    Ok(SwrGrader {
        model: models::require(
            &config.world.reward_model,
            "world.reward_model",
            "grading with SWR",
        )?,
        contexts,
        log_dir,
    })
}

/// Evaluation contexts under `config` for tasks loaded from `task_file`.
pub fn contexts(
    config: &Config,
    task_file: &Path,
    analyses: Arc<Analyses>,
) -> Result<Arc<EvaluationContexts>> {
    Ok(Arc::new(EvaluationContexts {
        cache: config.cache()?,
        repos: config.repo_map(task_file),
        recipes: recipes(config)?,
        workspace: config.workspace_options(),
        world: config.world.clone(),
        analyses,
    }))
}

/// The initial analyses of SWE-World's models under `config` (none when
/// `[world.analysis_model]` is unset), cached in the cache directory.
pub fn analyses(config: &Config) -> Result<Arc<Analyses>> {
    Ok(Arc::new(Analyses::new(
        models::optional(&config.world.analysis_model, "world.analysis_model")?,
        &config.world,
        config.cache()?.root(),
    )))
}

/// The shipped recipes with `run.recipes` over them.
fn recipes(config: &Config) -> Result<RecipeTable> {
    RecipeTable::shipped_with(config.run.recipes.as_deref())
        .map_err(|error| anyhow::anyhow!("{error}"))
}

/// The reward a grade earns: its score (1 resolved, 0 not, or the reward model's), or
/// `None` when grading failed for a reason that is not the model's (the machinery: an
/// `infra` error), so the rollout is left out of training rather than counted as a failure.
pub fn reward_of(grade: &Grade) -> Option<f64> {
    if swerve_train::reward::infra_failure(&grade.to_json()) {
        return None;
    }
    Some(grade.score.unwrap_or(0.0))
}
