//! SWE-Edit in `swerve run`, end to end: the four ablation presets on the bundled tasks,
//! the main agent and both subagents answered on loopback, with the run summary's edit
//! metrics checked against counts worked out by hand from the demonstrations, the patches
//! against the demonstrations', and the subagents' records in the trajectories.

use crate::common;

use std::path::{Path, PathBuf};

use common::edit::{FAILING_TASK, Preset, preset_calls, start};
use common::{RunArgs, json_lines, stderr, stdout};
use serde_json::Value;

/// Per call: main model 100 prompt tokens at $10/M and 20 completion tokens at $50/M; the
/// viewer at $1/M and $5/M; the editor at $2/M and $10/M (the loopback server reports 100
/// and 20 tokens for every call).
const PRICES: &str = "[models.\"main-model\"]\ninput = 10.0\noutput = 50.0\n\n[models.\"viewer-model\"]\ninput = 1.0\noutput = 5.0\n\n[models.\"editor-model\"]\ninput = 2.0\noutput = 10.0\n";
const MAIN_CALL: f64 = 0.002;
const VIEWER_CALL: f64 = 0.0002;
const EDITOR_CALL: f64 = 0.0004;

/// Runs `preset` on the bundled tasks (`extra`: more arguments, such as task ids); returns
/// the run directory, its summary, stdout and the requests the server received.
fn run_preset(cache: &Path, preset: Preset, extra: &[&str]) -> Run {
    let (url, received) = start(preset);
    let out = cache.join(format!("{}{}", preset.name(), extra.join("-")));
    let prices = cache.join("prices.toml");
    std::fs::write(&prices, PRICES).unwrap();
    let output = RunArgs::new(&out)
        .args(["--preset", preset.name()])
        .served("main-model", &url)
        .set(&format!("run.prices={}", prices.display()))
        .set("edit.viewer.name=viewer-model")
        .set(&format!("edit.viewer.base_url={url}"))
        .set("edit.editor.name=editor-model")
        .set(&format!("edit.editor.base_url={url}"))
        .args(extra)
        .run(cache);
    assert!(
        output.status.success(),
        "{}: {}",
        preset.name(),
        stderr(&output)
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let received = received.lock().unwrap().clone();
    Run {
        summary: serde_json::from_str(&summary).unwrap(),
        stdout: stdout(&output),
        main_requests: received
            .into_iter()
            .map(|request| request.body)
            .filter(|body| body["model"] == "main-model")
            .collect(),
        out,
    }
}

struct Run {
    out: PathBuf,
    summary: Value,
    stdout: String,
    /// The bodies of the main agent's requests.
    main_requests: Vec<Value>,
}

/// The schemas the main agent was offered in its first request: its `tools` (native) or
/// the `<tools>` lines of its system prompt (Hermes).
fn offered_schemas(run: &Run) -> Vec<Value> {
    let first = &run.main_requests[0];
    if let Some(tools) = first["tools"].as_array() {
        return tools.clone();
    }
    let system = first["messages"][0]["content"].as_str().unwrap();
    let (_, tools) = system.split_once("<tools>\n").unwrap();
    let (tools, _) = tools.split_once("\n</tools>").unwrap();
    tools
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The names of the tools the main agent was offered: in its schemas, or the functions
/// its first system prompt documents in the XML format.
fn offered_tools(run: &Run) -> Vec<String> {
    let first = &run.main_requests[0];
    let system = first["messages"][0]["content"].as_str().unwrap();
    if first["tools"].is_array() || system.contains("<tools>") {
        return offered_schemas(run)
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
            .collect();
    }
    system
        .lines()
        .filter_map(|line| line.strip_prefix("---- BEGIN FUNCTION #"))
        .map(|line| {
            line.split(": ")
                .nth(1)
                .unwrap()
                .trim_end_matches(" ----")
                .to_owned()
        })
        .collect()
}

fn close(value: &Value, expected: f64) -> bool {
    (value.as_f64().unwrap() - expected).abs() < 1e-9
}

#[test]
fn the_four_presets_run_every_task_and_report_the_hand_counted_metrics() {
    let cache = tempfile::tempdir().unwrap();
    let mut patches: Vec<Vec<Value>> = Vec::new();
    for preset in Preset::ALL {
        let run = run_preset(cache.path(), preset, &[]);
        let (summary, stdout) = (&run.summary, &run.stdout);
        let name = preset.name();
        let expected_tools: &[&str] = match preset {
            Preset::Baseline => &["file_editor", "search", "execute_bash", "finish"],
            Preset::Viewer | Preset::Editor => &[
                "file_editor",
                "search",
                "execute_bash",
                "finish",
                "llm_editor",
            ],
            Preset::Full => &["search", "execute_bash", "finish", "llm_editor"],
        };
        assert_eq!(offered_tools(&run), expected_tools, "{name}");
        assert_eq!(summary["submitted"], 8, "{name}: {summary}");
        let edit = &summary["edit"];
        let totals = &edit["totals"];
        // The demonstrations make 17 str_replace, 1 insert and 1 undo_edit (an edit through
        // the editor, an undo through file_editor); calc-1 adds a format error and a match
        // failure.
        let edits = if preset.edits_through_editor() {
            21
        } else {
            20
        };
        assert_eq!(
            totals["edits"],
            serde_json::json!({
                "calls": edits, "succeeded": edits - 2, "format_errors": 1,
                "match_failures": 1, "other_failures": 0,
            }),
            "{name}"
        );
        // 19 views, 3 of them of directories (durations, pager, wrapline).
        assert_eq!(totals["view_calls"], 19, "{name}");
        assert!(
            close(&edit["view_calls_per_trajectory"], 19.0 / 8.0),
            "{name}"
        );
        assert!(
            close(&edit["edit_calls_per_trajectory"], edits as f64 / 8.0),
            "{name}"
        );
        assert!(
            close(
                &edit["edit_success_rate"],
                (edits - 2) as f64 / edits as f64
            ),
            "{name}"
        );
        assert!(
            close(&edit["format_error_rate"], 1.0 / edits as f64),
            "{name}"
        );
        // 80 demonstration calls and the 2 failing edits, one main-model call each.
        let main_calls = 82;
        assert_eq!(totals["main"]["calls"], main_calls, "{name}");
        assert_eq!(
            totals["main"]["usage"]["prompt_tokens"],
            100 * main_calls,
            "{name}"
        );
        assert!(close(
            &totals["main"]["cost"],
            MAIN_CALL * main_calls as f64
        ));
        // The viewer answers [[1, 2], [10, 11]] for each of the 16 file views: 4 lines,
        // but 3 of keys.py's 8 ([10, 11] is clamped to [8, 8]); the files had 763 lines
        // when viewed.
        let (views, viewer_calls) = match preset.views_through_viewer() {
            true => (
                serde_json::json!({"views": 16, "lines_shown": 63, "file_lines": 763}),
                16,
            ),
            false => (
                serde_json::json!({"views": 0, "lines_shown": 0, "file_lines": 0}),
                0,
            ),
        };
        assert_eq!(totals["viewer_share"], views, "{name}");
        assert_eq!(totals["viewer"]["calls"], viewer_calls, "{name}");
        let editor_calls = if preset.edits_through_editor() { 21 } else { 0 };
        assert_eq!(totals["editor"]["calls"], editor_calls, "{name}");
        assert_eq!(
            totals["editor"]["usage"]["completion_tokens"],
            20 * editor_calls,
            "{name}"
        );
        let subagent_cost = VIEWER_CALL * viewer_calls as f64 + EDITOR_CALL * editor_calls as f64;
        assert!(close(&edit["subagents"]["cost"], subagent_cost), "{name}");
        // The run's totals hold the subagents.
        assert!(
            close(
                &summary["cost"],
                MAIN_CALL * main_calls as f64 + subagent_cost
            ),
            "{name}: {}",
            summary["cost"]
        );
        assert_eq!(
            summary["usage"]["prompt_tokens"],
            100 * (main_calls + viewer_calls + editor_calls),
            "{name}"
        );
        assert!(
            stdout.contains(&format!(
                "edits {edits} ({:.1}% succeeded; 1 format errors, 1 match failures, 0 other)",
                (edits - 2) as f64 * 100.0 / edits as f64
            )),
            "{name}: {stdout}"
        );
        assert_eq!(
            stdout.contains("subagents: "),
            viewer_calls + editor_calls > 0,
            "{name}: {stdout}"
        );
        let mut predicted = json_lines(&run.out.join("preds.jsonl"));
        predicted.sort_by_key(|p| p["instance_id"].as_str().unwrap().to_owned());
        patches.push(predicted.iter().map(|p| p["model_patch"].clone()).collect());
    }
    assert!(
        patches[0]
            .iter()
            .all(|patch| !patch.as_str().unwrap().is_empty())
    );
    for (preset, patches_of_preset) in Preset::ALL.iter().zip(&patches).skip(1) {
        assert_eq!(
            patches_of_preset,
            &patches[0],
            "{}: the subagents' edits make the demonstrations' patches",
            preset.name()
        );
    }
}

#[test]
fn each_step_records_its_subagents_with_their_usage_and_the_outcome_its_metrics() {
    let cache = tempfile::tempdir().unwrap();
    let run = run_preset(cache.path(), Preset::Full, &[FAILING_TASK]);
    let lines = json_lines(
        &run.out
            .join(format!("trajectories/{FAILING_TASK}__0.jsonl")),
    );
    let steps: Vec<&Value> = lines
        .iter()
        .filter(|line| line.get("index").is_some())
        .collect();
    assert_eq!(steps.len(), preset_calls(Preset::Full, FAILING_TASK).len());
    let statuses: Vec<(String, String)> = steps
        .iter()
        .flat_map(|step| step["subagents"].as_array().cloned().unwrap_or_default())
        .map(|subagent| {
            assert_eq!(subagent["calls"].as_array().unwrap().len(), 1);
            let call = &subagent["calls"][0];
            assert_eq!(call["usage"]["prompt_tokens"], 100);
            assert_eq!(call["usage"]["completion_tokens"], 20);
            let expected = match subagent["agent"].as_str().unwrap() {
                "viewer" => VIEWER_CALL,
                _ => EDITOR_CALL,
            };
            assert!(close(&call["cost"], expected), "{subagent}");
            (
                format!(
                    "{}/{}",
                    subagent["agent"].as_str().unwrap(),
                    subagent["model"].as_str().unwrap()
                ),
                subagent["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // calc-1: view parser.py, then two failing edits, then its two real edits.
    let expected: Vec<(String, String)> = [
        ("viewer/viewer-model", "shown"),
        ("editor/editor-model", "format_error"),
        ("editor/editor-model", "match_failure"),
        ("editor/editor-model", "applied"),
        ("editor/editor-model", "applied"),
    ]
    .iter()
    .map(|(agent, status)| (agent.to_string(), status.to_string()))
    .collect();
    assert_eq!(statuses, expected);
    for step in &steps {
        // The step's own usage stays the main model's.
        assert_eq!(step["usage"]["prompt_tokens"], 100);
    }
    let outcome = lines.last().unwrap();
    assert_eq!(outcome["exit_reason"], "submitted");
    let metrics = &outcome["extra"]["edit"];
    assert_eq!(metrics["edits"]["calls"], 4, "{outcome}");
    assert_eq!(metrics["edits"]["succeeded"], 2);
    assert_eq!(metrics["viewer"]["calls"], 1);
    assert_eq!(metrics["editor"]["calls"], 4);
    assert_eq!(outcome["usage"]["prompt_tokens"], 100 * (steps.len() + 5));
    assert!(close(
        &outcome["cost"],
        MAIN_CALL * steps.len() as f64 + VIEWER_CALL + 4.0 * EDITOR_CALL
    ));
}

#[test]
fn llm_editor_is_offered_in_every_tool_call_format() {
    let cache = tempfile::tempdir().unwrap();
    for format in ["native", "hermes"] {
        let run = run_preset(
            cache.path(),
            Preset::Editor,
            &["--format", format, "--max-steps", "1", FAILING_TASK],
        );
        assert_eq!(
            offered_tools(&run),
            [
                "file_editor",
                "search",
                "execute_bash",
                "finish",
                "llm_editor"
            ],
            "{format}"
        );
        // The commands the schema of tool `name` offers.
        let commands = |name: &str| {
            let schemas = offered_schemas(&run);
            let tool = schemas
                .iter()
                .find(|tool| tool["function"]["name"] == name)
                .unwrap();
            tool["function"]["parameters"]["properties"]["command"]["enum"].clone()
        };
        assert_eq!(
            commands("llm_editor"),
            serde_json::json!(["create", "edit"]),
            "{format}"
        );
        assert_eq!(
            commands("file_editor"),
            serde_json::json!(["view"]),
            "{format}"
        );
    }
}

#[test]
fn the_cost_limit_counts_the_subagents() {
    // calc-1 under edit-full: 10 main calls ($0.002 each); by the 9th, 1 viewer and 4
    // editor calls have added $0.0018. The main model alone ($0.018) stays under $0.0195,
    // with the subagents the run ($0.0198) is over it before the 10th call.
    let cache = tempfile::tempdir().unwrap();
    let run = run_preset(
        cache.path(),
        Preset::Full,
        &["--set", "agent.max_cost=0.0195", FAILING_TASK],
    );
    assert_eq!(preset_calls(Preset::Full, FAILING_TASK).len(), 10);
    assert_eq!(
        run.summary["exit_reasons"]["cost_limit"], 1,
        "{}",
        run.summary
    );
    assert_eq!(run.summary["steps"], 9);
    assert!(close(
        &run.summary["cost"],
        9.0 * MAIN_CALL + VIEWER_CALL + 4.0 * EDITOR_CALL
    ));
}
