//! Writing trajectory files: record by record during a run ([`TrajectoryWriter`]), or whole
//! ([`write_trajectory`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::{TrajectoryError, TrajectoryErrorKind};
use super::record::{header_line, outcome_line, step_line};
use super::{Checker, Header, Outcome, Step, Trajectory};
use crate::atomic::write_atomically;

/// Writes a trajectory file as the run goes: the header on creation, then each step, then
/// the outcome. Every record is written in one piece and synced to disk before the call
/// returns, so a crash (even `kill -9` or a power cut) loses at most the step in flight,
/// and [`super::read_trajectory`] reads everything written before it. What was written is
/// also kept in memory ([`TrajectoryWriter::trajectory`]), so that the caller never reads
/// the file back.
#[derive(Debug)]
pub struct TrajectoryWriter {
    file: File,
    path: PathBuf,
    /// Bytes of complete records; a failed write is cut back to this length.
    len: u64,
    checker: Checker,
    /// The header and steps written so far.
    written: Trajectory,
}

impl TrajectoryWriter {
    /// Creates (or truncates) the file at `path` and writes the header.
    pub fn create(path: impl AsRef<Path>, header: &Header) -> Result<Self, TrajectoryError> {
        let path = path.as_ref().to_path_buf();
        let fail =
            |err| TrajectoryError::new(TrajectoryErrorKind::Write(err)).at(&name(&path), None);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(fail)?;
        let mut writer = Self {
            file,
            len: 0,
            checker: Checker::new(header),
            path,
            written: Trajectory::new(header.clone()),
        };
        writer.write_record(&header_line(header)?)?;
        sync_parent_directory(&writer.path);
        Ok(writer)
    }

    /// Appends a finished step. Its index must be the number of steps written so far, and
    /// its `messages_sent` delta must refer to the prompt or an earlier step's request.
    pub fn append_step(&mut self, step: &Step) -> Result<(), TrajectoryError> {
        let request_len = self
            .checker
            .check(step)
            .map_err(|err| err.at(&name(&self.path), None))?;
        self.write_record(&step_line(step)?)?;
        self.checker.accept(request_len);
        self.written.steps.push(step.clone());
        Ok(())
    }

    /// The header and steps written so far (no outcome yet), as a reader of the file would
    /// see them.
    pub fn trajectory(&self) -> &Trajectory {
        &self.written
    }

    /// Writes the outcome and closes the file.
    pub fn finish(mut self, outcome: &Outcome) -> Result<(), TrajectoryError> {
        self.write_record(&outcome_line(outcome)?)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line and syncs it; on failure, cuts the file back to its last complete
    /// record so later records still follow a whole line.
    fn write_record(&mut self, line: &str) -> Result<(), TrajectoryError> {
        let result = self
            .file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(err) = result {
            // Best effort: the write already failed, and the reader drops a partial last line.
            let _ = self.file.set_len(self.len);
            let _ = self.file.seek(SeekFrom::Start(self.len));
            return Err(
                TrajectoryError::new(TrajectoryErrorKind::Write(err)).at(&name(&self.path), None)
            );
        }
        self.len += line.len() as u64;
        Ok(())
    }
}

/// Writes a whole trajectory to `path` at once (all or nothing); see
/// [`Trajectory::to_jsonl`].
pub fn write_trajectory(
    path: impl AsRef<Path>,
    trajectory: &Trajectory,
) -> Result<(), TrajectoryError> {
    let path = path.as_ref();
    let at = |err: TrajectoryError| err.at(&name(path), None);
    let text = trajectory.to_jsonl().map_err(at)?;
    write_atomically(path, |out| out.write_all(text.as_bytes()))
        .map_err(|err| at(TrajectoryError::new(TrajectoryErrorKind::Write(err))))
}

impl Trajectory {
    /// The trajectory file's text: the header, step and outcome records, one per line.
    /// Its steps are checked as [`TrajectoryWriter`] checks them.
    pub fn to_jsonl(&self) -> Result<String, TrajectoryError> {
        let mut text = header_line(&self.header)?;
        let mut checker = Checker::new(&self.header);
        for step in &self.steps {
            checker.push(step)?;
            text.push_str(&step_line(step)?);
        }
        if let Some(outcome) = &self.outcome {
            text.push_str(&outcome_line(outcome)?);
        }
        Ok(text)
    }
}

/// The path as error messages show it.
fn name(path: &Path) -> String {
    path.display().to_string()
}

/// Makes the new file's directory entry durable. Some file systems cannot sync
/// directories; the file's own data is synced regardless, so failures are ignored.
fn sync_parent_directory(path: &Path) {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if let Ok(directory) = File::open(parent) {
        let _: io::Result<()> = directory.sync_all();
    }
}
