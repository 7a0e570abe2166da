//! [`TaskFileError`]: what went wrong reading or writing a task file, and where.
//!
//! Errors are structured (file, [`Location`], instance id, field, [`TaskFileErrorKind`],
//! each behind an accessor) so a CLI can print or sort them; `Display` renders them on
//! one line:
//!
//! ```text
//! tasks.jsonl line 3 (instance_id "django__django-11099"): field "FAIL_TO_PASS": expected a list of test names or a JSON-encoded string of one, found a number
//! ```

use std::fmt;

pub(crate) use crate::json_kind::describe;

/// The shapes a task file may have, as named in error messages.
const FILE_SHAPES: &str =
    "a JSON array of task objects, one task object per line (JSON lines) or a single task object";

/// An error reading, parsing or writing a task file. The details are boxed to keep
/// `Result`s small; read them with the accessors.
#[derive(Debug)]
pub struct TaskFileError(Box<Details>);

#[derive(Debug)]
struct Details {
    file: String,
    location: Location,
    instance_id: Option<String>,
    field: Option<&'static str>,
    kind: TaskFileErrorKind,
}

/// Where in a task file an error is. Lines, columns and record numbers count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The file as a whole (or a file holding a single task object).
    File,
    /// A position in the text: a JSON syntax error or an invalid UTF-8 byte.
    /// Columns count bytes, as serde_json does.
    Position {
        /// Line, from 1.
        line: usize,
        /// Column in bytes, from 1.
        column: usize,
    },
    /// A JSON-lines record, by the line it is on (from 1; blank lines count).
    Line(usize),
    /// An element of a JSON array: its number (the first record is 1) and the line it starts on.
    Record {
        /// Element number, from 1.
        number: usize,
        /// The line its opening brace is on, from 1.
        line: usize,
    },
    /// A row of a table (a Parquet file), from 1.
    Row(usize),
}

/// What is wrong with a task file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskFileErrorKind {
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Read(std::io::Error),
    /// The file (or its temporary sibling) could not be written or renamed into place.
    #[error("cannot write the file: {0}")]
    Write(std::io::Error),
    /// The bytes are not UTF-8 text.
    #[error("not valid UTF-8; convert the file to UTF-8")]
    NotUtf8,
    /// The file is empty or holds only whitespace.
    #[error("the file is empty; expected {FILE_SHAPES}")]
    Empty,
    /// The file is valid JSON but neither an array nor an object.
    #[error("expected {FILE_SHAPES}, found {found}")]
    NotTaskFile {
        /// What the file holds, such as "a number".
        found: &'static str,
    },
    /// A JSON syntax error in a JSON document (array or single object).
    #[error("invalid JSON: {message}")]
    InvalidJson {
        /// serde_json's message, without its position.
        message: String,
    },
    /// A JSON syntax error in one line of a JSON-lines file.
    #[error("invalid JSON: {message}; each line must hold one complete task object")]
    InvalidJsonLine {
        /// serde_json's message, without its position.
        message: String,
    },
    /// A record is valid JSON but not an object.
    #[error("expected a JSON object (one task), found {found}")]
    NotAnObject {
        /// What the record is, such as "a list".
        found: &'static str,
    },
    /// A required field is absent.
    #[error("required but missing; add {what}")]
    MissingField {
        /// What the field should hold.
        what: &'static str,
    },
    /// A field holds the wrong kind of value.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the field must hold.
        expected: &'static str,
        /// What it holds, such as "a number" or "a list whose item 2 is null".
        found: String,
    },
}

impl TaskFileError {
    /// The file, as the caller named it (the path given to `load_tasks`, or `source`).
    pub fn file(&self) -> &str {
        &self.0.file
    }

    /// Where in the file.
    pub fn location(&self) -> Location {
        self.0.location
    }

    /// The `instance_id` of the record, when the record has a string one.
    pub fn instance_id(&self) -> Option<&str> {
        self.0.instance_id.as_deref()
    }

    /// The task field at fault (its JSON name, such as `"FAIL_TO_PASS"`), if one is.
    pub fn field(&self) -> Option<&'static str> {
        self.0.field
    }

    /// What is wrong; its `Display` is the message without file, location and field.
    pub fn kind(&self) -> &TaskFileErrorKind {
        &self.0.kind
    }

    /// An error about the whole file.
    pub(super) fn whole_file(file: &str, kind: TaskFileErrorKind) -> Self {
        Self::at(file, Location::File, kind)
    }

    /// An error at `location`, with no field or instance id.
    pub(super) fn at(file: &str, location: Location, kind: TaskFileErrorKind) -> Self {
        Self::in_field(file, location, None, None, kind)
    }

    /// An error in one field of one record.
    pub(super) fn in_field(
        file: &str,
        location: Location,
        instance_id: Option<String>,
        field: Option<&'static str>,
        kind: TaskFileErrorKind,
    ) -> Self {
        Self(Box::new(Details {
            file: file.to_owned(),
            location,
            instance_id,
            field,
            kind,
        }))
    }

    /// A JSON syntax error in a whole JSON document, at serde_json's position.
    pub(super) fn syntax(file: &str, err: &serde_json::Error) -> Self {
        let location = Location::Position {
            line: err.line(),
            column: err.column(),
        };
        let message = syntax_message(err);
        Self::at(file, location, TaskFileErrorKind::InvalidJson { message })
    }

    /// A JSON syntax error in the JSON-lines record on line `line`.
    pub(super) fn syntax_in_line(file: &str, line: usize, err: &serde_json::Error) -> Self {
        let location = Location::Position {
            line,
            column: err.column(),
        };
        let message = syntax_message(err);
        Self::at(
            file,
            location,
            TaskFileErrorKind::InvalidJsonLine { message },
        )
    }
}

impl fmt::Display for TaskFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let details = &*self.0;
        f.write_str(&details.file)?;
        match details.location {
            Location::File => {}
            Location::Position { line, column } => write!(f, " line {line} column {column}")?,
            Location::Line(line) => write!(f, " line {line}")?,
            Location::Record { number, line } => write!(f, " record {number} at line {line}")?,
            Location::Row(row) => write!(f, " row {row}")?,
        }
        if let Some(id) = &details.instance_id {
            write!(f, " (instance_id {id:?})")?;
        }
        f.write_str(": ")?;
        if let Some(field) = details.field {
            write!(f, "field {field:?}: ")?;
        }
        write!(f, "{}", details.kind)
    }
}

/// Has no `source()`: the message already includes any I/O error, which error-chain
/// printers would otherwise repeat; [`TaskFileError::kind`] gives access to it.
impl std::error::Error for TaskFileError {}

/// serde_json's message for `err` without the " at line L column C" it appends.
fn syntax_message(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let position = format!(" at line {} column {}", err.line(), err.column());
    full.strip_suffix(&position).unwrap_or(&full).to_owned()
}
