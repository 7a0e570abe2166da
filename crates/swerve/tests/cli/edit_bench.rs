//! `swerve edit-bench` end to end: instances mined from a git repository the test builds,
//! instructions written by a served model, and runs of an editor served on loopback HTTP
//! answering with canned SEARCH/REPLACE replies, with and without the matching aids.

use crate::common;

use std::path::Path;

use common::{Request, failed, json_lines, sh, start_answering, stderr, succeeded, swerve};
use serde_json::Value;

const APP: &str = "BASE = \"http://old.example/api\"  # production\n\n\ndef fetch(path):\n    retries = 1\n    return BASE + path\n";
const UTIL: &str = "function greet() {\n  return \"hi\";\n}\n";

fn commit(repo: &Path, file: &str, text: &str, message: &str) {
    std::fs::write(repo.join(file), text).unwrap();
    sh(
        repo,
        &format!("git add -A && git -c user.name=t -c user.email=t@t commit -q -m '{message}'"),
    );
}

/// A repository with three commits that qualify (one file each) after the initial one.
fn repository(root: &Path) -> std::path::PathBuf {
    let repo = root.join("client");
    std::fs::create_dir_all(&repo).unwrap();
    sh(&repo, "git init -q -b main");
    std::fs::write(repo.join("util.js"), UTIL).unwrap();
    commit(&repo, "app.py", APP, "Initial import");
    let app = APP.replace("old.example", "new.example");
    commit(&repo, "app.py", &app, "Use the new API host");
    commit(
        &repo,
        "app.py",
        &app.replace("retries = 1", "retries = 3"),
        "Retry three times",
    );
    commit(
        &repo,
        "util.js",
        &UTIL.replace("\"hi\"", "\"HI!\""),
        "Greet loudly",
    );
    repo
}

fn block(search: &str, replace: &str) -> String {
    format!("<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
}

/// The canned answers: writer requests get `Please: {subject}`; editor requests an answer
/// picked by their instruction.
fn answer(request: &Request) -> String {
    let user = request.body["messages"][1]["content"]
        .as_str()
        .unwrap_or("");
    if let Some((_, message)) = user.split_once("Commit message:\n") {
        let subject = message.lines().next().unwrap_or("");
        return format!("<think>What would a developer say?</think>Please: {subject}");
    }
    if user.contains("Instruction: Please: Use the new API host") {
        // Changes the comment, not the URL: SWE-Edit's normalization cuts both lines at
        // `//`, so it calls this a match; the string-preserving one does not.
        return block(
            "BASE = \"http://old.example/api\"  # production",
            "BASE = \"http://old.example/api\"  # staging",
        );
    }
    if user.contains("Instruction: Please: Retry three times") {
        // Two-space indentation where the file has four: only the fallback applies it.
        return block(
            "def fetch(path):\n  retries = 1",
            "def fetch(path):\n  retries = 3",
        );
    }
    if user.contains("Instruction: Please: Greet loudly") {
        return block("", "function greet() {\n  return \"HI!\";\n}\n");
    }
    format!("no canned answer for: {user}")
}

/// Runs `swerve edit-bench ARGS` in `dir`, which must succeed; its standard output.
fn edit_bench(dir: &Path, args: &[&str]) -> String {
    let args: Vec<&str> = ["edit-bench"].iter().chain(args).copied().collect();
    succeeded(&swerve(dir, &args))
}

/// `edit-bench run` of `data` into `out` with the editor served at `url` and `extra`
/// options; what it printed and its summary.
fn run(dir: &Path, data: &str, out: &Path, url: &str, extra: &[&str]) -> (String, Value) {
    let out_arg = out.to_string_lossy();
    let mut args = vec![
        "run",
        "--data",
        data,
        "--out",
        &out_arg,
        "--editor",
        "editor-model",
        "--base-url",
        url,
    ];
    args.extend_from_slice(extra);
    let printed = edit_bench(dir, &args);
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    (printed, serde_json::from_str(&summary).unwrap())
}

fn rate(summary: &Value, key: &str) -> (u64, u64) {
    (
        summary[key]["count"].as_u64().unwrap(),
        summary[key]["of"].as_u64().unwrap(),
    )
}

#[test]
fn build_then_run_with_a_served_editor() {
    let dir = tempfile::tempdir().unwrap();
    repository(dir.path());
    let (url, received) = start_answering(answer);
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();

    // Instructions from commit messages.
    let repo = path("client");
    edit_bench(
        dir.path(),
        &["build", "--repo", &repo, "--out", &path("plain.jsonl")],
    );
    let plain = json_lines(&dir.path().join("plain.jsonl"));
    let instructions: Vec<&str> = plain
        .iter()
        .map(|i| i["instruction"].as_str().unwrap())
        .collect();
    assert_eq!(
        instructions,
        ["Greet loudly", "Retry three times", "Use the new API host"]
    );

    // Instructions written by the served writer.
    let data = path("data.jsonl");
    let writer = ["--writer", "writer-model", "--writer-base-url", &url];
    let build = ["build", "--repo", &repo, "--out", &data, "--ext", "py,.JS"];
    edit_bench(dir.path(), &[&build[..], &writer[..]].concat());
    let instances = json_lines(Path::new(&data));
    assert_eq!(instances.len(), 3);
    assert_eq!(instances[0]["instruction"], "Please: Greet loudly");
    assert_eq!(instances[0]["metadata"]["commit_message"], "Greet loudly");
    assert_eq!(instances[0]["metadata"]["instruction_source"], "writer");
    assert_eq!(instances[0]["path"], "util.js");
    assert_eq!(instances[0]["original"], UTIL);
    let requests = received.lock().unwrap().len();
    assert_eq!(requests, 3, "one writer call per instance");
    assert_eq!(received.lock().unwrap()[0].body["model"], "writer-model");

    // The paper's matching: the two-space SEARCH fails.
    let out = dir.path().join("run");
    let (printed, summary) = run(dir.path(), &data, &out, &url, &["--concurrency", "2"]);
    assert!(printed.contains("3 instances in "), "{printed}");
    assert_eq!(summary["instances"], 3);
    assert_eq!(rate(&summary, "format_success"), (3, 3));
    assert_eq!(rate(&summary, "match_failures"), (1, 3));
    assert_eq!(rate(&summary, "applied"), (2, 3));
    assert_eq!(rate(&summary, "exact_match"), (1, 3));
    assert_eq!(rate(&summary, "normalized_match"), (2, 3));
    assert_eq!(rate(&summary, "normalized_match_strings"), (1, 3));
    assert_eq!(rate(&summary, "whole_file_rewrite"), (1, 3));
    assert_eq!(rate(&summary, "fallback_used"), (0, 3));
    assert_eq!(summary["judge_equivalent"], Value::Null);
    assert_eq!(summary["editor_usage"]["prompt_tokens"], 300);
    let results = json_lines(&out.join("results.jsonl"));
    let statuses: Vec<&str> = results
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["applied", "match_failure", "applied"]);
    assert_eq!(
        results[1]["message"],
        "ERROR: Could not find the search block in the file."
    );
    assert_eq!(results[0]["mode"], "rewrite");
    assert_eq!(results[2]["normalized_match"], true);
    assert_eq!(results[2]["normalized_match_strings"], false);
    let editor_requests: Vec<Request> = received.lock().unwrap()[3..].to_vec();
    assert_eq!(editor_requests.len(), 3);
    assert!(
        editor_requests
            .iter()
            .all(|r| r.body["model"] == "editor-model")
    );

    // With the fallback and the "did you mean" note, the SEARCH applies and says so.
    let aided = dir.path().join("aided");
    let flags = ["--whitespace-fallback", "--did-you-mean"];
    let (_, summary) = run(dir.path(), &data, &aided, &url, &flags);
    assert_eq!(rate(&summary, "match_failures"), (0, 3));
    assert_eq!(rate(&summary, "exact_match"), (2, 3));
    assert_eq!(rate(&summary, "normalized_match"), (3, 3));
    assert_eq!(rate(&summary, "normalized_match_strings"), (2, 3));
    assert_eq!(rate(&summary, "fallback_used"), (1, 3));
    let results = json_lines(&aided.join("results.jsonl"));
    assert_eq!(results[1]["fallbacks"], 1);
    assert!(
        results[1]["message"].as_str().unwrap().ends_with(
            "Note: SEARCH block 1 matched no text exactly; it was applied to lines 4-5, which equal it when leading and trailing whitespace is ignored."
        ),
        "{}",
        results[1]["message"]
    );
}

#[test]
fn errors_name_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.jsonl");
    std::fs::write(
        &data,
        "{\"original\": \"a\", \"target\": 2, \"instruction\": \"i\"}\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "edit-bench",
            "run",
            "--data",
            data.to_str().unwrap(),
            "--out",
            "unused",
        ];
        args.extend_from_slice(extra);
        let output = swerve(dir.path(), &args);
        (failed(&output), output)
    };
    let (error, output) = run(&[]);
    assert!(
        error.contains("edit-bench run needs an editor model: --editor NAME --base-url URL"),
        "{error}"
    );
    swerve_testing::assert_cmd_snapshot!("error_run_needs_an_editor", output);
    let (error, output) = run(&["--editor", "m"]);
    assert!(
        error.contains("edit.editor.name is m but edit.editor.base_url is not set"),
        "{error}"
    );
    swerve_testing::assert_cmd_snapshot!("error_editor_without_base_url", output);
    let (error, output) = run(&["--editor", "m", "--base-url", "http://127.0.0.1:9/v1"]);
    assert!(
        error.contains("data.jsonl line 1: field \"target\": expected a string, found a number"),
        "{error}"
    );
    swerve_testing::assert_cmd_snapshot!("error_data_field_of_wrong_type", output);
    let output = swerve(
        dir.path(),
        &[
            "edit-bench",
            "build",
            "--repo",
            dir.path().to_str().unwrap(),
            "--out",
            "x.jsonl",
        ],
    );
    let error = stderr(&output);
    assert!(
        !output.status.success() && error.contains("git log --no-merges"),
        "{error}"
    );
}

/// SWE-Edit's editor RL hand-off (§3.2) and its fixed-format ablation (Table 5), end to
/// end: the RL prompts exported per instance, the loopback editor's replies to them scored
/// by the normalized-match reward, and `edit-bench run` under `--preset edit-fixed`, whose
/// editor may not rewrite whole files.
#[test]
fn rl_export_reward_and_the_fixed_format() {
    let dir = tempfile::tempdir().unwrap();
    repository(dir.path());
    let (url, received) = start_answering(answer);
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let data = path("data.jsonl");
    let repo = path("client");
    edit_bench(
        dir.path(),
        &[
            "build",
            "--repo",
            &repo,
            "--out",
            &data,
            "--writer",
            "writer-model",
            "--writer-base-url",
            &url,
        ],
    );

    // The RL prompts: the editor's system and user messages, the target as the label.
    let rl = path("rl.jsonl");
    let printed = edit_bench(
        dir.path(),
        &[
            "export",
            "--instances",
            &data,
            "--format",
            "rl",
            "--out",
            &rl,
        ],
    );
    assert!(
        printed.contains("3 RL prompts (adaptive format)"),
        "{printed}"
    );
    let rows = json_lines(Path::new(&rl));
    let instances = json_lines(Path::new(&data));
    assert_eq!(rows.len(), 3);
    for (row, instance) in rows.iter().zip(&instances) {
        assert_eq!(row["label"], instance["target"]);
        assert_eq!(row["reward"]["kind"], "normalized_match");
        let system = row["prompt"][0]["content"].as_str().unwrap();
        assert!(system.contains("To rewrite the whole file"), "{system}");
        let user = row["prompt"][1]["content"].as_str().unwrap();
        assert!(
            user.ends_with("Answer with the SEARCH/REPLACE blocks that carry out the instruction.")
        );
    }
    // The editor answers each prompt as it would in training.
    let responses = path("responses.jsonl");
    let lines: Vec<String> = rows
        .iter()
        .map(|row| {
            let request = Request {
                method: "POST".into(),
                path: "/v1/chat/completions".into(),
                headers: Vec::new(),
                body: serde_json::json!({"messages": row["prompt"]}),
            };
            serde_json::json!({"instance_id": row["instance_id"], "response": answer(&request)})
                .to_string()
        })
        .collect();
    std::fs::write(&responses, lines.join("\n") + "\n").unwrap();
    let reward = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["reward", "--instances", &data, "--responses", &responses];
        args.extend_from_slice(extra);
        edit_bench(dir.path(), &args)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    // Greet loudly (a rewrite equal to the target), Retry three times (a SEARCH that does
    // not match), Use the new API host (SWE-Edit's normalization cuts the comment-like
    // `//` of the URL, so it matches).
    let rewards = reward(&[]);
    let values: Vec<f64> = rewards
        .iter()
        .map(|r| r["reward"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [1.0, 0.0, 1.0]);
    assert_eq!(rewards[1]["status"], "match_failure");
    assert_eq!(rewards[0]["mode"], "rewrite");
    let fixed = reward(&["--edit-format", "find-replace"]);
    assert_eq!(fixed[0]["reward"], 0.0);
    assert_eq!(fixed[0]["status"], "format_error");

    // The ablation preset: the editor's prompt forbids rewrites, and the rewrite it
    // writes anyway is a format error.
    let out = dir.path().join("fixed");
    let before = received.lock().unwrap().len();
    let (_, summary) = run(dir.path(), &data, &out, &url, &["--preset", "edit-fixed"]);
    assert_eq!(rate(&summary, "format_success"), (2, 3));
    assert_eq!(rate(&summary, "whole_file_rewrite"), (0, 2));
    let results = json_lines(&out.join("results.jsonl"));
    assert_eq!(results[0]["status"], "format_error");
    assert!(
        results[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("ERROR: Full rewrite mode (empty SEARCH) is not allowed")
    );
    let requests = received.lock().unwrap()[before..].to_vec();
    assert_eq!(requests.len(), 3);
    for request in requests {
        let system = request.body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("SEARCH is never empty"), "{system}");
    }
    // An unknown response id names the file, line and id.
    std::fs::write(
        &responses,
        "{\"instance_id\": \"nope\", \"response\": \"\"}\n",
    )
    .unwrap();
    let error = failed(&swerve(
        dir.path(),
        &[
            "edit-bench",
            "reward",
            "--instances",
            &data,
            "--responses",
            &responses,
        ],
    ));
    assert!(
        error.contains("responses.jsonl:1: instance_id \"nope\" is not in"),
        "{error}"
    );
}

/// A merge of `branch` into main as GitHub writes it.
fn merge_pr(repo: &Path, branch: &str, number: u32, title: &str) {
    sh(
        repo,
        &format!(
            "git -c user.name=t -c user.email=t@t merge -q --no-ff {branch} -m 'Merge pull request #{number} from dev/{branch}' -m '{title}'"
        ),
    );
}

/// PR-Edit as SWE-Edit builds it (§4.3.1), end to end: two repositories mined by pull
/// request (merge commits and a `refs/pull/N/head` ref), decontaminated against a task file
/// (one repository is a task's, one file holds a line of a task's gold patch), and split
/// by PR so that a PR's files share a split.
#[test]
fn build_by_pr_over_repositories_decontaminated_and_split() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let webapp = dir.path().join("webapp");
    std::fs::create_dir_all(&webapp).unwrap();
    sh(&webapp, "git init -q -b main");
    std::fs::write(webapp.join("util.js"), UTIL).unwrap();
    commit(&webapp, "app.py", APP, "Initial import");
    let checkout =
        |repo: &Path, branch: &str| sh(repo, &format!("git checkout -q -B {branch} main"));
    checkout(&webapp, "host");
    commit(
        &webapp,
        "app.py",
        &APP.replace("old.example", "new.example"),
        "host",
    );
    sh(&webapp, "git checkout -q main");
    merge_pr(&webapp, "host", 12, "Use the new API host");
    checkout(&webapp, "two");
    let guarded = APP.replace(
        "    retries = 1\n",
        "    retries = 3\n    if retries < 1:\n        raise ValueError(\"retries must be positive\")\n",
    );
    std::fs::write(webapp.join("util.js"), UTIL.replace("\"hi\"", "\"HI!\"")).unwrap();
    commit(&webapp, "app.py", &guarded, "retries and greeting");
    sh(&webapp, "git checkout -q main");
    merge_pr(&webapp, "two", 15, "Retry three times and greet loudly");
    // A direct commit on main is no PR.
    commit(
        &webapp,
        "util.js",
        &UTIL.replace("hi", "hello"),
        "Direct change",
    );
    // An open PR, fetched as a ref.
    checkout(&webapp, "open");
    commit(
        &webapp,
        "util.js",
        &UTIL.replace("greet", "welcome"),
        "Rename greet to welcome",
    );
    sh(
        &webapp,
        "git update-ref refs/pull/21/head open && git checkout -q main",
    );

    let astropy = dir.path().join("astropy");
    std::fs::create_dir_all(&astropy).unwrap();
    sh(&astropy, "git init -q -b main");
    commit(&astropy, "core.py", "x = 1\n", "Initial import");
    checkout(&astropy, "fix");
    commit(&astropy, "core.py", "x = 2\n", "fix");
    sh(&astropy, "git checkout -q main");
    merge_pr(&astropy, "fix", 3, "Fix x");

    let tasks = path("tasks.jsonl");
    let task = serde_json::json!({
        "instance_id": "astropy__astropy-12907",
        "repo": "astropy/astropy",
        "base_commit": "abc",
        "problem_statement": "x",
        "patch": "--- a/a.py\n+++ b/a.py\n+        raise ValueError(\"retries must be positive\")\n",
    });
    std::fs::write(&tasks, format!("{task}\n")).unwrap();
    let out = path("pr-edit.jsonl");
    let output = swerve(
        dir.path(),
        &[
            "edit-bench",
            "build",
            "--repo",
            &path("webapp"),
            "--repo",
            &path("astropy"),
            "--by",
            "pr",
            "--decontaminate",
            &tasks,
            "--split",
            "train=2,test=1",
            "--out",
            &out,
        ],
    );
    let printed = stderr(&output);
    assert!(output.status.success(), "{printed}");
    assert!(
        printed.contains("decontamination: 2 instances dropped"),
        "{printed}"
    );
    let instances = json_lines(Path::new(&out));
    let ids: Vec<&str> = instances
        .iter()
        .map(|i| i["instance_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["webapp#15:util.js", "webapp#12:app.py", "webapp#21:util.js"]
    );
    let by_id = |id: &str| instances.iter().find(|i| i["instance_id"] == id).unwrap();
    assert_eq!(
        by_id("webapp#12:app.py")["instruction"],
        "Use the new API host"
    );
    assert_eq!(by_id("webapp#12:app.py")["metadata"]["pr_source"], "merge");
    assert_eq!(by_id("webapp#15:util.js")["metadata"]["files_in_pr"], 2);
    assert_eq!(by_id("webapp#21:util.js")["metadata"]["pr_source"], "ref");
    assert_eq!(
        by_id("webapp#21:util.js")["instruction"],
        "Rename greet to welcome"
    );
    assert!(
        by_id("webapp#21:util.js")["target"]
            .as_str()
            .unwrap()
            .contains("welcome")
    );
    // Three PRs cut 2:1.
    let splits: Vec<&str> = instances
        .iter()
        .map(|i| i["metadata"]["split"].as_str().unwrap())
        .collect();
    assert_eq!(
        splits.iter().filter(|s| **s == "train").count(),
        2,
        "{splits:?}"
    );
    assert_eq!(
        splits.iter().filter(|s| **s == "test").count(),
        1,
        "{splits:?}"
    );
    let dropped = json_lines(&dir.path().join("pr-edit.dropped.jsonl"));
    let reasons: Vec<String> = dropped
        .iter()
        .map(|row| {
            format!(
                "{}: {}",
                row["instance_id"].as_str().unwrap(),
                row["reason"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        reasons.iter().any(|r| r
            .starts_with("webapp#15:app.py: exact code overlap with task astropy__astropy-12907")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("astropy#3:core.py: repository astropy")),
        "{reasons:?}"
    );

    // The RL export of one split.
    let rl = path("test-rl.jsonl");
    edit_bench(
        dir.path(),
        &[
            "export",
            "--instances",
            &out,
            "--split",
            "test",
            "--out",
            &rl,
        ],
    );
    assert_eq!(json_lines(Path::new(&rl)).len(), 1);
}
