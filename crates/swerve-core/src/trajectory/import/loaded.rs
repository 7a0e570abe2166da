//! [`Loaded`]: the trajectories of many files of any format, each with the file it came
//! from, for the commands that read recorded runs (`traj`, `tasks curate`, `data`,
//! `context`).

use std::path::PathBuf;

use super::detect_and_import;
use crate::trajectory::Trajectory;
use crate::trajectory::error::TrajectoryError;

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

/// Every trajectory of `files`, in order (any format [`detect_and_import`] reads); errors
/// name the file, line and field.
pub fn load_all(files: &[PathBuf]) -> Result<Vec<Loaded>, TrajectoryError> {
    let mut loaded = Vec::new();
    for path in files {
        loaded.extend(
            detect_and_import(path)?
                .into_iter()
                .map(|trajectory| Loaded {
                    path: path.clone(),
                    trajectory,
                }),
        );
    }
    Ok(loaded)
}
