//! `swerve edit-bench viewers` end to end: BM25, an embedding retriever and an LLM viewer
//! compared on an instance file the test writes (a short file, a long one, an unchanged
//! one), with the viewer and a bag-of-words embeddings endpoint served on loopback HTTP;
//! every figure is worked out by hand. And the errors that name what to give.

use crate::common;

use std::path::Path;

use common::embeddings::bag_of_words;
use common::{Request, completion, failed, start_answering_json, succeeded, swerve};
use serde_json::{Value, json};

/// The embeddings endpoint's vocabulary.
const VOCABULARY: &[&str] = &["fetch", "attempts", "retry", "cache", "ttl", "value"];

/// Lines `value_{i} = compute({i})` for `numbers`.
fn filler(numbers: std::ops::RangeInclusive<usize>) -> Vec<String> {
    numbers
        .map(|i| format!("value_{i} = compute({i})"))
        .collect()
}

/// 40 lines: filler, then `fetch` in lines 31-40 with `attempts = 1` on line 32.
fn short_file() -> String {
    let mut lines = filler(1..=30);
    lines.extend(
        [
            "def fetch(url):",
            "    attempts = 1",
            "    for attempt in range(attempts):",
            "        response = get(url)",
            "        if response.ok:",
            "            return response",
            "    raise FetchError(url)",
            "",
            "def close():",
            "    pass",
        ]
        .map(str::to_owned),
    );
    lines.join("\n") + "\n"
}

/// 330 lines of filler but lines 199-200, a cache setting.
fn long_file() -> String {
    let mut lines = filler(1..=330);
    lines[198] = "# cache settings".into();
    lines[199] = "CACHE_TTL = 60".into();
    lines.join("\n") + "\n"
}

fn write_data(path: &Path) {
    let (short, long) = (short_file(), long_file());
    let instances = [
        json!({"instance_id": "short", "path": "net.py", "original": short,
               "target": short.replace("attempts = 1", "attempts = 3"),
               "instruction": "Make fetch retry three attempts"}),
        json!({"instance_id": "same", "path": "same.py", "original": "x = 1\n",
               "target": "x = 1\n", "instruction": "Leave it"}),
        json!({"instance_id": "long", "path": "settings.py", "original": long,
               "target": long.replace("CACHE_TTL = 60", "CACHE_TTL = 600"),
               "instruction": "Raise the cache TTL to ten minutes"}),
    ];
    let lines: Vec<String> = instances.iter().map(Value::to_string).collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// The viewer names lines 31-33 of the short file and gives no ranges for the long one;
/// the embeddings endpoint answers bag-of-words vectors.
fn answer(request: &Request) -> Value {
    if request.path.ends_with("/embeddings") {
        return bag_of_words(request, VOCABULARY);
    }
    let user = request.body["messages"][1]["content"]
        .as_str()
        .unwrap_or("");
    let reply = match user.contains("def fetch(url):") {
        true => "The loop is here.\n[[31, 33]]",
        false => "I am not sure.",
    };
    completion(reply, false)
}

fn close(value: &Value, expected: f64) -> bool {
    value
        .as_f64()
        .is_some_and(|value| (value - expected).abs() < 1e-9)
}

#[test]
fn bm25_embeddings_and_the_llm_viewer_over_an_instance_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    write_data(&data);
    let (url, received) = start_answering_json(answer);
    let out = dir.path().join("viewers");
    let printed = succeeded(&swerve(
        dir.path(),
        &[
            "edit-bench",
            "viewers",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--top",
            "1",
            "--viewer",
            "viewer-model",
            "--viewer-base-url",
            &url,
            "--embedder",
            "embedder-model",
            "--embedder-base-url",
            &url,
            "--concurrency",
            "2",
        ],
    ));

    let records = common::json_lines(&out.join("viewers.jsonl"));
    let keys: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["instance_id"].as_str().unwrap(),
                r["method"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("short", "bm25"),
            ("short", "embedding"),
            ("short", "llm"),
            ("long", "bm25"),
            ("long", "embedding"),
            ("long", "llm"),
        ]
    );
    let check = |record: &Value, returned: Value, recall: f64, precision: f64, reduction: f64| {
        assert_eq!(record["returned"], returned, "{record}");
        let f1 = match precision + recall {
            0.0 => 0.0,
            sum => 2.0 * precision * recall / sum,
        };
        for (field, expected) in [
            ("recall", recall),
            ("precision", precision),
            ("f1", f1),
            ("context_reduction", reduction),
        ] {
            assert!(close(&record[field], expected), "{field}: {record}");
        }
    };
    // short: line 32 changed; the only chunk with `fetch` and `attempts` is lines 31-40
    // (BM25, and a cosine of 3 / (√5 · √3) against the filler's 0).
    assert_eq!(records[0]["relevant"], json!([[32, 32]]));
    assert_eq!(records[0]["lines"], 40);
    check(&records[0], json!([[31, 40]]), 1.0, 0.1, 0.75);
    check(&records[1], json!([[31, 40]]), 1.0, 0.1, 0.75);
    let cosine = records[1]["chunks"][0]["score"].as_f64().unwrap();
    assert!((cosine - 3.0 / (5.0f64.sqrt() * 3.0f64.sqrt())).abs() < 1e-6);
    assert_eq!(
        records[1]["usage"]["prompt_tokens"], 30,
        "query and 2 chunks"
    );
    assert_eq!(records[1]["model"], "embedder-model");
    check(
        &records[2],
        json!([[31, 33]]),
        1.0,
        1.0 / 3.0,
        1.0 - 3.0 / 40.0,
    );
    assert_eq!(records[2]["status"], "shown");
    assert_eq!(records[2]["usage"]["prompt_tokens"], 100);
    // long: line 200 changed; the chunk of lines 181-210 holds `cache` and `ttl`.
    assert_eq!(records[3]["relevant"], json!([[200, 200]]));
    check(
        &records[3],
        json!([[181, 210]]),
        1.0,
        1.0 / 30.0,
        1.0 - 30.0 / 330.0,
    );
    check(
        &records[4],
        json!([[181, 210]]),
        1.0,
        1.0 / 30.0,
        1.0 - 30.0 / 330.0,
    );
    check(&records[5], json!([]), 0.0, 0.0, 1.0);
    assert_eq!(records[5]["status"], "parse_error");
    assert_eq!(records[5]["failed"], true);

    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("viewers-summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["instances"], 3);
    assert_eq!(summary["evaluated"], 2);
    assert_eq!(summary["skipped_no_changes"], 1);
    assert_eq!(summary["skipped_ids"], json!(["same"]));
    assert_eq!(summary["bm25"], json!({"k1": 1.2, "b": 0.75}));
    let bm25 = &summary["methods"]["bm25"];
    assert_eq!(bm25["failures"], 0);
    assert!(close(&bm25["all"]["precision"], (0.1 + 1.0 / 30.0) / 2.0));
    assert!(close(&bm25["all"]["micro_precision"], 2.0 / 40.0));
    assert_eq!(bm25["short_files"]["instances"], 1);
    assert_eq!(bm25["long_files"]["instances"], 1);
    assert!(close(&bm25["long_files"]["context_reduction"], 10.0 / 11.0));
    let llm = &summary["methods"]["llm"];
    assert_eq!(llm["failures"], 1);
    assert_eq!(llm["model"], "viewer-model");
    assert!(close(&llm["all"]["recall"], 0.5));
    assert!(close(&llm["short_files"]["recall"], 1.0));
    assert!(close(&llm["long_files"]["recall"], 0.0));
    assert_eq!(llm["usage"]["prompt_tokens"], 200);
    assert_eq!(
        summary["methods"]["embedding"]["usage"]["prompt_tokens"],
        30 + 120
    );

    let requests = received.lock().unwrap().clone();
    let embeddings: Vec<&Request> = requests
        .iter()
        .filter(|r| r.path == "/v1/embeddings")
        .collect();
    assert_eq!(embeddings.len(), 2, "one request per scored instance");
    for request in &embeddings {
        assert_eq!(request.body["model"], "embedder-model");
        let first = request.body["input"][0].as_str().unwrap();
        assert!(first.starts_with("Make fetch") || first.starts_with("Raise the cache"));
    }
    assert_eq!(requests.len(), 4, "two embedding and two viewer calls");

    assert!(
        printed.contains("2 of 3 instances scored (1 skipped"),
        "{printed}"
    );
    let row = printed
        .lines()
        .find(|line| line.starts_with("bm25") && line.contains(" all "))
        .unwrap_or_else(|| panic!("no bm25 row in {printed}"));
    assert!(row.contains("100.0%"), "{row}");
    assert!(
        printed.contains("llm (viewer-model): tokens 200 in, 40 out"),
        "{printed}"
    );
}

#[test]
fn errors_name_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    write_data(&data);
    let fails = |extra: &[&str]| {
        let mut args = vec![
            "edit-bench",
            "viewers",
            "--data",
            data.to_str().unwrap(),
            "--out",
            "unused",
        ];
        args.extend_from_slice(extra);
        let output = swerve(dir.path(), &args);
        failed(&output)
    };
    let text = fails(&["--methods", "bm25,embedding"]);
    assert!(
        text.contains("the embedding method needs an embedding model: --embedder NAME"),
        "{text}"
    );
    let text = fails(&["--methods", "llm"]);
    assert!(
        text.contains("the llm method needs a viewer model"),
        "{text}"
    );
    let text = fails(&["--methods", "grep"]);
    assert!(text.contains("unknown viewer method `grep`"), "{text}");
    let text = fails(&["--embedder", "e", "--methods", "embedding"]);
    assert!(
        text.contains("edit.embedder.name is e but edit.embedder.base_url is not set"),
        "{text}"
    );
    let text = fails(&["--top", "0"]);
    assert!(text.contains("--top must be at least 1"), "{text}");
    let text = fails(&["--bm25-b", "2"]);
    assert!(text.contains("--bm25-b must be between 0 and 1"), "{text}");
    std::fs::write(&data, "{\"original\": \"a\", \"target\": \"b\"}\n").unwrap();
    let text = fails(&[]);
    assert!(
        text.contains("data.jsonl line 1") && text.contains("instruction"),
        "{text}"
    );
}
