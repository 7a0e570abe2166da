//! SWE-World's parts of a run, built from the configuration: the world environment and the
//! training-data recorder ([`parts`]). The parts themselves live in `swerve-world`; their
//! models come from [`crate::models`].

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use swerve_world::Router;
use swerve_world::analysis::cache::Analyses;
use swerve_world::environment::World;
use swerve_world::environment::record::Recorder;

use crate::config::{Config, EnvKind, EvaluatorKind};
use crate::{grading, models};

/// SWE-World's parts of a run, each when the configuration asks for it.
pub struct WorldParts {
    /// The world environment (`run.env = "world"`).
    pub world: Option<Arc<World>>,
    /// The training-data recorder (`world.record.dir`).
    pub recorder: Option<Arc<Recorder>>,
}

/// The parts `config` asks for, for tasks loaded from `task_file`, sharing the initial
/// analyses `analyses`.
pub fn parts(config: &Config, task_file: &Path, analyses: &Arc<Analyses>) -> Result<WorldParts> {
    let world = match config.run.env {
        EnvKind::World => Some(Arc::new(World {
            config: config.world.clone(),
            router: Router::from_config(&config.world.router)?,
            model: models::require(
                &config.world.transition_model,
                "world.transition_model",
                "run.env = \"world\"",
            )?,
            analyses: analyses.clone(),
        })),
        EnvKind::Sandbox => None,
    };
    let grades_by_swr = config.run.eval && config.run.evaluator == EvaluatorKind::Swr;
    let recorder = match &config.world.record.dir {
        None => None,
        Some(dir) => {
            if config.run.env == EnvKind::World {
                anyhow::bail!(
                    "world.record.dir (--record-world-data) records real results, but \
                     run.env = \"world\" simulates them: record with run.env = \"sandbox\""
                );
            }
            if !config.run.eval || grades_by_swr {
                tracing::warn!(
                    "recording world data without real evaluation (--eval): only SWT \
                     samples are recorded"
                );
            }
            let simulate = config.world.record.simulate;
            let contexts = grading::contexts(config, task_file, analyses.clone())?;
            Some(Arc::new(Recorder {
                router: Router::from_config(&config.world.router)?,
                dir: dir.clone(),
                transition: match simulate {
                    true => Some(models::require(
                        &config.world.transition_model,
                        "world.transition_model",
                        "world.record.simulate",
                    )?),
                    false => None,
                },
                grader: match simulate && config.run.eval && !grades_by_swr {
                    true => Some(grading::swr(config, contexts.clone(), None)?),
                    false => None,
                },
                contexts,
            }))
        }
    };
    Ok(WorldParts { world, recorder })
}
