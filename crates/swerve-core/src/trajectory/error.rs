//! [`TrajectoryError`]: what went wrong reading, writing or importing a trajectory, and where.
//!
//! `Display` renders the file, the line, the field and the problem on one line:
//!
//! ```text
//! run.jsonl line 4: field "usage": invalid type: string "12", expected u64
//! r2e.jsonl line 2: field "trajectory_steps[3].action": expected a string, found a number
//! ```

use std::fmt;

pub(crate) use crate::json_kind::describe;

/// An error about a trajectory file or value. The details are boxed to keep `Result`s
/// small; read them with the accessors.
#[derive(Debug)]
pub struct TrajectoryError(Box<Details>);

#[derive(Debug)]
struct Details {
    file: Option<String>,
    line: Option<usize>,
    field: Option<String>,
    kind: TrajectoryErrorKind,
}

/// What is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrajectoryErrorKind {
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Read(std::io::Error),
    /// The file could not be created, written or synced.
    #[error("cannot write the file: {0}")]
    Write(std::io::Error),
    /// A line (or the file) is not UTF-8 text.
    #[error("not valid UTF-8")]
    NotUtf8,
    /// A JSON syntax error.
    #[error("invalid JSON: {message}")]
    InvalidJson {
        /// serde_json's message.
        message: String,
    },
    /// A record or document is valid JSON but not an object.
    #[error("expected a JSON object, found {found}")]
    NotAnObject {
        /// What it is, such as "a list".
        found: &'static str,
    },
    /// A record's `type` is not `header`, `step` or `outcome`.
    #[error("unknown record type {found}; expected \"header\", \"step\" or \"outcome\"")]
    UnknownRecordType {
        /// The `type` value as JSON.
        found: String,
    },
    /// The file has no complete header record.
    #[error("no header record; a trajectory file starts with {{\"type\":\"header\",…}}")]
    MissingHeader,
    /// A record is where it cannot be: a second header, or anything after the outcome.
    #[error("{0}")]
    OutOfOrder(&'static str),
    /// The file was written by a newer swerve.
    #[error("schema_version {found} is newer than the newest this swerve reads ({supported})")]
    UnsupportedVersion {
        /// The file's version.
        found: u64,
        /// The newest version this build reads.
        supported: u32,
    },
    /// A required field is absent (or null).
    #[error("required but missing")]
    MissingField,
    /// A field that swerve's schema does not have.
    #[error("unknown field; put data of other tools under \"extra\"")]
    UnknownField,
    /// A field's value does not fit (serde's message).
    #[error("{message}")]
    InvalidValue {
        /// What is wrong with it.
        message: String,
    },
    /// A field of an imported format holds the wrong kind of value.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What it must hold.
        expected: &'static str,
        /// What it holds.
        found: &'static str,
    },
    /// Steps must be numbered 0, 1, 2, … in order.
    #[error("step index {found} where {expected} was expected")]
    StepIndex {
        /// The index the next step must have.
        expected: usize,
        /// The index it has.
        found: usize,
    },
    /// A step's `messages_sent` delta cannot be followed.
    #[error("invalid messages reference: {0}")]
    MessagesReference(String),
    /// The conversation cannot be rebuilt from the recorded requests.
    #[error("cannot rebuild the conversation: {0}")]
    Conversation(String),
    /// The input is none of the formats the importers know.
    #[error(
        "not a trajectory swerve can import: expected a swerve trajectory, a mini-swe-agent \
         .traj.json, a SWE-agent .traj, R2E-Gym JSON lines or an OpenHands output.jsonl"
    )]
    UnknownFormat,
}

impl TrajectoryError {
    /// An error with no location yet.
    pub(super) fn new(kind: TrajectoryErrorKind) -> Self {
        Self(Box::new(Details {
            file: None,
            line: None,
            field: None,
            kind,
        }))
    }

    /// An error about one field.
    pub(super) fn in_field(field: impl Into<String>, kind: TrajectoryErrorKind) -> Self {
        let mut error = Self::new(kind);
        error.0.field = Some(field.into());
        error
    }

    /// Sets the file, and the line when given, unless already set.
    pub(super) fn at(mut self, file: &str, line: Option<usize>) -> Self {
        self.0.file.get_or_insert_with(|| file.to_owned());
        if self.0.line.is_none() {
            self.0.line = line;
        }
        self
    }

    /// The file, as the caller named it, when the error is about a file.
    pub fn file(&self) -> Option<&str> {
        self.0.file.as_deref()
    }

    /// The line (from 1), when the error is about one line of a JSON-lines file.
    pub fn line(&self) -> Option<usize> {
        self.0.line
    }

    /// The field at fault: a record field such as `"usage"`, or a path into an imported
    /// document such as `"messages[3].content"`.
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// What is wrong; its `Display` is the message without file, line and field.
    pub fn kind(&self) -> &TrajectoryErrorKind {
        &self.0.kind
    }
}

impl From<TrajectoryErrorKind> for TrajectoryError {
    fn from(kind: TrajectoryErrorKind) -> Self {
        Self::new(kind)
    }
}

impl fmt::Display for TrajectoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let details = &*self.0;
        let mut located = false;
        if let Some(file) = &details.file {
            f.write_str(file)?;
            located = true;
        }
        if let Some(line) = details.line {
            write!(f, "{}line {line}", if located { " " } else { "" })?;
            located = true;
        }
        if located {
            f.write_str(": ")?;
        }
        if let Some(field) = &details.field {
            write!(f, "field {field:?}: ")?;
        }
        write!(f, "{}", details.kind)
    }
}

/// Has no `source()`: the message already includes any I/O error.
impl std::error::Error for TrajectoryError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_puts_file_line_and_field_first() {
        let error = TrajectoryError::in_field("usage", TrajectoryErrorKind::MissingField)
            .at("run.jsonl", Some(4));
        assert_eq!(
            error.to_string(),
            "run.jsonl line 4: field \"usage\": required but missing"
        );
        let bare = TrajectoryError::new(TrajectoryErrorKind::MissingHeader);
        assert!(bare.to_string().starts_with("no header record"));
    }
}
