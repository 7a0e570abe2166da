//! Task files: JSON arrays, JSON lines or a single object, read and written whole.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde::de::IgnoredAny;
use serde_json::Value;

use super::Task;
use super::error::{Location, TaskFileError, TaskFileErrorKind, describe};
use crate::atomic::write_atomically;

/// How [`save_tasks`] and [`write_tasks`] lay out a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFileFormat {
    /// One JSON array, pretty-printed with two-space indents, then a newline.
    JsonArray,
    /// JSON lines: each task as compact JSON on its own line.
    JsonLines,
}

impl TaskFileFormat {
    /// The format a file name asks for: [`JsonLines`](Self::JsonLines) for `.jsonl` and
    /// `.ndjson` (any case), [`JsonArray`](Self::JsonArray) otherwise.
    pub fn from_path(path: &Path) -> Self {
        let extension = path.extension().and_then(|ext| ext.to_str()).unwrap_or("");
        if ["jsonl", "ndjson"]
            .iter()
            .any(|ext| extension.eq_ignore_ascii_case(ext))
        {
            Self::JsonLines
        } else {
            Self::JsonArray
        }
    }
}

/// Reads the task file at `path` (see [`parse_tasks`]); errors name the path as given.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, TaskFileError> {
    let name = path.display().to_string();
    let bytes = fs::read(path)
        .map_err(|err| TaskFileError::whole_file(&name, TaskFileErrorKind::Read(err)))?;
    let text = String::from_utf8(bytes).map_err(|err| {
        let bytes = err.as_bytes();
        let valid = &bytes[..err.utf8_error().valid_up_to()];
        let line_start = valid
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |at| at + 1);
        let location = Location::Position {
            line: 1 + valid.iter().filter(|&&b| b == b'\n').count(),
            column: 1 + valid.len() - line_start,
        };
        TaskFileError::at(&name, location, TaskFileErrorKind::NotUtf8)
    })?;
    parse_tasks(&text, &name)
}

/// Parses task-file text; `source` names it in errors.
///
/// The shape is detected: text whose first non-blank line is a whole JSON object is JSON
/// lines (blank lines skipped); anything else must be one JSON document, either an array
/// of task objects or a single task object. A leading UTF-8 byte-order mark is ignored.
/// Never panics; the first problem found is returned.
pub fn parse_tasks(text: &str, source: &str) -> Result<Vec<Task>, TaskFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let start = text.trim_start();
    if start.is_empty() {
        return Err(TaskFileError::whole_file(source, TaskFileErrorKind::Empty));
    }
    let first_line = text
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("");
    if start.starts_with('{') && serde_json::from_str::<IgnoredAny>(first_line).is_ok() {
        parse_lines(text, source)
    } else {
        parse_document(text, source)
    }
}

/// Parses JSON lines: one task object per non-blank line.
fn parse_lines(text: &str, source: &str) -> Result<Vec<Task>, TaskFileError> {
    let mut tasks = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(line)
            .map_err(|err| TaskFileError::syntax_in_line(source, number, &err))?;
        tasks.push(task_from_value(value, source, || Location::Line(number))?);
    }
    Ok(tasks)
}

/// Parses one JSON document: an array of task objects, or a single task object.
fn parse_document(text: &str, source: &str) -> Result<Vec<Task>, TaskFileError> {
    let value = serde_json::from_str(text).map_err(|err| TaskFileError::syntax(source, &err))?;
    match value {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                task_from_value(item, source, || Location::Record {
                    number: index + 1,
                    line: element_line(text, index),
                })
            })
            .collect(),
        Value::Object(_) => Ok(vec![task_from_value(value, source, || Location::File)?]),
        other => Err(TaskFileError::whole_file(
            source,
            TaskFileErrorKind::NotTaskFile {
                found: describe(&other),
            },
        )),
    }
}

/// Reads one record of a table (row `row`, from 1, of `source`), such as a Parquet row
/// converted to a JSON object; errors name the source, the row, the task and the field.
pub fn task_from_row(row: Value, source: &str, number: usize) -> Result<Task, TaskFileError> {
    task_from_value(row, source, || Location::Row(number))
}

/// Reads one record, which must be a task object; `location` places it for errors.
fn task_from_value(
    value: Value,
    source: &str,
    location: impl FnOnce() -> Location,
) -> Result<Task, TaskFileError> {
    let Value::Object(object) = value else {
        let kind = TaskFileErrorKind::NotAnObject {
            found: describe(&value),
        };
        return Err(TaskFileError::at(source, location(), kind));
    };
    Task::from_object(object).map_err(|err| {
        let field = Some(err.field.name());
        TaskFileError::in_field(source, location(), err.instance_id, field, err.kind)
    })
}

/// The line (from 1) on which element `wanted` (from 0) of the top-level array in `text`
/// starts. `text` must be valid JSON; only called to place an error.
fn element_line(text: &str, wanted: usize) -> usize {
    let (mut line, mut depth, mut index) = (1, 0usize, 0);
    let (mut in_string, mut escaped, mut expecting) = (false, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if byte.is_ascii_whitespace() {
            line += usize::from(byte == b'\n');
            continue;
        }
        if depth == 1 && expecting {
            if index == wanted {
                return line;
            }
            expecting = false;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                expecting = depth == 1;
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => {
                index += 1;
                expecting = true;
            }
            _ => {}
        }
    }
    line
}

/// Writes `tasks` to `path` in `format`, atomically: the text goes to a temporary file
/// in the same directory, which is flushed to disk and then renamed over `path`, so
/// readers see the old file or the new one, never a part. An existing file's
/// permissions are kept. No tasks in JSON lines make an empty file, which the loaders
/// reject as a likely mistake; a JSON array stores an empty set as `[]`.
pub fn save_tasks(
    path: &Path,
    tasks: &[Task],
    format: TaskFileFormat,
) -> Result<(), TaskFileError> {
    write_atomically(path, |out| write_tasks(out, tasks, format)).map_err(|err| {
        TaskFileError::whole_file(&path.display().to_string(), TaskFileErrorKind::Write(err))
    })
}

/// Writes `tasks` in `format` to `out` (for example standard output).
pub fn write_tasks(mut out: impl Write, tasks: &[Task], format: TaskFileFormat) -> io::Result<()> {
    match format {
        TaskFileFormat::JsonArray => {
            serde_json::to_writer_pretty(&mut out, tasks)?;
            out.write_all(b"\n")
        }
        TaskFileFormat::JsonLines => {
            for task in tasks {
                serde_json::to_writer(&mut out, task)?;
                out.write_all(b"\n")?;
            }
            Ok(())
        }
    }
}
