//! The `llm_editor` tool (SWE-Edit `LLMEditor`): `view` a file through the viewer subagent
//! or a directory as the native `file_editor` lists it, `edit` a file through the editor
//! subagent, `create` a file. Arguments are checked the way SWE-Edit's pydantic model
//! checks them; every failure is an observation. A set-up may offer only some commands
//! (SWE-Edit's ablations): the schema lists those, and the others are refused.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
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

/// An `llm_editor` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmEditorCommand {
    /// List a directory, or show the lines of a file that answer a `query` (the viewer).
    View,
    /// Write a new file from `file_text`; refuses an existing path.
    Create,
    /// Change a file as an `instruction` says (the editor).
    Edit,
}

impl LlmEditorCommand {
    /// Every command, in SWE-Edit's order.
    pub const ALL: [Self; 3] = [Self::View, Self::Create, Self::Edit];

    /// The command's name in calls.
    pub fn name(self) -> &'static str {
        match self {
            Self::View => "view",
            Self::Create => "create",
            Self::Edit => "edit",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|command| command.name() == name)
    }
}

/// The tool's schema in OpenAI function-calling form, offering `commands`, for advertising
/// it beside the native tools (`swerve_tools::tool_specs`). The description leaves out the
/// lines about commands not offered.
pub fn llm_editor_spec(commands: &[LlmEditorCommand]) -> Value {
    let names: Vec<&str> = commands.iter().map(|command| command.name()).collect();
    let listed: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    let description: String = DESCRIPTION
        .split_inclusive('\n')
        .filter(|line| {
            LlmEditorCommand::ALL
                .into_iter()
                .find(|command| line.starts_with(&format!("* `{}`", command.name())))
                .is_none_or(|command| commands.contains(&command))
        })
        .collect();
    json!({
        "type": "function",
        "function": {
            "name": LLM_EDITOR,
            "description": description.trim_end(),
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {
                        "description": format!("The command to run: {}.", listed.join(", ")),
                        "enum": names,
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
    /// `Execution output of [llm_editor]:\n{output}` (the subagent runs stay here).
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
    format: crate::format::EditFormat,
    commands: Vec<LlmEditorCommand>,
    viewer: Option<Arc<dyn Model>>,
    editor: Option<Arc<dyn Model>>,
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
    /// The tool over `fs`, offering every command: files are read under
    /// `tools.max_file_bytes` and directories listed as `file_editor` lists them with
    /// `tools`; SEARCH blocks are matched with `matching`. A missing model makes its command
    /// answer `ERROR calling LLM: …`.
    pub fn new(
        fs: WorkspaceFs,
        tools: ToolConfig,
        matching: MatchOptions,
        viewer: Option<Arc<dyn Model>>,
        editor: Option<Arc<dyn Model>>,
    ) -> Self {
        Self {
            fs,
            tools,
            matching,
            format: crate::format::EditFormat::Adaptive,
            commands: LlmEditorCommand::ALL.to_vec(),
            viewer,
            editor,
        }
    }

    /// Has the editor use the `format` policy.
    pub fn with_format(mut self, format: crate::format::EditFormat) -> Self {
        self.format = format;
        self
    }

    /// Offers only `commands`; calls of the others are refused.
    pub fn with_commands(mut self, commands: &[LlmEditorCommand]) -> Self {
        self.commands = commands.to_vec();
        self
    }

    /// The schema of the tool as set up.
    pub fn spec(&self) -> Value {
        llm_editor_spec(&self.commands)
    }

    /// Runs one call (its name is not checked). Never panics and never fails: problems
    /// come back as error results.
    pub async fn call(&self, call: &ToolCall) -> LlmEditorResult {
        let arguments = match Arguments::check(call) {
            Ok(arguments) => arguments,
            Err(message) => return LlmEditorResult::error(message),
        };
        if LlmEditorCommand::from_name(&arguments.command)
            .is_none_or(|command| !self.commands.contains(&command))
        {
            let offered: Vec<&str> = self.commands.iter().map(|c| c.name()).collect();
            return LlmEditorResult::error(format!(
                "ERROR: The command `{}` is not offered in this set-up. Allowed commands: {}.",
                arguments.command,
                offered.join(", ")
            ));
        }
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
                    let Some(viewer) = &self.viewer else {
                        return LlmEditorResult::error(missing_model("viewer"));
                    };
                    let file = SourceFile { path, text: &text };
                    let outcome = view(viewer.as_ref(), file, &query).await;
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
                let Some(editor) = &self.editor else {
                    return LlmEditorResult::error(missing_model("editor"));
                };
                let file = SourceFile { path, text: &text };
                let mut outcome = edit(
                    editor.as_ref(),
                    file,
                    &instruction,
                    &self.matching,
                    self.format,
                )
                .await;
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

/// The observation of a command whose subagent has no model.
fn missing_model(role: &str) -> String {
    format!("ERROR calling LLM: no {role} model is configured ([edit.{role}])")
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
