//! Multi-SWE-bench rows, which name their task differently from SWE-bench.
//!
//! A Multi-SWE-bench row (`multi_swe_bench/harness/pull_request.py` and `report.py`) has
//! `org`, `repo` (the bare name), `number`, `base.sha`, `fix_patch`, `test_patch`, the
//! issue as `resolved_issues` (each `title` and `body`) and the expected tests as
//! `f2p_tests`, `s2p_tests`, `n2p_tests` and `p2p_tests` (test name → its status without
//! patches, with the test patch and with the fix). Such rows load as they are: the SWE-bench
//! fields they lack are derived (and not written back unless changed; `repo` is written back
//! as the row had it):
//!
//! - `instance_id`: the row's own, else `org__repo-number`;
//! - `repo`: `org/repo`;
//! - `base_commit`: `base.sha`;
//! - `patch`: `fix_patch`;
//! - `problem_statement`: each resolved issue's title and body (the pull request's when it
//!   names none);
//! - `FAIL_TO_PASS`: the names in `f2p_tests`, `s2p_tests` and `n2p_tests` (every test the
//!   fix must leave passing that did not pass with the test patch alone), sorted;
//! - `PASS_TO_PASS`: the names in `p2p_tests`, sorted.
//!
//! The rows' own fields stay in [`Task::extra`](super::Task::extra), where the family's
//! reward rule reads them.

use serde_json::{Map, Value};

use super::field::Field;

/// The keys of a row's expected tests that must pass after the fix without having passed
/// with the test patch alone.
const TO_PASS: [&str; 3] = ["f2p_tests", "s2p_tests", "n2p_tests"];

/// The key of a row's tests that pass with the test patch and with the fix.
const PASS_TO_PASS: &str = "p2p_tests";

/// Whether `object` is a Multi-SWE-bench row: it has `org`, `number`, `base.sha` and
/// `fix_patch`.
pub(crate) fn is_row(object: &Map<String, Value>) -> bool {
    object.get("org").is_some_and(Value::is_string)
        && object.get("number").is_some_and(Value::is_number)
        && object.get("fix_patch").is_some_and(Value::is_string)
        && base_sha(object).is_some()
}

fn base_sha(object: &Map<String, Value>) -> Option<&str> {
    object.get("base")?.get("sha")?.as_str()
}

/// Values for the SWE-bench fields a Multi-SWE-bench row lacks (see the module's
/// documentation); nothing for other rows.
pub(crate) fn derive_missing(object: &Map<String, Value>) -> Vec<(Field, Value)> {
    if !is_row(object) {
        return Vec::new();
    }
    let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    let absent = |field: Field| !object.contains_key(field.name());
    let (org, name) = (text("org"), text("repo"));
    let mut derived = Vec::new();
    if absent(Field::InstanceId) {
        let number = object
            .get("number")
            .map(ToString::to_string)
            .unwrap_or_default();
        derived.push((Field::InstanceId, format!("{org}__{name}-{number}").into()));
    }
    if !name.contains('/') {
        derived.push((Field::Repo, format!("{org}/{name}").into()));
    }
    if absent(Field::BaseCommit) {
        let sha = base_sha(object).unwrap_or_default();
        derived.push((Field::BaseCommit, sha.into()));
    }
    if absent(Field::Patch) {
        derived.push((Field::Patch, text("fix_patch").into()));
    }
    if absent(Field::ProblemStatement) {
        derived.push((Field::ProblemStatement, problem_statement(object).into()));
    }
    if absent(Field::FailToPass) {
        derived.push((Field::FailToPass, test_names(object, &TO_PASS)));
    }
    if absent(Field::PassToPass) {
        derived.push((Field::PassToPass, test_names(object, &[PASS_TO_PASS])));
    }
    derived
}

/// Each resolved issue as its title, a newline and its body, the issues apart by a blank
/// line; the pull request's `title` and `body` when the row names no issue.
fn problem_statement(object: &Map<String, Value>) -> String {
    let issue = |item: &Value| {
        let part = |key| item.get(key).and_then(Value::as_str).unwrap_or("");
        format!("{}\n{}", part("title"), part("body"))
            .trim()
            .to_owned()
    };
    let issues: Vec<String> = object
        .get("resolved_issues")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(issue)
                .filter(|text| !text.is_empty())
                .collect()
        })
        .unwrap_or_default();
    match issues.is_empty() {
        true => issue(&Value::Object(object.clone())),
        false => issues.join("\n\n"),
    }
}

/// The sorted names in the test maps under `keys`, as a JSON list.
fn test_names(object: &Map<String, Value>, keys: &[&str]) -> Value {
    let mut names: Vec<&String> = keys
        .iter()
        .filter_map(|key| object.get(*key)?.as_object())
        .flat_map(Map::keys)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| Value::String(name.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::task::Task;

    /// The shape of `tokio-rs__bytes-732` in Multi-SWE-bench, its patches and lists cut.
    fn row() -> serde_json::Value {
        json!({
            "org": "tokio-rs",
            "repo": "bytes",
            "number": 732,
            "state": "closed",
            "title": "Apply sign extension when decoding int",
            "body": "This PR fixes a regression introduced in #280.",
            "base": {"label": "tokio-rs:master", "ref": "master", "sha": "291df5acc94b82a48765e67eeb1c1a2074539e68"},
            "resolved_issues": [{"number": 730, "title": "`Buf::get_int()` returns a positive number", "body": "Steps to reproduce"}],
            "fix_patch": "diff --git a/src/buf/buf_impl.rs b/src/buf/buf_impl.rs\n",
            "test_patch": "diff --git a/tests/test_buf.rs b/tests/test_buf.rs\n",
            "fixed_tests": {"test_get_int": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
            "p2p_tests": {"test_get_u16": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
            "f2p_tests": {"test_get_int": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
            "s2p_tests": {},
            "n2p_tests": {"vectored_read": {"run": "PASS", "test": "NONE", "fix": "PASS"}},
            "run_result": {"passed_count": 1, "failed_count": 0, "skipped_count": 0, "passed_tests": ["vectored_read"], "failed_tests": [], "skipped_tests": []},
            "instance_id": "tokio-rs__bytes-732"
        })
    }

    #[test]
    fn a_multi_swe_bench_row_loads_with_swe_bench_fields_and_round_trips() {
        let task: Task = serde_json::from_value(row()).unwrap();
        assert_eq!(task.instance_id, "tokio-rs__bytes-732");
        assert_eq!(task.repo, "tokio-rs/bytes");
        assert_eq!(task.base_commit, "291df5acc94b82a48765e67eeb1c1a2074539e68");
        assert_eq!(
            task.patch.as_deref(),
            Some("diff --git a/src/buf/buf_impl.rs b/src/buf/buf_impl.rs\n")
        );
        assert_eq!(
            task.problem_statement,
            "`Buf::get_int()` returns a positive number\nSteps to reproduce"
        );
        assert_eq!(task.fail_to_pass, ["test_get_int", "vectored_read"]);
        assert_eq!(task.pass_to_pass, ["test_get_u16"]);
        assert!(task.extra.contains_key("f2p_tests"));
        assert!(task.extra.contains_key("fix_patch"));
        assert_eq!(serde_json::to_value(&task).unwrap(), row());
    }

    #[test]
    fn changed_fields_are_written_and_an_id_is_made_when_missing() {
        let mut object = row();
        object.as_object_mut().unwrap().remove("instance_id");
        object["resolved_issues"] = json!([]);
        let mut task: Task = serde_json::from_value(object).unwrap();
        assert_eq!(task.instance_id, "tokio-rs__bytes-732");
        assert_eq!(
            task.problem_statement,
            "Apply sign extension when decoding int\nThis PR fixes a regression introduced in #280."
        );
        task.repo = "someone/bytes".into();
        task.pass_to_pass.push("test_get_u32".into());
        let written = serde_json::to_value(&task).unwrap();
        assert_eq!(written["repo"], "someone/bytes");
        assert_eq!(
            written["PASS_TO_PASS"],
            json!(["test_get_u16", "test_get_u32"])
        );
        assert!(written.get("instance_id").is_none());
        assert!(written.get("FAIL_TO_PASS").is_none());
    }

    #[test]
    fn rows_of_other_shapes_are_not_taken_for_multi_swe_bench() {
        let mut object = row();
        object.as_object_mut().unwrap().remove("base");
        assert!(serde_json::from_value::<Task>(object).is_err());
    }
}
