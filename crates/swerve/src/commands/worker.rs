//! `swerve worker` (hidden): a Ray node's swerve worker, started by `python/swerve/ray.py`
//! (`swerve_cluster::worker`). Its cache is the node's own (`--cache-dir`,
//! `SWERVE_CACHE_DIR`, or the default), never the driver's.

use std::process::ExitCode;

use anyhow::Result;
use swerve_rollout::config::Config;

pub fn run(config: &Config) -> Result<ExitCode> {
    swerve_cluster::worker::serve(config.cache_dir.clone())?;
    Ok(ExitCode::SUCCESS)
}
