//! SWE-Edit's set-ups on loopback: a server that plays the main agent (each task's
//! demonstration, its file views and edits moved to the tools a preset offers) and the
//! viewer and editor subagents (recognized by their system prompts). The editor works for
//! real: its instruction is a small JSON edit that it applies to the file it was sent, and
//! it answers with SEARCH/REPLACE blocks, so a rollout's patch is the demonstration's.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_tools::formats::{Pick, ToolFormat, XmlFormat};

use super::{Request, demo_calls, session_task, start_answering};

/// One of the four ablation presets (`edit-baseline`, `edit-viewer`, `edit-editor`,
/// `edit-full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Baseline,
    Viewer,
    Editor,
    Full,
}

impl Preset {
    pub const ALL: [Preset; 4] = [Self::Baseline, Self::Viewer, Self::Editor, Self::Full];

    /// The preset's name for `--preset`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Baseline => "edit-baseline",
            Self::Viewer => "edit-viewer",
            Self::Editor => "edit-editor",
            Self::Full => "edit-full",
        }
    }

    /// Files are viewed through `llm_editor view`.
    pub fn views_through_viewer(self) -> bool {
        matches!(self, Self::Viewer | Self::Full)
    }

    /// Files are changed through `llm_editor edit`.
    pub fn edits_through_editor(self) -> bool {
        matches!(self, Self::Editor | Self::Full)
    }
}

/// The task whose rollout makes two failing edits before its first real one: one the editor
/// cannot answer in blocks (or a `file_editor insert` past the end: a format error) and one
/// whose text is nowhere in the file (a match failure).
pub const FAILING_TASK: &str = "swerve-examples__calc-1";

/// Text that occurs in no file.
const NOWHERE: &str = "text that occurs nowhere";

/// The viewer's answer to every question.
pub const VIEWER_RANGES: &str = "[[1, 2], [10, 11]]";

/// The calls of `instance_id`'s demonstration as `preset` makes them.
pub fn preset_calls(preset: Preset, instance_id: &str) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    let mut edited: Vec<(String, String, String)> = Vec::new();
    for call in demo_calls(instance_id) {
        let arguments = &call.arguments;
        let text = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("");
        let path = text("path").to_owned();
        let command = if call.name == "file_editor" {
            text("command")
        } else {
            ""
        };
        if command == "str_replace" && instance_id == FAILING_TASK && edited.is_empty() {
            calls.extend(failing_edits(preset, &path));
        }
        let edit = |instruction: Value| {
            tool(
                "llm_editor",
                json!({"command": "edit", "path": path, "instruction": instruction.to_string()}),
            )
        };
        calls.push(match command {
            "view" if preset.views_through_viewer() => tool(
                "llm_editor",
                json!({"command": "view", "path": path, "query": "the code this task is about"}),
            ),
            "str_replace" => {
                edited.push((path.clone(), text("old_str").into(), text("new_str").into()));
                match preset.edits_through_editor() {
                    true => edit(json!({"old_str": text("old_str"), "new_str": text("new_str")})),
                    false => call.clone(),
                }
            }
            "insert" if preset.edits_through_editor() => edit(json!({
                "insert_line": arguments["insert_line"],
                "new_str": text("new_str"),
            })),
            "undo_edit" if preset.edits_through_editor() => {
                let (_, old, new) = edited.iter().rev().find(|(p, ..)| *p == path).unwrap();
                edit(json!({"old_str": new, "new_str": old}))
            }
            _ => call.clone(),
        });
    }
    calls
}

/// The two failing edits of [`FAILING_TASK`] on `path`.
fn failing_edits(preset: Preset, path: &str) -> [ToolCall; 2] {
    match preset.edits_through_editor() {
        true => [
            tool(
                "llm_editor",
                json!({"command": "edit", "path": path, "instruction": json!({"refuse": true}).to_string()}),
            ),
            tool(
                "llm_editor",
                json!({"command": "edit", "path": path, "instruction": json!({"old_str": NOWHERE, "new_str": "x"}).to_string()}),
            ),
        ],
        false => [
            tool(
                "file_editor",
                json!({"command": "insert", "path": path, "insert_line": 100000, "new_str": "x"}),
            ),
            tool(
                "file_editor",
                json!({"command": "str_replace", "path": path, "old_str": NOWHERE, "new_str": "x"}),
            ),
        ],
    }
}

fn tool(name: &str, arguments: Value) -> ToolCall {
    let mut call = ToolCall::new(name);
    call.arguments = arguments.as_object().unwrap().clone();
    call
}

/// Starts the server for `preset`: its URL and the requests it received.
pub fn start(preset: Preset) -> (String, Arc<Mutex<Vec<Request>>>) {
    start_answering(move |request| answer(preset, request))
}

fn answer(preset: Preset, request: &Request) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap_or("");
    let user = messages
        .get(1)
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    if system.starts_with("You help a software engineer read a source file.") {
        return VIEWER_RANGES.to_owned();
    }
    if system.starts_with("You change a source file as an instruction says.") {
        return editor_reply(user);
    }
    let turn = messages
        .iter()
        .filter(|message| message["role"] == "assistant")
        .count();
    match preset_calls(preset, session_task(request.session())).get(turn) {
        Some(call) => {
            XmlFormat::new(Pick::First)
                .render_call("Next step.", call, None)
                .content
        }
        None => "I have nothing more to do.".into(),
    }
}

/// The editor's answer to its user message: the file it holds, changed as the JSON
/// instruction says, as SEARCH/REPLACE blocks (a whole-file rewrite for an insertion).
fn editor_reply(user: &str) -> String {
    let rest = user.strip_prefix("The file:\n").unwrap();
    let (fence, rest) = rest.split_once('\n').unwrap();
    let (body, rest) = rest
        .split_once(&format!("\n{fence}\n\nInstruction: "))
        .unwrap();
    let (instruction, _) = rest.split_once("\n\nAnswer with").unwrap();
    let instruction: Value = serde_json::from_str(instruction).unwrap();
    if instruction.get("refuse").is_some() {
        return "I would rather not change this file.".into();
    }
    let new_str = instruction["new_str"].as_str().unwrap();
    if let Some(line) = instruction["insert_line"].as_u64() {
        // As `file_editor insert` does: the new lines after line `line`.
        let mut lines: Vec<&str> = body.split('\n').collect();
        let at = line as usize;
        lines.splice(at..at, new_str.split('\n'));
        return format!(
            "<<<<<<< SEARCH\n=======\n{}\n>>>>>>> REPLACE\n",
            lines.join("\n")
        );
    }
    let old_str = instruction["old_str"].as_str().unwrap();
    format!(
        "<<<<<<< SEARCH\n{}\n=======\n{}\n>>>>>>> REPLACE\n",
        old_str.trim_end_matches('\n'),
        new_str.trim_end_matches('\n')
    )
}
