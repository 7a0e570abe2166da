//! Properties: no input makes the loaders panic, and valid tasks round-trip.

use std::fs;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value};
use swerve_core::task::{Task, TaskFileFormat, load_tasks, parse_tasks, write_tasks};

use super::fixture;

/// The typed fields' JSON names; extra keys must avoid them.
const TYPED: [&str; 12] = [
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
];

/// Any JSON value without floats (serde_json does not promise to round-trip every float
/// without its `float_roundtrip` feature).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// A test list as a dataset may spell it: absent, null, a list, or a JSON-encoded string
/// with any of several spacings.
fn test_list() -> impl Strategy<Value = Option<Value>> {
    let tests = prop::collection::vec(any::<String>(), 0..4);
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        tests.clone().prop_map(|tests| Some(Value::from(tests))),
        (tests, 0..3usize).prop_map(|(tests, style)| {
            let items: Vec<String> = tests
                .iter()
                .map(|test| Value::from(test.as_str()).to_string())
                .collect();
            let text = match style {
                0 => format!("[{}]", items.join(", ")),
                1 => format!("[{}]", items.join(",")),
                _ => format!("[ {} ]\n", items.join(" ,\t")),
            };
            Some(Value::from(text))
        }),
    ]
}

/// An optional string field: absent, null or a string.
fn optional_text() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        any::<String>().prop_map(|text| Some(Value::from(text)))
    ]
}

/// A valid task record with fields in any order and extra fields among them.
fn task_record() -> impl Strategy<Value = Map<String, Value>> {
    let required = prop::array::uniform4(any::<String>());
    let optional = prop::array::uniform6(optional_text());
    let lists = (test_list(), test_list());
    let extra = prop::collection::vec(("[a-zA-Z_]{1,12}", json_value()), 0..5);
    (required, optional, lists, extra).prop_flat_map(|(required, optional, (fail, pass), extra)| {
        let mut entries: Vec<(String, Value)> =
            ["instance_id", "repo", "base_commit", "problem_statement"]
                .into_iter()
                .zip(required)
                .map(|(key, value)| (key.to_owned(), Value::from(value)))
                .collect();
        let optional_keys = [
            "patch",
            "test_patch",
            "hints_text",
            "created_at",
            "version",
            "environment_setup_commit",
        ];
        let lists = [("FAIL_TO_PASS", fail), ("PASS_TO_PASS", pass)];
        for (key, value) in optional_keys.into_iter().zip(optional).chain(lists) {
            if let Some(value) = value {
                entries.push((key.to_owned(), value));
            }
        }
        entries.extend(
            extra
                .into_iter()
                .filter(|(key, _)| !TYPED.contains(&key.as_str())),
        );
        Just(entries)
            .prop_shuffle()
            .prop_map(|entries| entries.into_iter().collect())
    })
}

/// A task built in code, with any field values.
fn built_task() -> impl Strategy<Value = Task> {
    let required = prop::array::uniform4(any::<String>());
    let optional = prop::array::uniform6(any::<Option<String>>());
    let lists = prop::array::uniform2(prop::collection::vec(any::<String>(), 0..4));
    let extra = prop::collection::vec(("[a-zA-Z_]{1,12}", json_value()), 0..4);
    (required, optional, lists, extra).prop_map(|(required, optional, lists, extra)| {
        let [id, repo, commit, statement] = required;
        let mut task = Task::new(id, repo, commit, statement);
        let [patch, test_patch, hints, created, version, setup] = optional;
        (task.patch, task.test_patch, task.hints_text) = (patch, test_patch, hints);
        (task.created_at, task.version, task.environment_setup_commit) = (created, version, setup);
        [task.fail_to_pass, task.pass_to_pass] = lists;
        task.extra = extra
            .into_iter()
            .filter(|(key, _)| !TYPED.contains(&key.as_str()))
            .collect();
        task
    })
}

/// `tasks` written in `format` and parsed back.
fn reparse(tasks: &[Task], format: TaskFileFormat) -> Vec<Task> {
    let mut text = Vec::new();
    write_tasks(&mut text, tasks, format).unwrap();
    parse_tasks(std::str::from_utf8(&text).unwrap(), "p").unwrap()
}

proptest! {
    #[test]
    fn any_text_parses_or_errs_without_panicking(text in any::<String>()) {
        let _ = parse_tasks(&text, "p");
    }

    #[test]
    fn any_bytes_parse_or_err_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_tasks(&String::from_utf8_lossy(&bytes), "p");
    }

    #[test]
    fn json_like_text_parses_or_errs_without_panicking(
        values in prop::collection::vec(json_value(), 0..4),
        as_array in any::<bool>(),
    ) {
        let text = if as_array {
            Value::from(values).to_string()
        } else {
            values.iter().map(|value| format!("{value}\n")).collect()
        };
        let _ = parse_tasks(&text, "p");
    }

    #[test]
    fn damaged_task_files_err_without_panicking(
        name in prop::sample::select(vec!["mixed.jsonl", "swe-rebench-excerpt.json", "swe-bench-lite-excerpt.json"]),
        at in any::<Index>(),
        cut in any::<bool>(),
        insert in any::<char>(),
    ) {
        let text = fs::read_to_string(fixture(name)).unwrap();
        let mut at = at.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let damaged = if cut {
            text[..at].to_owned()
        } else {
            format!("{}{insert}{}", &text[..at], &text[at..])
        };
        let _ = parse_tasks(&damaged, name);
    }

    #[test]
    fn valid_records_round_trip_unchanged(records in prop::collection::vec(task_record(), 1..4)) {
        let lines: Vec<String> = records.iter().map(|record| serde_json::to_string(record).unwrap()).collect();
        let array = format!("[{}]", lines.join(","));
        let jsonl: String = lines.iter().map(|line| format!("{line}\n")).collect();
        for text in [array, jsonl] {
            let tasks = parse_tasks(&text, "p").unwrap();
            let written: Vec<String> =
                tasks.iter().map(|task| serde_json::to_string(&task.to_json()).unwrap()).collect();
            prop_assert_eq!(&written, &lines);
        }
    }

    #[test]
    fn built_tasks_round_trip(tasks in prop::collection::vec(built_task(), 1..4)) {
        for format in [TaskFileFormat::JsonArray, TaskFileFormat::JsonLines] {
            let reparsed = reparse(&tasks, format);
            prop_assert_eq!(&reparsed, &tasks);
            for (before, after) in tasks.iter().zip(&reparsed) {
                prop_assert_eq!(
                    serde_json::to_string(&before.to_json()).unwrap(),
                    serde_json::to_string(&after.to_json()).unwrap()
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_file_loads_or_errs_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("tasks.jsonl");
        fs::write(&path, &bytes).unwrap();
        let _ = load_tasks(&path);
    }
}
