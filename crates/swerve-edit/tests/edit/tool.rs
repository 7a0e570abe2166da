//! The `llm_editor` tool over a real workspace directory, with scripted subagent models:
//! views, edits, creates, every argument and path error, model failures as observations,
//! and the subagents' records.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use swerve_core::ToolCall;
use swerve_edit::blocks::MatchOptions;
use swerve_edit::subagent::{EditStatus, ViewStatus};
use swerve_edit::tool::{
    LLM_EDITOR, LlmEditor, LlmEditorCommand, LlmEditorResult, llm_editor_spec,
};
use swerve_llm::{
    Model, ModelError, ModelFuture, ModelRequest, ModelResponse, Role, ScriptedModel, Usage,
};
use swerve_tools::{ToolConfig, WorkspaceFs, list_directory};

const CALC: &str = "import math\n\n\ndef area(r):\n    return math.pi * r * r\n\n\ndef perimeter(r):\n    return 2 * math.pi * r\n\n\ndef volume(r):\n    return 4 / 3 * math.pi * r ** 3\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg/sub")).unwrap();
    std::fs::write(dir.path().join("pkg/calc.py"), CALC).unwrap();
    std::fs::write(dir.path().join("pkg/sub/deep.py"), "x = 1\n").unwrap();
    std::fs::write(dir.path().join(".hidden"), "").unwrap();
    dir
}

fn tool(root: &Path, viewer: Arc<dyn Model>, editor: Arc<dyn Model>) -> LlmEditor {
    LlmEditor::new(
        WorkspaceFs::new(root),
        ToolConfig::default(),
        MatchOptions::default(),
        Some(viewer),
        Some(editor),
    )
}

fn scripted(replies: &[&str]) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new(replies.iter().map(|reply| {
        Ok(ModelResponse {
            usage: Usage {
                prompt_tokens: 300,
                completion_tokens: 40,
                ..Usage::default()
            },
            cost: 0.002,
            ..ModelResponse::text(*reply)
        })
    })))
}

fn call(arguments: serde_json::Value) -> ToolCall {
    let mut call = ToolCall::new(LLM_EDITOR);
    call.arguments = arguments.as_object().unwrap().clone();
    call
}

async fn run(tool: &LlmEditor, arguments: serde_json::Value) -> LlmEditorResult {
    tool.call(&call(arguments)).await
}

#[tokio::test]
async fn view_shows_the_ranges_the_viewer_names_and_records_its_call() {
    let dir = workspace();
    let viewer = scripted(&["<think>area and volume</think>\n[[4, 5], [12, 13], [3, 3]]"]);
    let tool = tool(dir.path(), viewer.clone(), scripted(&[]));
    let result = run(
        &tool,
        json!({"command": "view", "path": "/testbed/pkg/calc.py", "query": "formulas using r squared or cubed"}),
    )
    .await;
    assert_eq!(
        result.output,
        "Relevant sections in /testbed/pkg/calc.py:\n\n     3\t\n     4\tdef area(r):\n     5\t    return math.pi * r * r\n\n... (6 lines omitted) ...\n\n    12\tdef volume(r):\n    13\t    return 4 / 3 * math.pi * r ** 3"
    );
    assert!(!result.is_error);
    assert_eq!(
        result.view,
        Some(ViewStatus::Shown {
            lines: 5,
            total: 13
        })
    );
    let [record] = &result.subagents[..] else {
        panic!("one subagent: {:?}", result.subagents)
    };
    assert_eq!(
        (record.agent.as_str(), record.model.as_str()),
        ("viewer", "scripted")
    );
    assert_eq!(record.status.as_deref(), Some("shown"));
    assert_eq!(record.usage().prompt_tokens, 300);
    assert_eq!(record.cost(), 0.002);
    let call = &record.calls[0];
    assert_eq!(call.messages[0].role, Role::System);
    let user = call.messages[1].content.as_ref().unwrap().text();
    assert!(user.contains("     4\tdef area(r):\n"), "{user}");
    assert!(
        user.contains("Question: formulas using r squared or cubed"),
        "{user}"
    );
    assert_eq!(viewer.requests().len(), 1);
    assert_eq!(
        result.tool_result().observation,
        format!("Execution output of [llm_editor]:\n{}", result.output)
    );
}

#[tokio::test]
async fn view_outcomes_that_are_not_ranges() {
    let dir = workspace();
    let viewer = Arc::new(ScriptedModel::new([
        Ok(ModelResponse::text("[]")),
        Ok(ModelResponse::text("The area function.")),
        Err(ModelError::RateLimited { attempts: 3 }),
    ]));
    let tool = tool(dir.path(), viewer, scripted(&[]));
    let view = json!({"command": "view", "path": "pkg/calc.py", "query": "database"});
    let nothing = run(&tool, view.clone()).await;
    assert_eq!(
        nothing.output,
        "No content in /testbed/pkg/calc.py matches the query."
    );
    assert_eq!(
        (nothing.is_error, nothing.view),
        (false, Some(ViewStatus::NothingRelevant))
    );
    let unparsed = run(&tool, view.clone()).await;
    assert_eq!(
        unparsed.output,
        "ERROR parsing LLM response: Could not parse line ranges from LLM output\nLLM output was:\nThe area function."
    );
    assert_eq!(
        (unparsed.is_error, unparsed.view),
        (true, Some(ViewStatus::ParseError))
    );
    let failed = run(&tool, view).await;
    assert_eq!(
        failed.output,
        "ERROR calling LLM: model endpoint rate-limited the request (HTTP 429) on all 3 attempt(s)"
    );
    assert_eq!(failed.view, Some(ViewStatus::ModelError));
    let record = &failed.subagents[0];
    assert_eq!(record.status.as_deref(), Some("model_error"));
    assert!(record.calls[0].error.as_deref().unwrap().contains("429"));
}

#[tokio::test]
async fn view_of_a_directory_is_the_native_listing() {
    let dir = workspace();
    let tool = tool(dir.path(), scripted(&[]), scripted(&[]));
    let result = run(&tool, json!({"command": "view", "path": "/testbed"})).await;
    let fs = WorkspaceFs::new(dir.path());
    let native = list_directory(
        &fs,
        &ToolConfig::default(),
        &fs.resolve("/testbed").unwrap(),
    );
    assert_eq!(Ok(result.output.clone()), native);
    assert!(!result.output.contains("/testbed/pkg/sub/deep.py"));
    assert!(
        result.output.contains("/testbed/pkg/sub\n"),
        "{}",
        result.output
    );
    assert!(!result.output.contains(".hidden"));
    assert!(result.subagents.is_empty());
}

#[tokio::test]
async fn edit_writes_the_file_and_shows_the_changed_region() {
    let dir = workspace();
    let editor = scripted(&[
        "<<<<<<< SEARCH\n    return 2 * math.pi * r\n=======\n    return math.tau * r\n>>>>>>> REPLACE\n",
    ]);
    let tool = tool(dir.path(), scripted(&[]), editor.clone());
    let result = run(
        &tool,
        json!({"command": "edit", "path": "/testbed/pkg/calc.py", "instruction": "In perimeter, use math.tau.", "query": null}),
    )
    .await;
    assert_eq!(
        result.output,
        "Successfully edited /testbed/pkg/calc.py.\n\nThe modified regions in the file are now:\n     7\t\n     8\tdef perimeter(r):\n     9\t    return math.tau * r\n    10\t\n    11\t"
    );
    assert_eq!(
        (result.is_error, result.edit),
        (false, Some(EditStatus::Applied))
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pkg/calc.py")).unwrap(),
        CALC.replace("2 * math.pi * r", "math.tau * r")
    );
    let record = &result.subagents[0];
    assert_eq!(
        (record.agent.as_str(), record.status.as_deref()),
        ("editor", Some("applied"))
    );
    let user = editor.requests()[0].clone();
    let swerve_llm::ModelInput::Chat { messages, .. } = &user.input else {
        panic!("chat request")
    };
    let text = messages[1].content.as_ref().unwrap().text();
    assert!(
        text.contains(&format!("```\n{}\n```", CALC.trim_end())),
        "{text}"
    );
    assert!(
        text.contains("Instruction: In perimeter, use math.tau."),
        "{text}"
    );
}

#[tokio::test]
async fn failed_edits_leave_the_file_alone() {
    let dir = workspace();
    let editor = Arc::new(ScriptedModel::new([
        Ok(ModelResponse::text("I cannot do this.")),
        Ok(ModelResponse::text(
            "<<<<<<< SEARCH\ndef nowhere():\n=======\n\n>>>>>>> REPLACE",
        )),
        Ok(ModelResponse::text(
            "<<<<<<< SEARCH\n\n    return\n=======\nx\n>>>>>>> REPLACE",
        )),
        Err(ModelError::Timeout {
            attempts: 2,
            timeout: std::time::Duration::from_secs(1),
        }),
        Ok(ModelResponse::text(
            "<<<<<<< SEARCH\nimport math\n=======\nimport math\n>>>>>>> REPLACE",
        )),
    ]));
    let tool = tool(dir.path(), scripted(&[]), editor);
    let edit = json!({"command": "edit", "path": "pkg/calc.py", "instruction": "Do it."});
    let expected = [
        (
            "ERROR: LLM did not produce valid search-replace blocks. LLM output was:\nI cannot do this.",
            EditStatus::FormatError,
        ),
        (
            "ERROR: Could not find the search block in the file.",
            EditStatus::MatchFailure,
        ),
        (
            "ERROR: Found 3 occurrences of the search block.",
            EditStatus::MatchFailure,
        ),
        (
            "ERROR calling LLM: model request timed out (1s per attempt, 2 attempt(s))",
            EditStatus::ModelError,
        ),
        (
            "No changes made to /testbed/pkg/calc.py.",
            EditStatus::Unchanged,
        ),
    ];
    for (text, status) in expected {
        let result = run(&tool, edit.clone()).await;
        assert_eq!((result.output.as_str(), result.edit), (text, Some(status)));
        assert_eq!(result.is_error, status != EditStatus::Unchanged);
        assert_eq!(result.subagents[0].status.as_deref(), Some(status.name()));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("pkg/calc.py")).unwrap(),
            CALC
        );
    }
}

/// An editor model whose file is replaced by a directory while it thinks, so the edit
/// cannot be written.
struct FileVanishes {
    file: std::path::PathBuf,
    reply: ScriptedModel,
}

impl Model for FileVanishes {
    fn complete<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        std::fs::remove_file(&self.file).unwrap();
        std::fs::create_dir_all(self.file.join("now-a-directory")).unwrap();
        self.reply.complete(request)
    }

    fn name(&self) -> &str {
        "vanishing"
    }
}

#[tokio::test]
async fn a_write_failure_is_reported_and_recorded() {
    let dir = workspace();
    let editor = Arc::new(FileVanishes {
        file: dir.path().join("pkg/calc.py"),
        reply: ScriptedModel::from_texts([
            "<<<<<<< SEARCH\nimport math\n=======\nimport math as m\n>>>>>>> REPLACE",
        ]),
    });
    let tool = tool(dir.path(), scripted(&[]), editor);
    let result = run(
        &tool,
        json!({"command": "edit", "path": "pkg/calc.py", "instruction": "alias"}),
    )
    .await;
    assert!(
        result
            .output
            .starts_with("ERROR writing file: Could not access '/testbed/pkg/calc.py': "),
        "{}",
        result.output
    );
    assert_eq!(
        (result.is_error, result.edit),
        (true, Some(EditStatus::WriteError))
    );
    assert_eq!(result.subagents[0].status.as_deref(), Some("write_error"));
}

#[tokio::test]
async fn crlf_files_are_edited_as_lf_and_stay_crlf() {
    let dir = workspace();
    std::fs::write(dir.path().join("win.py"), "a = 1\r\nb = 2\r\n").unwrap();
    let editor = scripted(&["<<<<<<< SEARCH\nb = 2\n=======\nb = 3\nc = 4\n>>>>>>> REPLACE"]);
    let tool = tool(dir.path(), scripted(&[]), editor);
    let result = run(
        &tool,
        json!({"command": "edit", "path": "win.py", "instruction": "b is 3, add c"}),
    )
    .await;
    assert_eq!(result.edit, Some(EditStatus::Applied), "{}", result.output);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("win.py")).unwrap(),
        "a = 1\r\nb = 3\r\nc = 4\r\n"
    );
}

#[tokio::test]
async fn create_makes_parent_directories_and_refuses_existing_paths() {
    let dir = workspace();
    let tool = tool(dir.path(), scripted(&[]), scripted(&[]));
    let created = run(
        &tool,
        json!({"command": "create", "path": "/testbed/new/dir/f.py", "file_text": "y = 2\n"}),
    )
    .await;
    assert_eq!(
        created.output,
        "File created successfully at: /testbed/new/dir/f.py"
    );
    assert!(!created.is_error);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new/dir/f.py")).unwrap(),
        "y = 2\n"
    );
    let again = run(
        &tool,
        json!({"command": "create", "path": "/testbed/new/dir/f.py", "file_text": "z"}),
    )
    .await;
    assert_eq!(
        again.output,
        "ERROR: File already exists at: /testbed/new/dir/f.py. Cannot overwrite files using command `create`."
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new/dir/f.py")).unwrap(),
        "y = 2\n"
    );
}

#[tokio::test]
async fn argument_and_path_errors_use_swe_edits_texts() {
    let dir = workspace();
    let tool = tool(dir.path(), scripted(&[]), scripted(&[]));
    let cases = [
        (
            json!({}),
            "Invalid function arguments: command: Field required; path: Field required",
        ),
        (
            json!({"command": "delete", "path": 3, "instruction": ["x"], "bogus": 1}),
            "Invalid function arguments: command: Input should be 'view', 'create' or 'edit'; path: Input should be a valid string; instruction: Input should be a valid string; bogus: Extra inputs are not permitted",
        ),
        (
            json!({"command": "view", "path": "/testbed/pkg/calc.py"}),
            "ERROR: Parameter `query` is required for `view` command when viewing a file.",
        ),
        (
            json!({"command": "view", "path": "/testbed/missing.py", "query": "q"}),
            "ERROR: Invalid `path` parameter: The path /testbed/missing.py does not exist. Please provide a valid path.",
        ),
        (
            json!({"command": "view", "path": "/etc/passwd", "query": "q"}),
            "ERROR: The path '/etc/passwd' is outside the repository /testbed. Only paths under /testbed can be used.",
        ),
        (
            json!({"command": "create", "path": "/testbed/n.py"}),
            "ERROR: Parameter `file_text` is required for command: create.",
        ),
        (
            json!({"command": "edit", "path": "/testbed/pkg/calc.py"}),
            "ERROR: Parameter `instruction` is required for command: edit.",
        ),
        (
            json!({"command": "edit", "path": "/testbed/none.py", "instruction": "i"}),
            "ERROR: The file /testbed/none.py does not exist. Please provide a valid file path.",
        ),
        (
            json!({"command": "edit", "path": "/testbed/pkg", "instruction": "i"}),
            "ERROR: /testbed/pkg is a directory, not a file. The `edit` command only works with files.",
        ),
    ];
    for (arguments, expected) in cases {
        let result = run(&tool, arguments.clone()).await;
        assert_eq!(result.output, expected, "{arguments}");
        assert!(
            result.is_error && result.subagents.is_empty(),
            "{arguments}"
        );
    }
}

#[test]
fn the_schema_advertises_the_three_commands() {
    let spec = llm_editor_spec(&LlmEditorCommand::ALL);
    assert_eq!(spec["function"]["name"], "llm_editor");
    let parameters = &spec["function"]["parameters"];
    assert_eq!(
        parameters["properties"]["command"]["enum"],
        json!(["view", "create", "edit"])
    );
    assert_eq!(parameters["required"], json!(["command", "path"]));
    assert_eq!(parameters["additionalProperties"], false);
}

#[tokio::test]
async fn a_set_up_offers_only_some_commands_in_its_schema_and_refuses_the_others() {
    let spec = llm_editor_spec(&[LlmEditorCommand::Create, LlmEditorCommand::Edit]);
    let command = &spec["function"]["parameters"]["properties"]["command"];
    assert_eq!(command["enum"], json!(["create", "edit"]));
    assert_eq!(
        command["description"],
        "The command to run: `create`, `edit`."
    );
    let description = spec["function"]["description"].as_str().unwrap();
    assert!(!description.contains("* `view`"), "{description}");
    assert!(description.contains("* `edit` needs an `instruction`"));

    let dir = workspace();
    let viewer = scripted(&["[[1, 2]]"]);
    let tool = LlmEditor::new(
        WorkspaceFs::new(dir.path()),
        ToolConfig::default(),
        MatchOptions::default(),
        Some(viewer.clone()),
        None,
    )
    .with_commands(&[LlmEditorCommand::View]);
    assert_eq!(
        tool.spec()["function"]["parameters"]["properties"]["command"]["enum"],
        json!(["view"])
    );
    let refused = run(
        &tool,
        json!({"command": "create", "path": "/testbed/new.py", "file_text": "x = 1\n"}),
    )
    .await;
    assert_eq!(
        refused.output,
        "ERROR: The command `create` is not offered in this set-up. Allowed commands: view."
    );
    assert!(refused.is_error && refused.subagents.is_empty());
    assert!(!dir.path().join("new.py").exists());
    let viewed = run(
        &tool,
        json!({"command": "view", "path": "/testbed/pkg/calc.py", "query": "imports"}),
    )
    .await;
    assert!(!viewed.is_error, "{}", viewed.output);

    let tool = LlmEditor::new(
        WorkspaceFs::new(dir.path()),
        ToolConfig::default(),
        MatchOptions::default(),
        None,
        None,
    );
    let result = run(
        &tool,
        json!({"command": "edit", "path": "/testbed/pkg/calc.py", "instruction": "rename"}),
    )
    .await;
    assert_eq!(
        result.output,
        "ERROR calling LLM: no editor model is configured ([edit.editor])"
    );
    assert!(result.is_error && result.edit.is_none());
}
