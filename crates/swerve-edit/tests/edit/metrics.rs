//! Edit metrics of a trajectory made of real calls: `llm_editor` with scripted subagent
//! models and the native `file_editor` over a temporary workspace, against counts worked out
//! by hand.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use swerve_core::ToolCall;
use swerve_core::trajectory::{Header, Step, Trajectory, Usage};
use swerve_edit::blocks::MatchOptions;
use swerve_edit::metrics::{EditCounts, EditMetrics, Spend, ViewerShare};
use swerve_edit::tool::{LLM_EDITOR, LlmEditor};
use swerve_llm::{ModelResponse, ScriptedModel};
use swerve_testing::HostShell;
use swerve_tools::{ToolConfig, Toolbox, WorkspaceFs};

/// A model answering `replies` in order, each call 100 prompt and 10 completion tokens
/// costing 0.001.
fn scripted(replies: &[&str]) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(replies.iter().map(|reply| {
        Ok(ModelResponse {
            usage: Usage {
                prompt_tokens: 100,
                completion_tokens: 10,
                ..Usage::default()
            },
            cost: 0.001,
            ..ModelResponse::text(*reply)
        })
    })))
}

/// `calls` calls of `prompt` prompt and `completion` completion tokens costing `cost` each.
fn spend(calls: usize, prompt: u64, completion: u64, cost: f64) -> Spend {
    Spend {
        calls,
        usage: Usage {
            prompt_tokens: prompt * calls as u64,
            completion_tokens: completion * calls as u64,
            ..Usage::default()
        },
        cost: cost * calls as f64,
    }
}

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    let mut call = ToolCall::new(name);
    call.arguments = arguments.as_object().unwrap().clone();
    call
}

/// The step of the main model's call `index` (1000 + 50 tokens, 0.01) that made `call`.
fn step(index: usize, call: ToolCall, observation: String) -> Step {
    let mut step = Step::new(index, "");
    step.usage = Some(Usage {
        prompt_tokens: 1000,
        completion_tokens: 50,
        ..Usage::default()
    });
    step.cost = Some(0.01);
    step.tool_call = Some(call);
    step.observation = Some(observation);
    step
}

fn write(root: &Path, name: &str, text: &str) {
    std::fs::write(root.join(name), text).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_every_kind_of_edit_and_view() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // 20 lines.
    let long: String = (1..=20).map(|n| format!("line_{n} = {n}\n")).collect();
    write(root, "long.py", &long);
    write(root, "small.py", "a = 1\nb = 2\n");
    let viewer = scripted(&[
        "[[2, 4], [6, 7]]",       // lines 2-7 after merging: 6 of 20
        "[]",                     // nothing relevant: 0 of 20
        "the lines near the top", // unparseable: not counted in the share
    ]);
    let editor = scripted(&[
        "<<<<<<< SEARCH\nline_3 = 3\n=======\nline_3 = 33\n>>>>>>> REPLACE",
        "I would change line 5.",
        "<<<<<<< SEARCH\nline_99 = 99\n=======\nx\n>>>>>>> REPLACE",
    ]);
    let tool = LlmEditor::new(
        WorkspaceFs::new(root),
        ToolConfig::default(),
        MatchOptions::default(),
        Some(viewer),
        Some(editor),
    );
    let mut toolbox = Toolbox::new(
        WorkspaceFs::new(root),
        Arc::new(HostShell::new(root)),
        ToolConfig::default(),
    );
    let long_path = "/testbed/long.py";
    let llm_calls = [
        json!({"command": "view", "path": long_path, "query": "the top"}),
        json!({"command": "view", "path": long_path, "query": "nothing"}),
        json!({"command": "view", "path": long_path, "query": "garbled"}),
        json!({"command": "view", "path": "/testbed"}),
        json!({"command": "edit", "path": long_path, "instruction": "line_3 = 33"}),
        json!({"command": "edit", "path": long_path, "instruction": "format error"}),
        json!({"command": "edit", "path": long_path, "instruction": "match failure"}),
        json!({"command": "edit", "path": long_path}),
        json!({"command": "edit", "path": "/testbed/missing.py", "instruction": "x"}),
        json!({"command": "create", "path": "/testbed/new.py", "file_text": "n = 1\n"}),
        json!({"command": "create", "path": "/testbed/new.py", "file_text": "n = 2\n"}),
    ];
    let mut steps = Vec::new();
    for arguments in llm_calls {
        let call = call(LLM_EDITOR, arguments);
        let result = tool.call(&call).await;
        let mut made = step(steps.len(), call, result.tool_result().observation);
        made.subagents = result.subagents;
        steps.push(made);
    }
    let native_calls = [
        json!({"command": "view", "path": "/testbed/small.py"}),
        json!({"command": "str_replace", "path": "/testbed/small.py", "old_str": "a = 1", "new_str": "a = 11"}),
        json!({"command": "str_replace", "path": "/testbed/small.py", "old_str": "zzz", "new_str": "y"}),
        json!({"command": "insert", "path": "/testbed/small.py", "insert_line": 99, "new_str": "c = 3"}),
        json!({"command": "create", "path": "/testbed/small.py", "file_text": "x"}),
        json!({"command": "undo_edit", "path": "/testbed/small.py"}),
    ];
    for arguments in native_calls {
        let call = call("file_editor", arguments);
        let result = tokio::task::block_in_place(|| toolbox.call(&call));
        // The loop may put a note before the observation and a hint after it.
        let observation = format!(
            "Note: one call per reply.\n{}\nSteps left: 3",
            result.observation
        );
        steps.push(step(steps.len(), call, observation));
    }
    // A format error step: no call, but the main model's call counts.
    let mut unread = Step::new(steps.len(), "no call here");
    unread.usage = Some(Usage {
        prompt_tokens: 1000,
        completion_tokens: 50,
        ..Usage::default()
    });
    unread.cost = Some(0.01);
    steps.push(unread);

    let mut trajectory = Trajectory::new(Header::new("t__0", "t"));
    trajectory.steps = steps;
    let metrics = EditMetrics::of(&trajectory);
    let main_steps = 11 + 6 + 1;
    let expected = EditMetrics {
        edits: EditCounts {
            // llm_editor: 5 edits and 2 creates; file_editor: 2 str_replace, insert, create.
            calls: 11,
            // applied edit, first create; the first str_replace.
            succeeded: 3,
            // editor's unreadable reply, edit without instruction; insert_line 99.
            format_errors: 3,
            // SEARCH not found; old_str not found.
            match_failures: 2,
            // missing file, create over an existing file (both tools).
            other_failures: 3,
        },
        // 4 llm_editor views, 1 file_editor view.
        view_calls: 5,
        viewer_share: ViewerShare {
            views: 2,
            lines_shown: 6,
            file_lines: 40,
        },
        main: spend(main_steps, 1000, 50, 0.01),
        // Three calls of each subagent, as `scripted` counts them.
        viewer: spend(3, 100, 10, 0.001),
        editor: spend(3, 100, 10, 0.001),
    };
    assert_eq!(metrics.edits, expected.edits);
    assert_eq!(metrics.view_calls, expected.view_calls);
    assert_eq!(metrics.viewer_share, expected.viewer_share);
    assert_eq!(metrics.main.calls, expected.main.calls);
    assert_eq!(metrics.main.usage, expected.main.usage);
    assert!((metrics.main.cost - expected.main.cost).abs() < 1e-9);
    for (got, want) in [
        (metrics.viewer, expected.viewer),
        (metrics.editor, expected.editor),
    ] {
        assert_eq!((got.calls, got.usage), (want.calls, want.usage));
        assert!((got.cost - want.cost).abs() < 1e-9);
    }
    assert_eq!(metrics.edit_success_rate(), Some(3.0 / 11.0));
    assert_eq!(metrics.viewer_content_share(), Some(6.0 / 40.0));
    assert_eq!(metrics.subagents().calls, 6);

    let mut twice = metrics.clone();
    twice.add(&metrics);
    assert_eq!(twice.edits.calls, 22);
    assert_eq!(twice.viewer_share.file_lines, 80);
    assert_eq!(twice.viewer_content_share(), metrics.viewer_content_share());
    assert_eq!(twice.main.calls, 2 * main_steps);
}

#[test]
fn a_trajectory_without_edits_has_no_rates() {
    let metrics = EditMetrics::of(&Trajectory::new(Header::new("t__0", "t")));
    assert_eq!(metrics, EditMetrics::default());
    assert_eq!(metrics.edit_success_rate(), None);
    assert_eq!(metrics.viewer_content_share(), None);
}
