//! Parquet files written by `datasets` load the same rows as its JSON-lines export.

use swerve_datasets::{load_file, parquet};

use crate::fixture;

const DATASETS: [(&str, &str); 4] = [
    (
        "princeton-nlp/SWE-bench_Verified/data/test-00000-of-00001.parquet",
        "princeton-nlp__SWE-bench_Verified.test.jsonl",
    ),
    (
        "nebius/SWE-rebench/data/test-00000-of-00001.parquet",
        "nebius__SWE-rebench.test.jsonl",
    ),
    (
        "SWE-bench/SWE-smith/data/train-00000-of-00001.parquet",
        "SWE-bench__SWE-smith.train.jsonl",
    ),
    (
        "swerve-examples/tasks/data/test-00000-of-00001.parquet",
        "swerve-examples__tasks.test.jsonl",
    ),
];

#[test]
fn parquet_rows_equal_the_jsonl_export_byte_for_byte() {
    for (parquet_file, export) in DATASETS {
        let parquet_path = fixture("hub").join(parquet_file);
        let export_path = fixture("exports").join(export);
        let from_parquet = load_file(&parquet_path).unwrap();
        let from_export = load_file(&export_path).unwrap();
        assert!(!from_parquet.is_empty());
        assert_eq!(from_parquet, from_export, "{parquet_file}");
        // Written back, each task is the same JSON text: every key in the same place,
        // every string the same bytes.
        for (a, b) in from_parquet.iter().zip(&from_export) {
            assert_eq!(
                serde_json::to_string(a).unwrap(),
                serde_json::to_string(b).unwrap()
            );
        }
        // And the raw rows, before any task rule, are equal values.
        let rows = parquet::read_rows(&parquet_path).unwrap();
        let exported: Vec<serde_json::Value> = std::fs::read_to_string(&export_path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(rows, exported, "{parquet_file}");
    }
}

#[test]
fn hub_rows_keep_their_shapes() {
    let verified = load_file(
        &fixture("hub").join("princeton-nlp/SWE-bench_Verified/data/test-00000-of-00001.parquet"),
    )
    .unwrap();
    assert_eq!(verified.len(), 10);
    assert_eq!(verified[0].instance_id, "django__django-16255");
    // The hub's JSON-encoded test lists are read as lists and written back as strings.
    assert!(!verified[0].fail_to_pass.is_empty());
    let json = serde_json::to_value(&verified[0]).unwrap();
    assert!(json["FAIL_TO_PASS"].is_string());
    let rebench =
        load_file(&fixture("hub").join("nebius/SWE-rebench/data/test-00000-of-00001.parquet"))
            .unwrap();
    assert!(rebench[0].extra["meta"].is_object());
    assert!(rebench[0].image().is_some());
}

#[test]
fn a_file_that_is_not_parquet_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.parquet");
    std::fs::write(&path, "{\"instance_id\": \"a\"}\n").unwrap();
    let message = load_file(&path).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!("{}: cannot read it as Parquet", path.display())),
        "{message}"
    );
}

#[test]
fn a_row_that_is_not_a_task_names_its_row_and_field() {
    // Written by `datasets` with row 2's problem statement null.
    let path = fixture("broken/no-problem-statement.parquet");
    let message = load_file(&path).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "{} row 2 (instance_id \"sympy__sympy-13031\"): field \"problem_statement\"",
            path.display()
        )),
        "{message}"
    );
}
