//! Importers: trajectories of other agent scaffolds as swerve [`Trajectory`]s.
//!
//! Each source step (one model call) becomes one [`crate::trajectory::Step`], so step
//! counts match the source; the final patch is copied byte for byte. Fields with no place
//! in swerve's schema are kept under `extra`. `docs/trajectories.md` has the field and
//! exit-status mappings.
//!
//! | format | function | input |
//! |---|---|---|
//! | mini-swe-agent `.traj.json` | [`mini_swe_agent`] | the whole document |
//! | SWE-agent `.traj` | [`swe_agent`] | the whole document |
//! | R2E-Gym JSON lines | [`r2e_gym`] | one line |
//! | OpenHands `output.jsonl` | [`openhands`] | one line |
//! | SWE-Dev JSON lines (`{traj_id, messages}`) | [`swe_dev`] | one line |
//!
//! [`detect_and_import`] reads a file of any of these (or a swerve trajectory file) and
//! tells them apart by shape ([`detect`]); [`load_all`] reads many files into [`Loaded`]s.

mod json;
mod loaded;
mod mini_swe_agent;
mod openhands;
mod r2e_gym;
mod swe_agent;
mod swe_dev;
mod text;

use std::path::Path;

use serde_json::Value;

pub use loaded::{Loaded, load_all};
pub use mini_swe_agent::mini_swe_agent;
pub use openhands::openhands;
pub use r2e_gym::r2e_gym;
pub use swe_agent::swe_agent;
pub use swe_dev::swe_dev;

use super::error::{TrajectoryError, TrajectoryErrorKind};
use super::{Trajectory, parse_trajectory};

/// The trajectory formats swerve reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A swerve trajectory file (its header record).
    Swerve,
    /// mini-swe-agent `.traj.json`.
    MiniSweAgent,
    /// SWE-agent `.traj`.
    SweAgent,
    /// One line of R2E-Gym's JSON-lines output.
    R2eGym,
    /// One line of OpenHands' `output.jsonl`.
    OpenHands,
    /// One line of SWE-Dev's trajectories (`traj_id` or `instance_id`, and `messages`).
    SweDev,
}

/// Which format a JSON document (or JSON-lines record) is in, by its shape.
pub fn detect(value: &Value) -> Option<Format> {
    let has = |key: &str| value.get(key).is_some();
    let list = |key: &str| value.get(key).is_some_and(Value::is_array);
    if value.get("type").and_then(Value::as_str) == Some("header") {
        Some(Format::Swerve)
    } else if list("trajectory_steps") {
        Some(Format::R2eGym)
    } else if list("trajectory") && (has("history") || has("info")) {
        Some(Format::SweAgent)
    } else if list("messages") && (has("info") || has("trajectory_format")) {
        Some(Format::MiniSweAgent)
    } else if list("history") && (has("test_result") || has("metadata") || has("instance_id")) {
        Some(Format::OpenHands)
    } else if list("messages") && (has("traj_id") || has("instance_id")) {
        Some(Format::SweDev)
    } else {
        None
    }
}

/// Reads the file at `path` and imports every trajectory in it: one for a swerve file, a
/// mini-swe-agent or a SWE-agent file, one per line for R2E-Gym, OpenHands and SWE-Dev JSON
/// lines.
///
/// Two things come from next to the document: a SWE-agent trajectory without an instance
/// id gets the file name without `.traj` (SWE-agent names files `<instance_id>.traj`);
/// a mini-swe-agent `NAME.traj.json` with a `NAME.report.json` beside it (a SWE-bench
/// report, bare or keyed by instance id) gets it as its evaluation report.
pub fn detect_and_import(path: impl AsRef<Path>) -> Result<Vec<Trajectory>, TrajectoryError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|err| TrajectoryError::new(TrajectoryErrorKind::Read(err)).at(&name, None))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| TrajectoryError::new(TrajectoryErrorKind::NotUtf8).at(&name, None))?;
    let first_line = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .and_then(|line| serde_json::from_str::<Value>(line).ok());
    if first_line.as_ref().and_then(detect) == Some(Format::Swerve) {
        return Ok(vec![parse_trajectory(&bytes, &name)?.trajectory]);
    }
    let whole = serde_json::from_str::<Value>(text);
    match (whole, first_line) {
        (Ok(value), _) => Ok(vec![
            import_one(&value, path).map_err(|err| err.at(&name, None))?,
        ]),
        // JSON lines: the first line is a document by itself.
        (Err(_), Some(Value::Object(_))) => {
            let mut trajectories = Vec::new();
            for (number, line) in text.lines().enumerate().map(|(at, line)| (at + 1, line)) {
                if line.trim().is_empty() {
                    continue;
                }
                let value = serde_json::from_str::<Value>(line)
                    .map_err(|err| invalid_json(&err).at(&name, Some(number)))?;
                trajectories
                    .push(import_one(&value, path).map_err(|err| err.at(&name, Some(number)))?);
            }
            Ok(trajectories)
        }
        (Err(err), _) => Err(invalid_json(&err).at(&name, Some(err.line()))),
    }
}

fn invalid_json(err: &serde_json::Error) -> TrajectoryError {
    TrajectoryErrorKind::InvalidJson {
        message: err.to_string(),
    }
    .into()
}

/// Imports one document read from `path`.
fn import_one(value: &Value, path: &Path) -> Result<Trajectory, TrajectoryError> {
    let file_name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    match detect(value) {
        Some(Format::MiniSweAgent) => {
            let mut trajectory = mini_swe_agent(value)?;
            if let (Some(outcome), Some(stem)) = (
                trajectory.outcome.as_mut(),
                file_name.strip_suffix(".traj.json"),
            ) {
                let report = path.with_file_name(format!("{stem}.report.json"));
                if report.is_file() {
                    let report = read_report(&report, &trajectory.header.instance_id)?;
                    outcome.eval_report = Some(report);
                }
            }
            Ok(trajectory)
        }
        Some(Format::SweAgent) => {
            let mut trajectory = swe_agent(value)?;
            if let Some(stem) = file_name.strip_suffix(".traj")
                && trajectory.header.instance_id.is_empty()
            {
                trajectory.header.instance_id = stem.to_owned();
                trajectory.header.id = format!("swe-agent/{stem}");
            }
            Ok(trajectory)
        }
        Some(Format::R2eGym) => r2e_gym(value),
        Some(Format::OpenHands) => openhands(value),
        Some(Format::SweDev) => swe_dev(value),
        Some(Format::Swerve) | None => Err(TrajectoryErrorKind::UnknownFormat.into()),
    }
}

/// A SWE-bench report file: the report of `instance_id` when keyed by it, else the whole.
fn read_report(path: &Path, instance_id: &str) -> Result<Value, TrajectoryError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|err| TrajectoryError::new(TrajectoryErrorKind::Read(err)).at(&name, None))?;
    let mut report: Value = serde_json::from_str(&text)
        .map_err(|err| invalid_json(&err).at(&name, Some(err.line())))?;
    if let Some(inner) = report
        .get_mut(instance_id)
        .filter(|_| !instance_id.is_empty())
    {
        report = inner.take();
    }
    Ok(report)
}
