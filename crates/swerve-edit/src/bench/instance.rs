//! PR-Edit instances and their JSON-lines files: one object per line with `instance_id`,
//! `path`, `original`, `target`, `instruction` and `metadata`. Reading checks each field
//! and names the file, line and field of the first problem.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use swerve_core::atomic::write_atomically;
use swerve_core::json_kind::describe;

/// One edit to make: a file before and after a change, and the instruction asking for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditInstance {
    /// A unique id (mined instances: `{repository}@{commit}`).
    pub instance_id: String,
    /// The file's path in its repository; its extension picks the language of the
    /// string-preserving normalization. May be empty.
    pub path: String,
    /// The file before the change.
    pub original: String,
    /// The file after the change (the reference answer).
    pub target: String,
    /// What the editor is asked to do.
    pub instruction: String,
    /// Anything else: where the instance came from (repository, commit, subject, …).
    pub metadata: Map<String, Value>,
}

impl EditInstance {
    /// The unified diff from the original to `text`, as `a/{path}` and `b/{path}` (`file`
    /// when the path is empty).
    pub fn diff_to(&self, text: &str) -> String {
        let name = if self.path.is_empty() {
            "file"
        } else {
            &self.path
        };
        crate::diff::unified_diff(
            &self.original,
            text,
            &format!("a/{name}"),
            &format!("b/{name}"),
        )
    }
}

/// A benchmark file could not be read, written or mined.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A line of a JSON-lines file is not a valid record.
    #[error("{} line {line}: {message}", path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A line of a JSON-lines file is not JSON.
    #[error("{place}: not JSON")]
    NotJson {
        /// The file and 1-based line number, as `file:line`.
        place: String,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A response row is incomplete or names an unknown instance.
    #[error("{0}")]
    Response(String),
    /// A git command failed.
    #[error("git {args} in {}: {detail}", repo.display())]
    Git {
        /// The repository.
        repo: PathBuf,
        /// The git arguments.
        args: String,
        /// git's error output, or why it could not run.
        detail: String,
    },
}

const FIELDS: [&str; 6] = [
    "instance_id",
    "path",
    "original",
    "target",
    "instruction",
    "metadata",
];

/// Reads an instance file. `original`, `target` and `instruction` are required strings;
/// `instance_id` defaults to `line-N`, `path` to empty, `metadata` to `{}`. Blank lines are
/// skipped; unknown fields and repeated ids are errors.
pub fn read_instances(path: &Path) -> Result<Vec<EditInstance>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut instances = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let error = |message: String| BenchError::Record {
            path: path.to_owned(),
            line: index + 1,
            message,
        };
        let instance = parse_instance(line, index + 1).map_err(error)?;
        if let Some(first) = seen.insert(instance.instance_id.clone(), index + 1) {
            return Err(error(format!(
                "instance_id {:?} is already used on line {first}",
                instance.instance_id
            )));
        }
        instances.push(instance);
    }
    Ok(instances)
}

fn parse_instance(line: &str, number: usize) -> Result<EditInstance, String> {
    let value: Value =
        serde_json::from_str(line).map_err(|error| format!("not valid JSON: {error}"))?;
    let Value::Object(mut fields) = value else {
        return Err(format!("expected an object, found {}", describe(&value)));
    };
    if let Some(unknown) = fields.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(format!(
            "field {unknown:?}: unknown field; the fields are {}",
            FIELDS.join(", ")
        ));
    }
    let mut text = |field: &str, default: Option<String>| match fields.remove(field) {
        Some(Value::String(text)) => Ok(text),
        None => default.ok_or_else(|| format!("field {field:?}: missing")),
        Some(other) => Err(format!(
            "field {field:?}: expected a string, found {}",
            describe(&other)
        )),
    };
    let instance_id = text("instance_id", Some(format!("line-{number}")))?;
    let path = text("path", Some(String::new()))?;
    let original = text("original", None)?;
    let target = text("target", None)?;
    let instruction = text("instruction", None)?;
    let metadata = match fields.remove("metadata") {
        None => Map::new(),
        Some(Value::Object(metadata)) => metadata,
        Some(other) => {
            return Err(format!(
                "field \"metadata\": expected an object, found {}",
                describe(&other)
            ));
        }
    };
    Ok(EditInstance {
        instance_id,
        path,
        original,
        target,
        instruction,
        metadata,
    })
}

/// Writes `records` as JSON lines, all or nothing.
pub fn write_jsonl<T: Serialize>(path: &Path, records: &[T]) -> Result<(), BenchError> {
    write_atomically(path, |out| {
        for record in records {
            serde_json::to_writer(&mut *out, record)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })
    .map_err(|source| BenchError::Io {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<EditInstance>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.jsonl");
        std::fs::write(&path, text).unwrap();
        read_instances(&path).map_err(|error| {
            error
                .to_string()
                .replace(&dir.path().display().to_string(), "DIR")
        })
    }

    #[test]
    fn instances_round_trip_and_defaults_apply() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.jsonl");
        let instance = EditInstance {
            instance_id: "calc@1".into(),
            path: "calc.py".into(),
            original: "a\n".into(),
            target: "b\n".into(),
            instruction: "say b".into(),
            metadata: Map::from_iter([("commit".to_owned(), Value::from("1"))]),
        };
        write_jsonl(&path, std::slice::from_ref(&instance)).unwrap();
        assert_eq!(read_instances(&path).unwrap(), [instance]);
        let read =
            read("\n{\"original\": \"a\", \"target\": \"b\", \"instruction\": \"i\"}\n").unwrap();
        assert_eq!(read[0].instance_id, "line-2");
        assert_eq!(read[0].path, "");
        assert!(read[0].metadata.is_empty());
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let cases = [
            (
                "[1]",
                "DIR/data.jsonl line 1: expected an object, found a list",
            ),
            (
                "{\"original\": 1}",
                "DIR/data.jsonl line 1: field \"original\": expected a string, found a number",
            ),
            (
                "{\"original\": \"a\", \"target\": \"b\"}",
                "DIR/data.jsonl line 1: field \"instruction\": missing",
            ),
            (
                "{\"original\": \"a\", \"target\": \"b\", \"instruction\": \"i\", \"metadata\": []}",
                "DIR/data.jsonl line 1: field \"metadata\": expected an object, found a list",
            ),
            (
                "{\"orig\": \"a\"}",
                "DIR/data.jsonl line 1: field \"orig\": unknown field; the fields are instance_id, path, original, target, instruction, metadata",
            ),
            (
                "{\"instance_id\": \"x\", \"original\": \"a\", \"target\": \"b\", \"instruction\": \"i\"}\n{\"instance_id\": \"x\", \"original\": \"a\", \"target\": \"b\", \"instruction\": \"i\"}",
                "DIR/data.jsonl line 2: instance_id \"x\" is already used on line 1",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(read(text).unwrap_err(), expected, "{text}");
        }
        assert!(
            read("{")
                .unwrap_err()
                .starts_with("DIR/data.jsonl line 1: not valid JSON: ")
        );
    }
}
