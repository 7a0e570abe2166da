//! R2E-Gym's gold patch: the fix its rows carry as `parsed_commit_content`, R2E-Gym's
//! `ParsedCommit` serialized as JSON (`r2egym/commit_models/diff_classes.py`, R2E-Gym
//! commit 69bc9535), written out as R2E-Gym writes it: `ParsedCommit.get_patch(test_file=
//! False)`, the ground-truth patch of its trajectories (`agenthub/trajectory/trajectory.py`):
//! the Python files that are not test files, each as `FileDiff.get_patch` renders it,
//! byte for byte (`scripts/r2e-gym-crosscheck.py --gold` checks it against R2E-Gym's code).

use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

/// The row field holding the parsed commit (a JSON string, or the object itself).
pub const FIELD: &str = "parsed_commit_content";

/// Why a row's parsed commit gives no patch.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("field \"{FIELD}\" {0}")]
pub struct CommitError(String);

/// `ParsedCommit`: the parts of it a patch is written from (other fields are ignored).
#[derive(Debug, Deserialize)]
struct ParsedCommit {
    file_diffs: Vec<FileDiff>,
}

#[derive(Debug, Deserialize)]
struct FileDiff {
    header: FileDiffHeader,
    #[serde(default)]
    index_line: Option<IndexLine>,
    #[serde(default)]
    is_binary_file: bool,
    #[serde(default)]
    binary_line: Option<String>,
    #[serde(default)]
    minus_file: Option<FileInfo>,
    #[serde(default)]
    plus_file: Option<FileInfo>,
    #[serde(default)]
    hunks: Vec<UniHunk>,
}

#[derive(Debug, Deserialize)]
struct FileDiffHeader {
    file: FileInfo,
    #[serde(default)]
    misc_line: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FileInfo {
    path: String,
}

#[derive(Debug, Deserialize)]
struct IndexLine {
    old_commit_hash: String,
    new_commit_hash: String,
    #[serde(default)]
    mode: String,
}

#[derive(Debug, Deserialize)]
struct UniHunk {
    descriptor: UnitHunkDescriptor,
    line_group: LineGroup,
}

#[derive(Debug, Deserialize)]
struct UnitHunkDescriptor {
    old_range: Range,
    new_range: Range,
    #[serde(default)]
    section: String,
}

#[derive(Debug, Deserialize)]
struct Range {
    start: i64,
    #[serde(default)]
    length: Option<i64>,
}

#[derive(Debug, Deserialize)]
struct LineGroup {
    #[serde(default)]
    all_lines: Vec<Line>,
}

#[derive(Debug, Deserialize)]
struct Line {
    content: String,
    #[serde(rename = "type")]
    kind: LineType,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum LineType {
    Context,
    Added,
    Deleted,
    Note,
}

impl Range {
    /// `start` or `start,length` (`Range.get_patch`).
    fn render(&self) -> String {
        match self.length {
            None => self.start.to_string(),
            Some(length) => format!("{},{length}", self.start),
        }
    }
}

impl FileDiff {
    /// `FileDiff.is_test_file`: `*_test.py`, a name starting `test_`, or a `tests`, `Tests`,
    /// `test` or `Test` directory anywhere in the path.
    fn is_test_file(&self) -> bool {
        let path = self.header.file.path.as_str();
        let parts: Vec<&str> = path.split('/').collect();
        path.ends_with("_test.py")
            || path.starts_with("test_")
            || parts.last().is_some_and(|name| name.starts_with("test_"))
            || parts
                .iter()
                .any(|part| matches!(*part, "tests" | "Tests" | "test" | "Test"))
    }

    /// `FileDiff.get_patch`.
    fn render(&self, out: &mut String) -> Result<(), CommitError> {
        let path = &self.header.file.path;
        out.push_str(&format!("diff --git a/{path} b/{path}\n"));
        if let Some(misc) = self.header.misc_line.as_deref().filter(|m| !m.is_empty()) {
            out.push_str(misc);
            out.push('\n');
        }
        if let Some(index) = &self.index_line {
            let space = if index.mode.is_empty() { "" } else { " " };
            out.push_str(&format!(
                "index {}..{}{space}{}\n",
                index.old_commit_hash, index.new_commit_hash, index.mode
            ));
        }
        if self.is_binary_file {
            let line = self.binary_line.as_deref().ok_or_else(|| {
                CommitError(format!(
                    "marks {path} binary without its `binary_line`; R2E-Gym cannot write it either"
                ))
            })?;
            out.push_str(line);
            out.push('\n');
        }
        if let (Some(minus), Some(plus)) = (&self.minus_file, &self.plus_file) {
            out.push_str(&format!("--- {}\n+++ {}\n", minus.path, plus.path));
        }
        for hunk in &self.hunks {
            let descriptor = &hunk.descriptor;
            out.push_str(&format!(
                "@@ -{} +{} @@",
                descriptor.old_range.render(),
                descriptor.new_range.render()
            ));
            if !descriptor.section.is_empty() {
                out.push(' ');
                out.push_str(&descriptor.section);
            }
            out.push('\n');
            for line in &hunk.line_group.all_lines {
                let prefix = match line.kind {
                    LineType::Context => " ",
                    LineType::Added => "+",
                    LineType::Deleted => "-",
                    LineType::Note => "\\ ",
                };
                out.push_str(prefix);
                out.push_str(&line.content);
                out.push('\n');
            }
        }
        Ok(())
    }
}

/// The gold patch of a row whose `parsed_commit_content` is `value` (the JSON text, or the
/// object): the commit's Python files other than tests, as R2E-Gym writes them. Empty when
/// the commit changes none.
pub fn gold_patch(value: &Value) -> Result<String, CommitError> {
    let commit: ParsedCommit = match value {
        Value::String(text) => serde_json::from_str(text),
        other => serde_json::from_value(other.clone()),
    }
    .map_err(|error| CommitError(format!("is not R2E-Gym's parsed commit: {error}")))?;
    let mut patch = String::new();
    for file in &commit.file_diffs {
        if file.header.file.path.ends_with(".py") && !file.is_test_file() {
            file.render(&mut patch)?;
        }
    }
    Ok(patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(path: &str) -> Value {
        json!({
            "old_file_content": "", "new_file_content": "",
            "header": {"file": {"path": path}, "misc_line": null},
            "index_line": {"old_commit_hash": "1111111", "new_commit_hash": "2222222", "mode": "100644"},
            "minus_file": {"path": format!("a/{path}")}, "plus_file": {"path": format!("b/{path}")},
            "hunks": [{
                "descriptor": {"old_range": {"start": 3, "length": 2}, "new_range": {"start": 3, "length": null}, "section": "def f():"},
                "line_group": {"all_lines": [
                    {"content": "    x = 1", "type": "context"},
                    {"content": "    return x", "type": "deleted"},
                    {"content": "    return x + 1", "type": "added"},
                    {"content": "No newline at end of file", "type": "note"}
                ]},
                "modified_entities": [], "added_entities": [], "deleted_entities": []
            }]
        })
    }

    #[test]
    fn non_test_python_files_are_written_as_r2e_gym_writes_them() {
        let commit = json!({
            "file_diffs": [file("pkg/core.py"), file("pkg/tests/test_core.py"), file("docs/a.rst"), file("test_x.py")],
            "old_commit_hash": "a", "new_commit_hash": "b", "commit_message": "m",
            "commit_date": "2024-01-01T00:00:00", "metadata": {}
        });
        let expected = "diff --git a/pkg/core.py b/pkg/core.py\nindex 1111111..2222222 100644\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -3,2 +3 @@ def f():\n     x = 1\n-    return x\n+    return x + 1\n\\ No newline at end of file\n";
        assert_eq!(gold_patch(&commit).unwrap(), expected);
        // The dataset's field is the JSON text.
        assert_eq!(
            gold_patch(&Value::String(commit.to_string())).unwrap(),
            expected
        );
    }

    #[test]
    fn a_broken_commit_is_named() {
        let error = gold_patch(&json!("not json")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("field \"parsed_commit_content\" is not R2E-Gym's parsed commit"),
            "{error}"
        );
        let mut binary = file("pkg/core.py");
        binary["is_binary_file"] = json!(true);
        let error = gold_patch(&json!({"file_diffs": [binary]})).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("binary without its `binary_line`"),
            "{error}"
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "(?s).{0,300}") {
            let _ = gold_patch(&Value::String(text));
        }
    }
}
