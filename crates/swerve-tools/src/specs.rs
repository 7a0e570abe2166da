//! Tool schemas in OpenAI function-calling form (`{"type": "function", "function":
//! {"name", "description", "parameters"}}`), with R2E-Gym's names, descriptions and
//! parameters (`src/r2egym/agenthub/tools/__init__.py`: `file_editor`, `search`,
//! `r2egym_bash_execute_tool`, `finish_tool`). The extra arguments swerve accepts
//! (`search`'s `regex` and `python_only`, `execute_bash`'s second spelling) are left out so
//! the schemas stay the ones R2E-Gym-trained models saw.

use serde_json::{Value, json};

use crate::config::{FileEditorCommand, ToolConfig};

const FILE_EDITOR_DESCRIPTION: &str = "Custom editing tool for viewing, creating and editing files
* State is persistent across command calls and discussions with the user
* If `path` is a file, `view` displays the result of applying `cat -n`. If `path` is a directory, `view` lists non-hidden files and directories up to 2 levels deep
* The `create` command cannot be used if the specified `path` already exists as a file
* If a `command` generates a long output, it will be truncated and marked with `<response clipped>`
* The `undo_edit` command will revert the last edit made to the file at `path`

Notes for using the `str_replace` command:
* The `old_str` parameter should match EXACTLY one or more consecutive lines from the original file. Be mindful of whitespaces!
* If the `old_str` parameter is not unique in the file, the replacement will not be performed. Make sure to include enough context in `old_str` to make it unique
* The `new_str` parameter should contain the edited lines that should replace the `old_str`
";

const SEARCH_DESCRIPTION: &str = "
Description: Search for a term in either a directory or a single file.

Behavior:
* If `--path` points to a directory (default is `.`), we recursively search all non-hidden files and directories.
* If `--path` points to a file, we run `grep -n` on that file to find line numbers containing the search term.
* If more than 100 files match (directory search scenario), the tool will stop listing and inform you to narrow your search.
* If no files are found that match your search term, the tool will inform you of that as well.

**Parameters:**
  1. **search_term** (`string`, required): The term to search for in files.
  2. **path** (`string`, optional): The file or directory in which to search. If not provided, defaults to the current directory (i.e., `.`).
";

const EXECUTE_BASH_DESCRIPTION: &str = "
Description: Execute a bash command in the terminal.

Parameters:
  (1) command (string, required): The bash command to execute. For example: `python my_script.py`
";

// The Python source is a triple-quoted string holding quoted lines with `\n` escapes, so
// the description really contains those quotes.
const FINISH_DESCRIPTION: &str = concat!(
    "\n",
    "\"A simple finish tool with a 'submit' command.\n\n\"\n",
    "\"Notes about the `submit` command:\n\"\n",
    "\"* When invoked with `--result`, the provided string is used for submitting required task results.\n\"\n",
    "\"* If no `--result` is provided, it defaults to an empty string.\n\n\"\n",
    "\"**Parameters:**\n\"\n",
    "\"  1. **command** (`string`, required): The command to run. Currently allowed option is: `submit`.\n\"\n",
    "\"     - Allowed value: [`submit`]\n\"\n",
    "\"  2. **result** (`string`, optional): The result text to submit. Defaults to an empty string.\n\"\n",
);

fn function(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
        }
    })
}

/// The description of `file_editor` offering `commands`: R2E-Gym's text, without the
/// lines about commands that are not offered.
fn file_editor_description(commands: &[FileEditorCommand]) -> String {
    let offered = |command: FileEditorCommand| commands.contains(&command);
    let mut in_str_replace_notes = false;
    let mut description = String::new();
    for line in FILE_EDITOR_DESCRIPTION.split_inclusive('\n') {
        in_str_replace_notes |= line.starts_with("Notes for using the `str_replace`");
        let about = if in_str_replace_notes {
            Some(FileEditorCommand::StrReplace)
        } else {
            FileEditorCommand::ALL
                .into_iter()
                .find(|command| line.contains(&format!("`{}`", command.name())))
        };
        if about.is_none_or(offered) {
            description.push_str(line);
        }
    }
    description
}

/// The schemas of `file_editor` (unless [`ToolConfig::file_editor_commands`] is empty),
/// `search`, `execute_bash` and `finish`, in that order. `file_editor`'s `command` lists
/// the offered commands; `execute_bash`'s argument is named after
/// [`ToolConfig::bash_param`].
///
/// With [`crate::config::Toolset::SweAgent`], SWE-agent's commands instead
/// ([`crate::swe_agent::specs`]); tools in [`ToolConfig::rename`] carry their new names.
pub fn tool_specs(config: &ToolConfig) -> Vec<Value> {
    if config.toolset == crate::config::Toolset::SweAgent {
        return crate::swe_agent::specs();
    }
    let mut specs = r2e_gym_specs(config);
    for spec in &mut specs {
        let native = spec["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let offered = config.offered_name(&native);
        if offered != native {
            spec["function"]["name"] = Value::String(offered.to_owned());
        }
    }
    specs
}

fn r2e_gym_specs(config: &ToolConfig) -> Vec<Value> {
    let commands: Vec<&str> = config
        .file_editor_commands
        .iter()
        .map(|command| command.name())
        .collect();
    let listed: Vec<String> = commands.iter().map(|name| format!("`{name}`")).collect();
    let file_editor = json!({
        "type": "object",
        "properties": {
            "command": {
                "description": format!("The command to run. Allowed options are: {}.", listed.join(", ")),
                "enum": commands,
                "type": "string",
            },
            "path": {
                "description": "Absolute path to file or directory, e.g. `/testbed/file.py` or `/testbed`.",
                "type": "string",
            },
            "file_text": {
                "description": "Required for the `create` command, contains the content of the file to be created.",
                "type": "string",
            },
            "old_str": {
                "description": "Required for the `str_replace` command, specifies the string in `path` to replace.",
                "type": "string",
            },
            "new_str": {
                "description": "Optional for the `str_replace` command to specify the replacement string. Required for the `insert` command to specify the string to insert.",
                "type": "string",
            },
            "insert_line": {
                "description": "Required for the `insert` command. The `new_str` will be inserted AFTER the line specified.",
                "type": "integer",
            },
            "view_range": {
                "description": "Optional for the `view` command when `path` points to a file. Specifies the line range to view. E.g., [11, 12] shows lines 11 and 12. Indexing starts at 1. Use [start_line, -1] to show all lines from `start_line` to the end.",
                "type": "array",
                "items": {"type": "integer"},
            },
            "concise": {
                "description": "Optional for the `view` command. If `True`, displays a concise skeletal view of the file. Very useful for localization tasks. Highly recommended for large files.",
                "type": "boolean",
            },
        },
        "required": ["command", "path"],
    });
    let search = json!({
        "type": "object",
        "properties": {
            "search_term": {
                "description": "The term to search for in files.",
                "type": "string",
            },
            "path": {
                "description": "The file or directory to search in. Defaults to `.` if not specified.",
                "type": "string",
            },
        },
        "required": ["search_term"],
    });
    let bash_param = config.bash_param.as_str();
    let execute_bash = json!({
        "type": "object",
        "properties": {
            bash_param: {
                "type": "string",
                "description": "The command (and optional arguments) to execute. For example: 'python my_script.py'",
            }
        },
        "required": [bash_param],
    });
    let finish = json!({
        "type": "object",
        "properties": {
            "command": {
                "description": "The command to run. Currently only `submit` is supported.",
                "type": "string",
                "enum": ["submit"],
            },
            "result": {
                "description": "Optional. The result text to submit. Defaults to an empty string if not provided.",
                "type": "string",
            },
        },
        "required": ["command"],
    });
    let file_editor = config.offers_file_editor().then(|| {
        function(
            "file_editor",
            &file_editor_description(&config.file_editor_commands),
            file_editor,
        )
    });
    file_editor
        .into_iter()
        .chain([
            function("search", SEARCH_DESCRIPTION, search),
            function("execute_bash", EXECUTE_BASH_DESCRIPTION, execute_bash),
            function("finish", FINISH_DESCRIPTION, finish),
        ])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_editor(config: &ToolConfig) -> Option<Value> {
        tool_specs(config)
            .into_iter()
            .find(|spec| spec["function"]["name"] == "file_editor")
    }

    #[test]
    fn every_command_keeps_r2e_gyms_text() {
        let spec = file_editor(&ToolConfig::default()).unwrap();
        assert_eq!(spec["function"]["description"], FILE_EDITOR_DESCRIPTION);
        assert_eq!(
            spec["function"]["parameters"]["properties"]["command"]["enum"],
            json!(["view", "create", "str_replace", "insert", "undo_edit"])
        );
    }

    #[test]
    fn only_the_offered_commands_are_described_and_listed() {
        let config = ToolConfig {
            file_editor_commands: vec![FileEditorCommand::View],
            ..ToolConfig::default()
        };
        let spec = file_editor(&config).unwrap();
        let command = &spec["function"]["parameters"]["properties"]["command"];
        assert_eq!(command["enum"], json!(["view"]));
        assert_eq!(
            command["description"],
            "The command to run. Allowed options are: `view`."
        );
        let description = spec["function"]["description"].as_str().unwrap();
        assert!(description.contains("`view` displays the result of applying `cat -n`"));
        for gone in ["str_replace", "old_str", "undo_edit", "`create`"] {
            assert!(!description.contains(gone), "{gone}: {description}");
        }
        let config = ToolConfig {
            file_editor_commands: Vec::new(),
            ..ToolConfig::default()
        };
        assert!(file_editor(&config).is_none());
        assert_eq!(tool_specs(&config).len(), 3);
    }

    #[test]
    fn renamed_tools_are_offered_under_their_new_names() {
        let mut config = ToolConfig::default();
        config
            .rename
            .insert("file_editor".into(), "str_replace_editor".into());
        config.rename.insert("finish".into(), "submit".into());
        config.validate().unwrap();
        let names: Vec<Value> = tool_specs(&config)
            .iter()
            .map(|spec| spec["function"]["name"].clone())
            .collect();
        assert_eq!(
            names,
            json!(["str_replace_editor", "search", "execute_bash", "submit"])
                .as_array()
                .unwrap()
                .clone()
        );
        assert_eq!(config.native_name("str_replace_editor"), "file_editor");
        assert_eq!(config.native_name("execute_bash"), "execute_bash");
        for (key, name, message) in [
            ("execute_bash", "bash", "tools.rename.execute_bash: only"),
            ("search", "execute_bash", "already the name of another tool"),
            ("finish", "sub mit", "not a plain tool name"),
        ] {
            let mut bad = ToolConfig::default();
            bad.rename.insert(key.into(), name.into());
            let error = bad.validate().unwrap_err();
            assert!(error.contains(message), "{error}");
        }
    }
}
