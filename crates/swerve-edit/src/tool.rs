//! The `llm_editor` tool (SWE-Edit `LLMEditor`): `view` a file through the viewer subagent
//! or a directory as the native `file_editor` lists it, `edit` a file through the editor
//! subagent, `create` a file. Arguments are checked the way SWE-Edit's pydantic model
//! checks them; every failure is an observation.

use std::sync::Arc;

use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_core::trajectory::SubTrajectory;
use swerve_llm::Model;
use swerve_tools::{
    EntryKind, ToolConfig, ToolResult, WorkspaceFs, list_directory, render_observation,
};

use crate::blocks::MatchOptions;
use crate::subagent::{EditStatus, SourceFile, ViewStatus, edit, view};

/// The tool's name.
pub const LLM_EDITOR: &str = "llm_editor";

const DESCRIPTION: &str = "View, edit and create files with the help of two assistants.
* `view` of a directory lists its files and directories, two levels deep, hidden ones excluded.
* `view` of a file needs a `query`: an assistant reads the whole file and shows you only the numbered lines that answer it, with `... (N lines omitted) ...` between sections. Ask precise questions (\"the body of Parser.parse_expr\", \"where is the timeout read from the configuration?\"); ask again with another query if something is missing.
* `edit` needs an `instruction`: an assistant reads the whole file and makes the change. Say exactly what to change and where, naming the function, class or method, and give the new code when it matters. The result shows the changed lines with their line numbers; an error means nothing was changed.
* `create` writes a new file with `file_text`; it refuses a path that already exists.";

/// The tool's schema in OpenAI function-calling form, for advertising it beside the native
/// tools (`swerve_tools::tool_specs`).
pub fn llm_editor_spec() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": LLM_EDITOR,
            "description": DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {
                        "description": "The command to run: `view`, `create` or `edit`.",
                        "enum": ["view", "create", "edit"],
                        "type": "string",
                    },
                    "path": {
                        "description": "Absolute path to a file or directory, e.g. `/testbed/src/app.py` or `/testbed`.",
                        "type": "string",
                    },
                    "query": {
                        "description": "Required for `view` of a file: what you want to see in it, in plain words.",
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                    },
                    "instruction": {
                        "description": "Required for `edit`: what to change and where, precisely (name the function, class or method).",
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                    },
                    "file_text": {
                        "description": "Required for `create`: the new file's contents.",
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                    },
                },
                "required": ["command", "path"],
                "additionalProperties": false,
            },
        },
    })
}

/// What one `llm_editor` call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmEditorResult {
    /// What the tool printed.
    pub output: String,
    /// Whether the call failed (an `ERROR`, or invalid arguments).
    pub is_error: bool,
    /// The subagents the call ran, for the step's `subagents`.
    pub subagents: Vec<SubTrajectory>,
    /// How a `view` of a file ended.
    pub view: Option<ViewStatus>,
    /// How an `edit` ended.
    pub edit: Option<EditStatus>,
}

impl LlmEditorResult {
    fn text(output: String, is_error: bool) -> Self {
        Self {
            output,
            is_error,
            subagents: Vec::new(),
            view: None,
            edit: None,
        }
    }

    fn error(output: String) -> Self {
        Self::text(output, true)
    }

    /// The result as the native tools report theirs: the observation is
    /// `Execution output of [llm_editor]:\n{output}`.
    pub fn tool_result(&self) -> ToolResult {
        ToolResult {
            output: self.output.clone(),
            error_code: "0".to_owned(),
            done: false,
            is_error: self.is_error,
            observation: render_observation(LLM_EDITOR, &self.output, "0", 0),
            submission: None,
        }
    }
}

/// The `llm_editor` tool over one workspace, with its two subagent models.
pub struct LlmEditor {
    fs: WorkspaceFs,
    tools: ToolConfig,
    matching: MatchOptions,
    viewer: Arc<dyn Model>,
    editor: Arc<dyn Model>,
}

/// The arguments of a call, checked.
struct Arguments {
    command: String,
    path: String,
    query: Option<String>,
    instruction: Option<String>,
    file_text: Option<String>,
}

impl LlmEditor {
    /// The tool over `fs`: files are read under `tools.max_file_bytes` and directories
    /// listed as `file_editor` lists them with `tools`; SEARCH blocks are matched with
    /// `matching`.
    pub fn new(
        fs: WorkspaceFs,
        tools: ToolConfig,
        matching: MatchOptions,
        viewer: Arc<dyn Model>,
        editor: Arc<dyn Model>,
    ) -> Self {
        Self {
            fs,
            tools,
            matching,
            viewer,
            editor,
        }
    }

    /// Runs one call (its name is not checked). Never panics and never fails: problems
    /// come back as error results.
    pub async fn call(&self, call: &ToolCall) -> LlmEditorResult {
        let arguments = match Arguments::check(call) {
            Ok(arguments) => arguments,
            Err(message) => return LlmEditorResult::error(message),
        };
        let target = match self.fs.resolve(&arguments.path) {
            Ok(target) => target,
            Err(error) => return LlmEditorResult::error(format!("ERROR: {error}")),
        };
        let path = &target.display;
        match arguments.command.as_str() {
            "create" => {
                let Some(file_text) = arguments.file_text else {
                    return LlmEditorResult::error(
                        "ERROR: Parameter `file_text` is required for command: create.".into(),
                    );
                };
                if target.kind != EntryKind::Missing {
                    return LlmEditorResult::error(format!(
                        "ERROR: File already exists at: {path}. Cannot overwrite files using command `create`."
                    ));
                }
                match self.fs.write(&target, file_text.as_bytes()) {
                    Ok(()) => LlmEditorResult::text(
                        format!("File created successfully at: {path}"),
                        false,
                    ),
                    Err(error) => LlmEditorResult::error(format!("ERROR: {error}")),
                }
            }
            "view" => match target.kind {
                EntryKind::Missing => LlmEditorResult::error(format!(
                    "ERROR: Invalid `path` parameter: The path {path} does not exist. Please provide a valid path."
                )),
                EntryKind::Dir => match list_directory(&self.fs, &self.tools, &target) {
                    Ok(listing) => LlmEditorResult::text(listing, false),
                    Err(listing) => LlmEditorResult::error(listing),
                },
                EntryKind::Other => LlmEditorResult::error(not_regular(path)),
                EntryKind::File => {
                    let text = match self.fs.read_text(&target, self.tools.max_file_bytes) {
                        Ok(text) => text,
                        Err(error) => return LlmEditorResult::error(format!("ERROR: {error}")),
                    };
                    let Some(query) = arguments.query else {
                        return LlmEditorResult::error(
                            "ERROR: Parameter `query` is required for `view` command when viewing a file.".into(),
                        );
                    };
                    let file = SourceFile { path, text: &text };
                    let outcome = view(self.viewer.as_ref(), file, &query).await;
                    let failed = matches!(
                        outcome.status,
                        ViewStatus::ParseError | ViewStatus::ModelError
                    );
                    LlmEditorResult {
                        view: Some(outcome.status),
                        subagents: vec![outcome.subagent],
                        ..LlmEditorResult::text(outcome.output, failed)
                    }
                }
            },
            _ => {
                let Some(instruction) = arguments.instruction else {
                    return LlmEditorResult::error(
                        "ERROR: Parameter `instruction` is required for command: edit.".into(),
                    );
                };
                match target.kind {
                    EntryKind::Missing => {
                        return LlmEditorResult::error(format!(
                            "ERROR: The file {path} does not exist. Please provide a valid file path."
                        ));
                    }
                    EntryKind::Dir => {
                        return LlmEditorResult::error(format!(
                            "ERROR: {path} is a directory, not a file. The `edit` command only works with files."
                        ));
                    }
                    EntryKind::Other => return LlmEditorResult::error(not_regular(path)),
                    EntryKind::File => {}
                }
                let text = match self.fs.read_text(&target, self.tools.max_file_bytes) {
                    Ok(text) => text,
                    Err(error) => return LlmEditorResult::error(format!("ERROR: {error}")),
                };
                let file = SourceFile { path, text: &text };
                let mut outcome =
                    edit(self.editor.as_ref(), file, &instruction, &self.matching).await;
                if let Some(new_text) = outcome
                    .new_text
                    .as_ref()
                    .filter(|_| outcome.status == EditStatus::Applied)
                    && let Err(error) = self.fs.write(&target, new_text.as_bytes())
                {
                    outcome.status = EditStatus::WriteError;
                    outcome.subagent.status = Some(outcome.status.name().to_owned());
                    outcome.output = format!("ERROR writing file: {error}");
                }
                let failed = !matches!(outcome.status, EditStatus::Applied | EditStatus::Unchanged);
                LlmEditorResult {
                    edit: Some(outcome.status),
                    subagents: vec![outcome.subagent],
                    ..LlmEditorResult::text(outcome.output, failed)
                }
            }
        }
    }
}

/// The native editor's text for a socket, fifo or device.
fn not_regular(path: &str) -> String {
    format!("ERROR: The path '{path}' is not a regular file.")
}

impl Arguments {
    /// Checks a call's arguments as SWE-Edit's pydantic model does (`extra="forbid"`):
    /// `Invalid function arguments: {field}: {problem}; …` names every problem.
    fn check(call: &ToolCall) -> Result<Self, String> {
        const FIELDS: [&str; 5] = ["command", "path", "instruction", "file_text", "query"];
        let mut problems = Vec::new();
        let command = match call.arguments.get("command") {
            Some(Value::String(command))
                if ["view", "create", "edit"].contains(&command.as_str()) =>
            {
                Some(command.clone())
            }
            None => {
                problems.push("command: Field required".to_owned());
                None
            }
            Some(_) => {
                problems.push("command: Input should be 'view', 'create' or 'edit'".to_owned());
                None
            }
        };
        let mut text = |field: &str, required: bool| match call.arguments.get(field) {
            Some(Value::String(text)) => Some(text.clone()),
            None if required => {
                problems.push(format!("{field}: Field required"));
                None
            }
            None | Some(Value::Null) if !required => None,
            Some(_) | None => {
                problems.push(format!("{field}: Input should be a valid string"));
                None
            }
        };
        let path = text("path", true);
        let instruction = text("instruction", false);
        let file_text = text("file_text", false);
        let query = text("query", false);
        for key in call.arguments.keys() {
            if !FIELDS.contains(&key.as_str()) {
                problems.push(format!("{key}: Extra inputs are not permitted"));
            }
        }
        match (command, path) {
            (Some(command), Some(path)) if problems.is_empty() => Ok(Self {
                command,
                path,
                query,
                instruction,
                file_text,
            }),
            _ => Err(format!(
                "Invalid function arguments: {}",
                problems.join("; ")
            )),
        }
    }
}
