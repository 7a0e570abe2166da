//! The exact text of every error message, and the structured fields behind it.

use std::fs;

use swerve_core::task::{Location, TaskFileErrorKind, load_tasks, parse_tasks};

/// The one-line message `parse_tasks(text, source)` fails with.
fn error(text: &str, source: &str) -> String {
    match parse_tasks(text, source) {
        Ok(tasks) => panic!("{text:?} parsed into {} tasks", tasks.len()),
        Err(err) => err.to_string(),
    }
}

/// A JSON-lines record with the required fields and `tail` spliced in.
fn record(tail: &str) -> String {
    format!(
        r#"{{"instance_id":"django__django-11099","repo":"django/django","base_commit":"d26b2424437dabeeca94d7900b37d2df4410da0c","problem_statement":"x"{tail}}}"#
    )
}

#[test]
fn wrong_test_list_type_names_file_line_instance_and_field() {
    let good = record("");
    let text = format!("{good}\n{good}\n{}\n", record(r#","FAIL_TO_PASS":3"#));
    assert_eq!(
        error(&text, "tasks.jsonl"),
        r#"tasks.jsonl line 3 (instance_id "django__django-11099"): field "FAIL_TO_PASS": expected a list of test names or a JSON-encoded string of one, found a number"#
    );
    let err = parse_tasks(&text, "tasks.jsonl").unwrap_err();
    assert_eq!(err.file(), "tasks.jsonl");
    assert_eq!(err.location(), Location::Line(3));
    assert_eq!(err.instance_id(), Some("django__django-11099"));
    assert_eq!(err.field(), Some("FAIL_TO_PASS"));
    assert!(
        matches!(err.kind(), TaskFileErrorKind::WrongType { expected, found }
        if *expected == "a list of test names or a JSON-encoded string of one" && found == "a number")
    );
}

#[test]
fn test_list_contents() {
    let prefix = r#"tasks.jsonl line 1 (instance_id "django__django-11099"): field "#;
    for (tail, message) in [
        (
            r#","PASS_TO_PASS":["a",null]"#,
            r#""PASS_TO_PASS": expected a list of test names or a JSON-encoded string of one, found a list whose item 2 is null"#,
        ),
        (
            r#","FAIL_TO_PASS":"tests/test_x.py::test_y""#,
            r#""FAIL_TO_PASS": expected a list of test names or a JSON-encoded string of one, found a string that does not decode to a list of strings: "tests/test_x.py::test_y""#,
        ),
        (
            r#","FAIL_TO_PASS":"[1, 2]""#,
            r#""FAIL_TO_PASS": expected a list of test names or a JSON-encoded string of one, found a string that does not decode to a list of strings: "[1, 2]""#,
        ),
        (
            r#","FAIL_TO_PASS":"tests/test_a_rather_long_module_name.py::TestSomething::test_something_else_entirely""#,
            r#""FAIL_TO_PASS": expected a list of test names or a JSON-encoded string of one, found a string that does not decode to a list of strings: "tests/test_a_rather_long_module_name.py::TestSomething::test…""#,
        ),
        (
            r#","FAIL_TO_PASS":{}"#,
            r#""FAIL_TO_PASS": expected a list of test names or a JSON-encoded string of one, found an object"#,
        ),
    ] {
        assert_eq!(
            error(&record(tail), "tasks.jsonl"),
            format!("{prefix}{message}")
        );
    }
}

#[test]
fn wrong_string_types() {
    let prefix = r#"tasks.jsonl line 1 (instance_id "django__django-11099"): field "#;
    for (tail, message) in [
        (
            r#","hints_text":["a"]"#,
            r#""hints_text": expected a string or null, found a list"#,
        ),
        (
            r#","version":4.2"#,
            r#""version": expected a string or null, found a number"#,
        ),
        (
            r#","created_at":true"#,
            r#""created_at": expected a string or null, found a boolean"#,
        ),
    ] {
        assert_eq!(
            error(&record(tail), "tasks.jsonl"),
            format!("{prefix}{message}")
        );
    }
    assert_eq!(
        error(r#"{"instance_id":"a__b-1","repo":null}"#, "tasks.jsonl"),
        r#"tasks.jsonl line 1 (instance_id "a__b-1"): field "repo": expected a string, found null"#
    );
    assert_eq!(
        error(r#"{"instance_id":11099}"#, "tasks.jsonl"),
        r#"tasks.jsonl line 1: field "instance_id": expected a string, found a number"#
    );
}

#[test]
fn missing_required_fields() {
    assert_eq!(
        error("{\"repo\":\"a/b\"}\n", "tasks.jsonl"),
        r#"tasks.jsonl line 1: field "instance_id": required but missing; add the task's unique id, e.g. "django__django-11099""#
    );
    assert_eq!(
        error(r#"{"instance_id":"a__b-1"}"#, "t.jsonl"),
        r#"t.jsonl line 1 (instance_id "a__b-1"): field "repo": required but missing; add the GitHub repository as "owner/name""#
    );
    assert_eq!(
        error(
            r#"{"instance_id":"a__b-1","repo":"a/b","problem_statement":""}"#,
            "t.jsonl"
        ),
        r#"t.jsonl line 1 (instance_id "a__b-1"): field "base_commit": required but missing; add the commit id to check out before applying patches"#
    );
    assert_eq!(
        error(
            r#"{"instance_id":"a__b-1","repo":"a/b","base_commit":"abcdef1"}"#,
            "t.jsonl"
        ),
        r#"t.jsonl line 1 (instance_id "a__b-1"): field "problem_statement": required but missing; add the issue text the agent is given"#
    );
}

#[test]
fn array_records_are_numbered_from_one_with_their_line() {
    let text = format!(
        "[\n  {},\n  {{\"instance_id\": \"a__b-2\", \"repo\": \"a/b\",\n    \"problem_statement\": \"[{{,\\\"\"}}\n]\n",
        record("")
    );
    assert_eq!(
        error(&text, "tasks.json"),
        r#"tasks.json record 2 at line 3 (instance_id "a__b-2"): field "base_commit": required but missing; add the commit id to check out before applying patches"#
    );
    let text = format!("[{}, [], {}]", record(""), record(""));
    assert_eq!(
        error(&text, "tasks.json"),
        "tasks.json record 2 at line 1: expected a JSON object (one task), found a list"
    );
    let text = "{\n  \"instance_id\": \"a__b-1\",\n  \"repo\": \"a/b\"\n}";
    assert_eq!(
        error(text, "task.json"),
        r#"task.json (instance_id "a__b-1"): field "base_commit": required but missing; add the commit id to check out before applying patches"#
    );
}

#[test]
fn jsonl_records_must_be_objects() {
    let text = format!("{}\n\n\"just a string\"\n", record(""));
    assert_eq!(
        error(&text, "tasks.jsonl"),
        "tasks.jsonl line 3: expected a JSON object (one task), found a string"
    );
}

#[test]
fn invalid_json_gives_line_and_column() {
    let text = format!(
        "{}\n{{\"instance_id\": \"a__b-1\",\n{}\n",
        record(""),
        record("")
    );
    assert_eq!(
        error(&text, "tasks.jsonl"),
        "tasks.jsonl line 2 column 25: invalid JSON: EOF while parsing a value; each line must hold one complete task object"
    );
    assert_eq!(
        error("[\n  {\"a\": 1},\n]\n", "tasks.json"),
        "tasks.json line 3 column 1: invalid JSON: trailing comma"
    );
    assert_eq!(
        error(
            "{\n  \"instance_id\": \"a__b-1\"\n  \"repo\": \"a/b\"\n}\n",
            "task.json"
        ),
        "task.json line 3 column 3: invalid JSON: expected `,` or `}`"
    );
    assert_eq!(
        error("oops", "tasks.json"),
        "tasks.json line 1 column 1: invalid JSON: expected value"
    );
}

#[test]
fn empty_and_wrongly_shaped_files() {
    let shapes = "a JSON array of task objects, one task object per line (JSON lines) or a single task object";
    assert_eq!(
        error("", "tasks.jsonl"),
        format!("tasks.jsonl: the file is empty; expected {shapes}")
    );
    assert_eq!(
        error(" \n\t\n", "tasks.jsonl"),
        format!("tasks.jsonl: the file is empty; expected {shapes}")
    );
    assert_eq!(
        error("42\n", "tasks.json"),
        format!("tasks.json: expected {shapes}, found a number")
    );
    assert_eq!(
        error("\"x\"", "tasks.json"),
        format!("tasks.json: expected {shapes}, found a string")
    );
}

#[test]
fn file_errors() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("tasks.jsonl");
    let err = load_tasks(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: cannot read the file: No such file or directory (os error 2)",
            path.display()
        )
    );
    assert!(matches!(err.kind(), TaskFileErrorKind::Read(_)));

    fs::write(&path, b"{\"instance_id\":\"a\"}\n{\"repo\":\"caf\xe9\"}\n").unwrap();
    let err = load_tasks(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} line 2 column 13: not valid UTF-8; convert the file to UTF-8",
            path.display()
        )
    );
    assert_eq!(
        err.location(),
        Location::Position {
            line: 2,
            column: 13
        }
    );

    let missing_dir = temp.path().join("no/such/dir/tasks.json");
    let err = swerve_core::task::save_tasks(
        &missing_dir,
        &[],
        swerve_core::task::TaskFileFormat::JsonArray,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: cannot write the file: No such file or directory (os error 2)",
            missing_dir.display()
        )
    );
}
