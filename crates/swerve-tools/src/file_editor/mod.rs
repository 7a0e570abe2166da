//! `file_editor`: R2E-Gym's `view`, `create`, `str_replace`, `insert` and `undo_edit`,
//! in process, with the same output texts.
//!
//! The output is what R2E-Gym's script prints: the result followed by a newline; errors
//! raised as `EditorError` upstream print `ERROR: {text}`, and errors upstream *returns*
//! (bad `view_range`, non-Python view, directory listing failures) print an empty line
//! first, because the script prints the empty output before the error. Both are kept.

mod concise;
mod edit;
mod view;

use std::collections::HashMap;

use swerve_core::ToolCall;

use crate::args;
use crate::config::{FileEditorCommand, ToolConfig};
use crate::fs::{EntryKind, FsError, Resolved, WorkspaceFs};
use crate::pytext::{clip, expand_tabs};

/// How a command failed, which decides how the error is printed (see the module docs).
pub(crate) enum Failure {
    /// Printed as `ERROR: {text}`.
    Raised(String),
    /// Printed as an empty line, then `ERROR: {text}`.
    Reported(String),
}

impl From<FsError> for Failure {
    fn from(err: FsError) -> Self {
        Failure::Raised(err.to_string())
    }
}

/// What one `file_editor` call printed.
pub(crate) struct EditorOutput {
    pub output: String,
    pub is_error: bool,
}

/// The editor with its undo history (one per [`crate::Toolbox`]; R2E-Gym keeps it in
/// `/var/tmp/editor_state.json` instead).
#[derive(Default)]
pub(crate) struct Editor {
    history: HashMap<String, Vec<edit::Prior>>,
}

impl Editor {
    /// Runs one call and returns what R2E-Gym's script would print.
    pub(crate) fn run(
        &mut self,
        fs: &WorkspaceFs,
        config: &ToolConfig,
        call: &ToolCall,
    ) -> EditorOutput {
        print(self.dispatch(fs, config, call))
    }

    fn dispatch(
        &mut self,
        fs: &WorkspaceFs,
        config: &ToolConfig,
        call: &ToolCall,
    ) -> Result<String, Failure> {
        let command = args::text(call, "command").ok_or_else(|| {
            Failure::Raised(
                "Missing required parameter 'command' for 'file_editor'. Allowed commands: view, create, str_replace, insert, undo_edit."
                    .to_owned(),
            )
        })?;
        if let Some(known) = FileEditorCommand::from_name(&command)
            && !config.file_editor_commands.contains(&known)
        {
            let offered: Vec<&str> = config
                .file_editor_commands
                .iter()
                .map(|command| command.name())
                .collect();
            return Err(Failure::Raised(format!(
                "The command '{command}' is not offered in this set-up. Allowed commands: {}.",
                offered.join(", ")
            )));
        }
        let path = args::text(call, "path").ok_or_else(|| {
            Failure::Raised(format!(
                "Missing required parameter 'path' for '{command}'."
            ))
        })?;
        let target = fs.resolve(&path)?;
        let shown = &target.display;
        if command == "create" {
            if target.kind != EntryKind::Missing {
                return Err(Failure::Raised(format!(
                    "File already exists at: {shown}. Cannot overwrite with 'create'."
                )));
            }
        } else if target.kind == EntryKind::Missing {
            return Err(Failure::Raised(format!(
                "The path '{shown}' does not exist."
            )));
        }
        if target.kind == EntryKind::Dir && command != "view" {
            return Err(Failure::Raised(format!(
                "The path '{shown}' is a directory. Only 'view' can be used on directories."
            )));
        }
        match command.as_str() {
            "view" => {
                let range = args::line_range(call, "view_range").map_err(|raw| {
                    Failure::Raised(format!(
                        "Invalid view_range '{raw}': expected two integers such as [11, 12] (use -1 as the end to view until the end of the file)."
                    ))
                })?;
                let concise = args::flag(call, "concise").unwrap_or(false);
                view::view(fs, config, &target, range, concise)
            }
            "create" => edit::create(
                fs,
                config,
                &mut self.history,
                &target,
                args::text(call, "file_text"),
            ),
            "str_replace" => edit::str_replace(
                fs,
                config,
                &mut self.history,
                &target,
                args::text(call, "old_str"),
                args::text(call, "new_str"),
            ),
            "insert" => edit::insert(
                fs,
                config,
                &mut self.history,
                &target,
                args::integer(call, "insert_line"),
                args::text(call, "new_str"),
            ),
            "undo_edit" => edit::undo(fs, config, &mut self.history, &target),
            other => Err(Failure::Raised(format!(
                "Unrecognized command '{other}'. Allowed commands: view, create, str_replace, insert, undo_edit."
            ))),
        }
    }
}

/// What the script prints for a command's result (see the module docs).
fn print(result: Result<String, Failure>) -> EditorOutput {
    match result {
        Ok(output) => EditorOutput {
            output: output + "\n",
            is_error: false,
        },
        Err(Failure::Raised(text)) => EditorOutput {
            output: format!("ERROR: {text}\n"),
            is_error: true,
        },
        Err(Failure::Reported(text)) => EditorOutput {
            output: format!("\nERROR: {text}\n"),
            is_error: true,
        },
    }
}

/// Why a `file_editor` edit (`create`, `str_replace`, `insert`) failed, for edit metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditFailure {
    /// The call itself was malformed: a required argument missing, a bad `insert_line`.
    Format,
    /// `old_str` occurred nowhere or more than once.
    Match,
    /// Anything else: a missing path, an existing file for `create`, a refused command,
    /// an unreadable file.
    Other,
}

/// Error texts of malformed edit calls, after `ERROR: `.
const FORMAT_ERRORS: [&str; 5] = [
    "Missing required parameter ",
    "Invalid insert_line ",
    "Cannot create file without 'file_text' parameter.",
    "Unrecognized command ",
    "Invalid view_range ",
];

/// Error texts of `str_replace`'s matching, after `ERROR: `.
const MATCH_ERRORS: [&str; 2] = ["No occurrences of '", "Multiple occurrences of '"];

/// How a `file_editor` call that printed `output` failed, or `None` when it succeeded.
/// Reads the texts this module prints (see [`EditFailure`]).
pub fn edit_failure(output: &str) -> Option<EditFailure> {
    let error = output
        .strip_prefix("ERROR: ")
        .or_else(|| output.strip_prefix("\nERROR: "))?;
    let starts = |texts: &[&str]| texts.iter().any(|text| error.starts_with(text));
    Some(if starts(&MATCH_ERRORS) {
        EditFailure::Match
    } else if starts(&FORMAT_ERRORS) {
        EditFailure::Format
    } else {
        EditFailure::Other
    })
}

/// Lists a resolved directory exactly as `file_editor view` does (the directory and two
/// levels below it, hidden entries skipped), for other tools that show directories the
/// native way (swerve-edit's `llm_editor`). `Ok` holds the printed listing, `Err` the printed
/// error.
pub fn list_directory(
    fs: &WorkspaceFs,
    config: &ToolConfig,
    dir: &Resolved,
) -> Result<String, String> {
    let printed = print(view::view(fs, config, dir, None, false));
    match printed.is_error {
        false => Ok(printed.output),
        true => Err(printed.output),
    }
}

/// Loads a resolved regular file as text under the configured size cap.
fn read(fs: &WorkspaceFs, config: &ToolConfig, target: &Resolved) -> Result<String, Failure> {
    if target.kind != EntryKind::File {
        return Err(Failure::Raised(format!(
            "The path '{}' is not a regular file.",
            target.display
        )));
    }
    Ok(fs.read_text(target, config.max_file_bytes)?)
}

/// R2E-Gym's `_make_output`: the content clipped, tabs expanded, lines numbered
/// `{n:6}\t{line}` from `first_line`, under a `cat -n` header, ending in a newline.
fn numbered(content: &str, descriptor: &str, first_line: usize, config: &ToolConfig) -> String {
    use std::fmt::Write;
    let clipped = expand_tabs(&clip(content.to_owned(), config.max_response_len));
    let mut out = format!("Here's the result of running `cat -n` on {descriptor}:\n");
    for (index, line) in clipped.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:6}\t{line}", index + first_line);
    }
    out.push('\n');
    out
}
