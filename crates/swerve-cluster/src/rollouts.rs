//! `swerve run` on a cluster: the workers' [`setup`], where a task's jobs go
//! ([`locality_key`]), and [`run`], which runs one rollout on a node and writes its files
//! into the run directory where a local run writes them.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use swerve_core::Task;
use swerve_core::trajectory::{Outcome, read_trajectory};
use swerve_rollout::config::Config;
use swerve_rollout::open;
use swerve_rollout::rollout::Rollout;

use crate::driver::Cluster;
use crate::protocol::{GradingSetup, Job, Reply, Setup, Work};

/// The workers' setup for a run of `config` over the tasks of `task_file` into the run
/// directory `out`; `grading` for `swerve eval`.
pub fn setup(
    config: &Config,
    task_file: &Path,
    out: &Path,
    grading: Option<GradingSetup>,
) -> Result<Setup> {
    let task_file = std::path::absolute(task_file)
        .with_context(|| format!("cannot resolve {}", task_file.display()))?;
    Ok(Setup {
        config: config.to_toml()?,
        tasks: std::fs::read_to_string(&task_file)
            .with_context(|| format!("cannot read {}", task_file.display()))?,
        task_file,
        cwd: std::env::current_dir()?,
        out: std::path::absolute(out)?,
        grading,
    })
}

/// Jobs of tasks with the same key go to the same node when they can, so that its cached
/// checkouts, environments and image layers are reused: the repository, its version and
/// the task's image.
pub fn locality_key(config: &Config, task: &Task) -> String {
    format!(
        "{} {} {}",
        task.repo,
        task.version.as_deref().unwrap_or(""),
        open::task_image(config, task).unwrap_or_default()
    )
}

/// Runs `rollout` on the cluster, writes its trajectory, log and evaluation logs into the
/// run directory `out`, and returns its outcome (or why it failed, its log written too).
pub async fn run(cluster: &Cluster, out: &Path, rollout: &Rollout, key: &str) -> Result<Outcome> {
    let job = Job {
        id: rollout.id(),
        work: Work::Rollout {
            instance_id: rollout.task.instance_id.clone(),
            sample: rollout.sample,
        },
    };
    let reply = cluster
        .run(&job, key)
        .await
        .map_err(|error| anyhow!(error))?;
    let Reply { error, files, .. } = reply;
    for file in &files {
        file.write_under(out)?;
    }
    if let Some(error) = error {
        return Err(anyhow!(error));
    }
    // The outcome as the trajectory written here holds it.
    let read = read_trajectory(&rollout.path)
        .map_err(|error| anyhow!("{}: {error}", rollout.path.display()))?;
    read.trajectory.outcome.with_context(|| {
        format!(
            "{}: the worker sent it without its outcome",
            rollout.path.display()
        )
    })
}
