//! Loading, saving and round trips, on fixtures and on the shared SWE-bench files.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use swerve_core::task::{
    Task, TaskFileFormat, load_tasks, parse_tasks, save_tasks, validate_tasks, write_tasks,
};

use super::fixture;

/// The records of a task file, read independently of `swerve_core` (array, object or JSONL).
fn raw_records(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap();
    match serde_json::from_str(&text) {
        Ok(Value::Array(items)) => items,
        Ok(object) => vec![object],
        Err(_) => text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect(),
    }
}

/// Asserts each task writes back exactly its raw record, key order included.
fn assert_same_records(tasks: &[Task], raw: &[Value], what: &str) {
    assert_eq!(tasks.len(), raw.len(), "{what}: record count");
    for (task, raw) in tasks.iter().zip(raw) {
        let written = serde_json::to_string(&task.to_json()).unwrap();
        let expected = serde_json::to_string(raw).unwrap();
        assert_eq!(written, expected, "{what}: {}", task.instance_id);
    }
}

/// Saves `tasks` in both formats into `dir`, reloads them, and checks nothing changed.
fn assert_save_reload(tasks: &[Task], dir: &Path, what: &str) {
    for (format, name) in [
        (TaskFileFormat::JsonArray, "out.json"),
        (TaskFileFormat::JsonLines, "out.jsonl"),
    ] {
        let path = dir.join(name);
        save_tasks(&path, tasks, format).unwrap();
        let reloaded = load_tasks(&path).unwrap();
        assert_eq!(reloaded, tasks, "{what} via {name}");
        let raw: Vec<Value> = tasks
            .iter()
            .map(|task| Value::Object(task.to_json()))
            .collect();
        assert_same_records(&reloaded, &raw, what);
    }
}

#[test]
fn every_shared_swe_bench_file_loads_and_round_trips() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/swe-bench");
    let Ok(entries) = fs::read_dir(&dir) else {
        println!("skipped: {} is absent", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries.map(|entry| entry.unwrap().path()).collect();
    paths.sort();
    assert!(!paths.is_empty(), "{} holds no files", dir.display());
    let temp = tempfile::tempdir().unwrap();
    for path in paths {
        let what = path.display().to_string();
        let tasks = load_tasks(&path).unwrap_or_else(|err| panic!("{err}"));
        assert!(!tasks.is_empty(), "{what}: no tasks");
        assert_same_records(&tasks, &raw_records(&path), &what);
        assert_save_reload(&tasks, temp.path(), &what);
        for problem in validate_tasks(&tasks) {
            println!("{what}: {problem}");
        }
    }
}

#[test]
fn swe_bench_lite_excerpt_loads_typed_fields() {
    let path = fixture("swe-bench-lite-excerpt.json");
    let tasks = load_tasks(&path).unwrap();
    assert_eq!(tasks.len(), 2);
    let sympy = &tasks[0];
    assert_eq!(sympy.instance_id, "sympy__sympy-13031");
    assert_eq!(sympy.repo, "sympy/sympy");
    assert_eq!(sympy.owner_and_name(), Some(("sympy", "sympy")));
    assert_eq!(
        sympy.base_commit,
        "2dfa7457f20ee187fbb09b5b6a1631da4458388c"
    );
    assert_eq!(sympy.version.as_deref(), Some("1.1"));
    assert_eq!(sympy.fail_to_pass, ["test_sparse_matrix"]);
    assert_eq!(sympy.pass_to_pass.len(), 9);
    assert!(
        sympy
            .patch
            .as_deref()
            .unwrap()
            .starts_with("diff --git a/sympy/")
    );
    assert!(sympy.extra.is_empty());
    assert_eq!(sympy.local_repo_path(), None);
    assert_same_records(&tasks, &raw_records(&path), "lite excerpt");
}

#[test]
fn swe_rebench_excerpt_keeps_extra_fields_in_order_and_bytes() {
    let path = fixture("swe-rebench-excerpt.json");
    let tasks = load_tasks(&path).unwrap();
    assert_eq!(tasks.len(), 1);
    let extra_keys: Vec<&str> = tasks[0].extra.keys().map(String::as_str).collect();
    assert_eq!(
        extra_keys,
        [
            "meta",
            "install_config",
            "requirements",
            "environment",
            "FAIL_TO_FAIL",
            "PASS_TO_FAIL",
            "license_name",
            "docker_image",
            "ip"
        ]
    );
    assert_same_records(&tasks, &raw_records(&path), "rebench excerpt");
    let mut written = Vec::new();
    write_tasks(&mut written, &tasks, TaskFileFormat::JsonArray).unwrap();
    assert_eq!(
        String::from_utf8(written).unwrap(),
        fs::read_to_string(&path).unwrap()
    );
}

#[test]
fn jsonl_fixture_round_trips_byte_for_byte() {
    let path = fixture("mixed.jsonl");
    let original = fs::read(&path).unwrap();
    let tasks = load_tasks(&path).unwrap();
    assert_eq!(tasks.len(), 3);
    assert_same_records(&tasks, &raw_records(&path), "mixed.jsonl");
    let temp = tempfile::tempdir().unwrap();
    let copy = temp.path().join("copy.jsonl");
    save_tasks(&copy, &tasks, TaskFileFormat::JsonLines).unwrap();
    assert_eq!(fs::read(&copy).unwrap(), original);
    assert_save_reload(&tasks, temp.path(), "mixed.jsonl");
}

#[test]
fn jsonl_fixture_fields() {
    let tasks = load_tasks(&fixture("mixed.jsonl")).unwrap();
    let astropy = &tasks[0];
    assert_eq!(astropy.fail_to_pass.len(), 2);
    assert!(astropy.fail_to_pass[0].starts_with("astropy/modeling/tests/test_separable.py::"));
    assert!(astropy.pass_to_pass.is_empty());
    assert_eq!(astropy.hints_text, None);
    assert_eq!(astropy.test_patch.as_deref(), Some(""));
    assert!(astropy.problem_statement.contains("naïve ✓ 😀\r\n\t"));
    assert_eq!(
        astropy.extra.get("difficulty"),
        Some(&json!("15 min - 1 hour"))
    );

    let pandas = &tasks[1];
    assert_eq!(
        pandas.local_repo_path(),
        Some("/data/repos/pandas-dev__pandas")
    );
    assert_eq!(pandas.patch, None);
    assert_eq!(pandas.version, None);
    assert!(pandas.pass_to_pass.is_empty());
    assert_eq!(pandas.extra["meta"]["score"], json!(0.75));

    let minimal = &tasks[2];
    assert!(minimal.fail_to_pass.is_empty());
    assert_eq!(minimal.pass_to_pass, ["test_hello"]);
    assert_eq!(minimal.problem_statement, "");
}

/// The JSON text of `task`, for comparing key order.
fn text_of(task: &Task) -> String {
    serde_json::to_string(&task.to_json()).unwrap()
}

#[test]
fn encoded_test_lists_stay_verbatim_until_changed() {
    let text = r#"{"instance_id":"a__b-1","repo":"a/b","base_commit":"abcdef1","problem_statement":"x","FAIL_TO_PASS":"[ \"t1\" ,\"t2\"]","PASS_TO_PASS":"[]"}"#;
    let mut task = parse_tasks(text, "t.jsonl").unwrap().remove(0);
    assert_eq!(task.fail_to_pass, ["t1", "t2"]);
    assert_eq!(text_of(&task), text);

    task.fail_to_pass.push("t3 é".into());
    task.pass_to_pass.push("p1".into());
    assert_eq!(
        text_of(&task),
        r#"{"instance_id":"a__b-1","repo":"a/b","base_commit":"abcdef1","problem_statement":"x","FAIL_TO_PASS":"[\"t1\", \"t2\", \"t3 é\"]","PASS_TO_PASS":"[\"p1\"]"}"#
    );
}

#[test]
fn nulls_stay_null_until_set_and_new_fields_go_last() {
    let text = r#"{"z_first":1,"instance_id":"a__b-1","hints_text":null,"repo":"a/b","FAIL_TO_PASS":null,"base_commit":"abcdef1","problem_statement":"x","z_last":[true]}"#;
    let mut task = parse_tasks(text, "t.jsonl").unwrap().remove(0);
    assert_eq!(text_of(&task), text);

    task.hints_text = Some("hint".into());
    task.fail_to_pass = vec!["t".into()];
    task.patch = Some("diff".into());
    task.pass_to_pass = vec!["p".into()];
    task.extra.insert("added".into(), json!("new"));
    task.extra.shift_remove("z_first");
    assert_eq!(
        text_of(&task),
        r#"{"instance_id":"a__b-1","hints_text":"hint","repo":"a/b","FAIL_TO_PASS":["t"],"base_commit":"abcdef1","problem_statement":"x","z_last":[true],"patch":"diff","PASS_TO_PASS":["p"],"added":"new"}"#
    );

    task.hints_text = None;
    task.fail_to_pass.clear();
    assert!(text_of(&task).contains(r#""hints_text":null,"repo":"a/b","FAIL_TO_PASS":null,"#));
}

#[test]
fn new_tasks_use_swe_bench_key_order() {
    let mut task = Task::new("o__n-1", "o/n", "abcdef1", "fix it");
    assert_eq!(
        text_of(&task),
        r#"{"repo":"o/n","instance_id":"o__n-1","base_commit":"abcdef1","problem_statement":"fix it","FAIL_TO_PASS":[],"PASS_TO_PASS":[]}"#
    );
    task.version = Some("1.0".into());
    task.extra.insert("repo".into(), json!("ignored"));
    task.extra.insert("image".into(), json!("img"));
    assert_eq!(
        text_of(&task),
        r#"{"repo":"o/n","instance_id":"o__n-1","base_commit":"abcdef1","problem_statement":"fix it","version":"1.0","FAIL_TO_PASS":[],"PASS_TO_PASS":[],"image":"img"}"#
    );
}

#[test]
fn helpers() {
    let mut task = Task::new("o__n-1", "owner/name", "abcdef1", "");
    assert_eq!(task.owner_and_name(), Some(("owner", "name")));
    for repo in ["owner", "/name", "owner/", "a/b/c", ""] {
        task.repo = repo.into();
        assert_eq!(task.owner_and_name(), None, "{repo}");
    }
    assert_eq!(task.local_repo_path(), None);
    task.extra.insert("repo_path".into(), json!("/repos/b"));
    assert_eq!(task.local_repo_path(), Some("/repos/b"));
    task.extra.insert("local_repo_path".into(), json!(7));
    assert_eq!(task.local_repo_path(), Some("/repos/b"));
    task.extra
        .insert("local_repo_path".into(), json!("/repos/a"));
    assert_eq!(task.local_repo_path(), Some("/repos/a"));
}

const MINIMAL: &str =
    r#"{"instance_id":"a__b-1","repo":"a/b","base_commit":"abcdef1","problem_statement":"x"}"#;

#[test]
fn shapes_are_detected() {
    let pretty_object = "{\n  \"instance_id\": \"a__b-1\",\n  \"repo\": \"a/b\",\n  \"base_commit\": \"abcdef1\",\n  \"problem_statement\": \"x\"\n}\n";
    let one_line_array = format!("[{MINIMAL},{MINIMAL}]");
    let jsonl_with_blanks = format!("\n{MINIMAL}\r\n   \n{MINIMAL}\r\n\n");
    let with_bom = format!("\u{feff}{MINIMAL}\n");
    for (text, count) in [
        (pretty_object, 1),
        (MINIMAL, 1),
        (&one_line_array, 2),
        (&jsonl_with_blanks, 2),
        (&with_bom, 1),
        ("[]", 0),
        (" [ ]\n", 0),
    ] {
        let tasks = parse_tasks(text, "t").unwrap_or_else(|err| panic!("{text:?}: {err}"));
        assert_eq!(tasks.len(), count, "{text:?}");
    }
}

#[test]
fn serde_impls_use_the_same_rules() {
    let task: Task = serde_json::from_str(MINIMAL).unwrap();
    assert_eq!(serde_json::to_string(&task).unwrap(), MINIMAL);
    let err = serde_json::from_str::<Task>(r#"{"instance_id":"a__b-1","repo":5}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"task "a__b-1": field "repo": expected a string, found a number"#
    );
    let err = serde_json::from_str::<Task>("{}").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"task: field "instance_id": required but missing; add the task's unique id, e.g. "django__django-11099""#
    );
}

#[test]
fn format_from_path() {
    for (name, format) in [
        ("a.jsonl", TaskFileFormat::JsonLines),
        ("a.NDJSON", TaskFileFormat::JsonLines),
        ("a.json", TaskFileFormat::JsonArray),
        ("jsonl", TaskFileFormat::JsonArray),
    ] {
        assert_eq!(TaskFileFormat::from_path(Path::new(name)), format, "{name}");
    }
}

#[test]
fn save_replaces_atomically_and_leaves_no_temporary_files() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("tasks.json");
    fs::write(&path, "old").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    }
    let tasks = parse_tasks(MINIMAL, "t").unwrap();
    save_tasks(&path, &tasks, TaskFileFormat::JsonArray).unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "[\n  {\n    \"instance_id\": \"a__b-1\",\n    \"repo\": \"a/b\",\n    \"base_commit\": \"abcdef1\",\n    \"problem_statement\": \"x\"\n  }\n]\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
    save_tasks(&path, &[], TaskFileFormat::JsonLines).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), "");
    let names: Vec<_> = fs::read_dir(temp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tasks.json"]);
}
