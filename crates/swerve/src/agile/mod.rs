//! SWE-AGILE's training side, over recorded trajectories: exact token accounting per step
//! and the compression rate ([`accounting`], measured with a model's chat template through
//! [`tokens`]), the context-size figure ([`plot`]), the compression-aware reward
//! ([`reward`]) and snapshot SFT samples ([`snapshots`]). Every one starts from
//! [`Trajectory::conversation`](swerve_core::trajectory::Trajectory::conversation) and
//! sees a step's context through the agent's own
//! [`ContextPolicy`](swerve_agent::reasoning::ContextPolicy), with kept reasoning inline
//! as the `agile` preset sends it. See `docs/agile.md`.

pub mod accounting;
pub mod online;
pub mod plot;
pub mod reward;
pub mod snapshots;
pub mod tokens;
pub mod window;

use std::path::{Path, PathBuf};

use anyhow::Result;
use swerve_core::trajectory::Trajectory;
use swerve_core::trajectory::import::detect_and_import;

/// A trajectory and the file it came from (a file may hold several: R2E-Gym, OpenHands).
#[derive(Debug)]
pub struct Loaded {
    /// The file.
    pub path: PathBuf,
    /// The trajectory, converted to swerve's schema.
    pub trajectory: Trajectory,
}

impl Loaded {
    /// `FILE: trajectory ID`, for error messages.
    pub fn name(&self) -> String {
        format!(
            "{}: trajectory {}",
            self.path.display(),
            self.trajectory.header.id
        )
    }
}

/// Every trajectory of `files`, in order (any format `swerve traj convert` reads).
pub fn load(files: &[PathBuf]) -> Result<Vec<Loaded>> {
    let mut loaded = Vec::new();
    for path in files {
        loaded.extend(read(path)?.into_iter().map(|trajectory| Loaded {
            path: path.clone(),
            trajectory,
        }));
    }
    Ok(loaded)
}

/// The trajectories of one file; errors name the file, line and field.
pub fn read(path: &Path) -> Result<Vec<Trajectory>> {
    detect_and_import(path).map_err(|error| anyhow::anyhow!("{error}"))
}
