//! SWE-agent's agent-computer interface (the 0.x `defaults.sh`, `search.sh` and `edit.sh`
//! commands), the scaffold of the long-context RL seed (§3.3, App. F): a file viewer with a
//! 100-line window (`open`, `goto`, `scroll_up`, `scroll_down`, `create`), search
//! (`search_dir`, `search_file`, `find_file`), `edit` replacing a line range, and `submit`.
//! Any other command runs in the shell. Calls come from [`crate::formats::FencedFormat`]:
//! the tool name is the command's first word and `command` is the whole command text.
//!
//! Differences from SWE-agent: `edit` does not run a linter (SWE-agent's `edit_linting.sh`
//! reverts edits that flake8 flags); `edit` may name its file (`edit PATH START:END`), as
//! the seed describes; each command runs in a fresh shell at the repository root, so `cd`
//! does not carry over to the next command (chain commands with `&&`).

use std::time::Duration;

use serde_json::{Value, json};
use swerve_core::{Shell, ToolCall};

use crate::config::ToolConfig;
use crate::fs::{EntryKind, WorkspaceFs};

/// SWE-agent's window height (`WINDOW`).
const WINDOW: usize = 100;
/// Lines kept between two scrolled windows (`OVERLAP`).
const OVERLAP: usize = 2;
/// More files (or lines) than this and a search asks to be narrowed.
const MAX_MATCHES: usize = 100;

/// The special commands, in SWE-agent's documentation order.
pub const COMMANDS: [&str; 10] = [
    "open",
    "goto",
    "scroll_down",
    "scroll_up",
    "create",
    "search_dir",
    "search_file",
    "find_file",
    "edit",
    "submit",
];

/// `(name, signature, docstring)` of each special command, SWE-agent's texts.
const DOCS: [(&str, &str, &str); 10] = [
    (
        "open",
        "open <path> [<line_number>]",
        "opens the file at the given path in the editor. If line_number is provided, the window will be move to include that line",
    ),
    (
        "goto",
        "goto <line_number>",
        "moves the window to show <line_number>",
    ),
    (
        "scroll_down",
        "scroll_down",
        "moves the window down 100 lines",
    ),
    ("scroll_up", "scroll_up", "moves the window up 100 lines"),
    (
        "create",
        "create <filename>",
        "creates and opens a new file with the given name",
    ),
    (
        "search_dir",
        "search_dir <search_term> [<dir>]",
        "searches for search_term in all files in dir. If dir is not provided, searches in the current directory",
    ),
    (
        "search_file",
        "search_file <search_term> [<file>]",
        "searches for search_term in file. If file is not provided, searches in the current open file",
    ),
    (
        "find_file",
        "find_file <file_name> [<dir>]",
        "finds all files with the given name in dir. If dir is not provided, searches in the current directory",
    ),
    (
        "edit",
        "edit [<path>] <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
        "replaces lines <start_line> through <end_line> (inclusive) with the given text in the open file (or in <path>, which is opened). The replacement text is terminated by a line with only end_of_edit on it. All of the <replacement text> will be entered, so make sure your indentation is formatted properly. Python files will not be checked for syntax errors after the edit.",
    ),
    (
        "submit",
        "submit",
        "submits your current code and terminates the session",
    ),
];

/// The schemas of the SWE-agent toolset: one function per special command (its SWE-agent
/// signature under `x-signature`), then `execute_bash` for any other command. Each takes
/// the whole command text as `command`.
pub fn specs() -> Vec<Value> {
    let parameters = json!({
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The whole command text."}},
        "required": ["command"],
    });
    DOCS.iter()
        .map(|(name, signature, docstring)| {
            json!({
                "type": "function",
                "function": {
                    "name": name,
                    "description": docstring,
                    "x-signature": signature,
                    "parameters": parameters,
                }
            })
        })
        .chain([json!({
            "type": "function",
            "function": {
                "name": "execute_bash",
                "description": "any other shell command (ls, cat, grep, python, …); interactive programs are not supported",
                "x-signature": "<command>",
                "parameters": parameters,
            }
        })])
        .collect()
}

/// The editor state SWE-agent keeps in `CURRENT_FILE` and `CURRENT_LINE`.
#[derive(Debug, Clone, Default)]
pub struct SweAgentState {
    /// The open file (sandbox path).
    open: Option<String>,
    /// The window's centre line (1-based).
    line: usize,
}

/// What a special command printed.
pub(crate) struct CommandOutput {
    pub output: String,
    pub is_error: bool,
}

fn ok(output: String) -> CommandOutput {
    CommandOutput {
        output,
        is_error: false,
    }
}

fn error(output: impl Into<String>) -> CommandOutput {
    CommandOutput {
        output: output.into(),
        is_error: true,
    }
}

/// The words of a command's first line, with `"…"` and `'…'` quoting.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            None => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// `text` quoted for `sh`.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

impl SweAgentState {
    /// The open file, as the observation's `(Open file: …)` shows it.
    pub fn open_file(&self) -> &str {
        self.open.as_deref().unwrap_or("n/a")
    }

    /// Runs the special command `call.name` (one of [`COMMANDS`] except `submit`).
    pub(crate) fn run(
        &mut self,
        fs: &WorkspaceFs,
        shell: &dyn Shell,
        config: &ToolConfig,
        call: &ToolCall,
    ) -> CommandOutput {
        let text = call
            .arguments
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or(call.name.as_str());
        let (first, body) = text.split_once('\n').unwrap_or((text, ""));
        let args = words(first);
        let args: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
        let timeout = Duration::from_secs(config.bash_timeout_secs);
        match call.name.as_str() {
            "open" => self.open(fs, config, &args),
            "goto" => self.goto(fs, config, &args),
            "scroll_down" => self.scroll(fs, config, true),
            "scroll_up" => self.scroll(fs, config, false),
            "create" => self.create(fs, config, &args),
            "search_dir" => search_dir(shell, timeout, &args),
            "search_file" => match (args.first(), args.get(1).copied().or(self.open.as_deref())) {
                (None, _) => error("Usage: search_file <search_term> [<file>]"),
                (Some(_), None) => error("No file open. Use the open command first."),
                (Some(term), Some(file)) => search_file(shell, timeout, term, file),
            },
            "find_file" => find_file(shell, timeout, &args),
            "edit" => self.edit(fs, config, &args, body),
            other => error(format!("{other} is not a SWE-agent command")),
        }
    }

    fn read(
        &self,
        fs: &WorkspaceFs,
        config: &ToolConfig,
        path: &str,
    ) -> Result<Vec<String>, String> {
        let resolved = fs.resolve(path).map_err(|err| err.to_string())?;
        let text = fs
            .read_text(&resolved, config.max_file_bytes)
            .map_err(|err| err.to_string())?;
        Ok(text.lines().map(str::to_owned).collect())
    }

    fn open(&mut self, fs: &WorkspaceFs, config: &ToolConfig, args: &[&str]) -> CommandOutput {
        let Some(&path) = args.first() else {
            return error("Usage: open \"<file>\"");
        };
        let resolved = match fs.resolve(path) {
            Ok(resolved) => resolved,
            Err(err) => return error(err.to_string()),
        };
        match resolved.kind {
            EntryKind::Dir => {
                return error(format!(
                    "Error: {path} is a directory. You can only open files. Use cd or ls to navigate directories."
                ));
            }
            EntryKind::Missing => return error(format!("File {path} not found")),
            _ => {}
        }
        let lines = match self.read(fs, config, path) {
            Ok(lines) => lines,
            Err(message) => return error(message),
        };
        let mut warning = String::new();
        let line = match args.get(1) {
            None => WINDOW / 2,
            Some(number) => match number.parse::<i64>() {
                Err(_) => {
                    return error(
                        "Usage: open \"<file>\" [<line_number>]\nError: <line_number> must be a number",
                    );
                }
                Ok(number) => {
                    let max = lines.len().max(1) as i64;
                    let number = if number > max {
                        warning = format!(
                            "Warning: <line_number> ({number}) is greater than the number of lines in the file ({max})\nWarning: Setting <line_number> to {max}\n"
                        );
                        max
                    } else if number < 1 {
                        warning = format!(
                            "Warning: <line_number> ({number}) is less than 1\nWarning: Setting <line_number> to 1\n"
                        );
                        1
                    } else {
                        number
                    };
                    centre_for(number as usize)
                }
            },
        };
        self.open = Some(resolved.sandbox);
        self.line = line;
        ok(format!("{warning}{}", self.print(&lines)))
    }

    fn goto(&mut self, fs: &WorkspaceFs, config: &ToolConfig, args: &[&str]) -> CommandOutput {
        let Some(path) = self.open.clone() else {
            return error("No file open. Use the open command first.");
        };
        let Some(number) = args.first().and_then(|number| number.parse::<usize>().ok()) else {
            return error("Usage: goto <line>\nError: <line> must be a number");
        };
        let lines = match self.read(fs, config, &path) {
            Ok(lines) => lines,
            Err(message) => return error(message),
        };
        if number > lines.len() {
            return error(format!(
                "Error: <line> must be less than or equal to {}",
                lines.len()
            ));
        }
        self.line = centre_for(number);
        ok(self.print(&lines))
    }

    fn scroll(&mut self, fs: &WorkspaceFs, config: &ToolConfig, down: bool) -> CommandOutput {
        let Some(path) = self.open.clone() else {
            return error("No file open. Use the open command first.");
        };
        let lines = match self.read(fs, config, &path) {
            Ok(lines) => lines,
            Err(message) => return error(message),
        };
        self.line = if down {
            self.line + (WINDOW - OVERLAP)
        } else {
            self.line.saturating_sub(WINDOW - OVERLAP)
        };
        ok(self.print(&lines))
    }

    fn create(&mut self, fs: &WorkspaceFs, config: &ToolConfig, args: &[&str]) -> CommandOutput {
        let Some(&path) = args.first() else {
            return error("Usage: create <filename>");
        };
        let resolved = match fs.resolve(path) {
            Ok(resolved) => resolved,
            Err(err) => return error(err.to_string()),
        };
        if resolved.kind != EntryKind::Missing {
            let mut opened = self.open(fs, config, &[path]);
            opened.output = format!("Error: File '{path}' already exists.\n{}", opened.output);
            opened.is_error = true;
            return opened;
        }
        if let Err(err) = fs.write(&resolved, b"\n") {
            return error(err.to_string());
        }
        self.open(fs, config, &[path])
    }

    fn edit(
        &mut self,
        fs: &WorkspaceFs,
        config: &ToolConfig,
        args: &[&str],
        body: &str,
    ) -> CommandOutput {
        let usage = "Usage: edit [<path>] <start_line>:<end_line>\n<replacement_text>\nend_of_edit";
        let (path, range) = match args {
            [range] => (None, *range),
            [path, range] => (Some(*path), *range),
            _ => return error(usage),
        };
        let Some((start, end)) = range.split_once(':') else {
            return error(usage);
        };
        let Ok(start) = start.parse::<usize>() else {
            return error("Error: start_line must be a number");
        };
        let Ok(end) = end.parse::<usize>() else {
            return error("Error: end_line must be a number");
        };
        let mut body_lines: Vec<&str> = body.split('\n').collect();
        let Some(terminator) = body_lines
            .iter()
            .rposition(|line| line.trim_end() == "end_of_edit")
        else {
            return error(format!(
                "Error: the replacement text must end with a line holding only end_of_edit.\n{usage}"
            ));
        };
        body_lines.truncate(terminator);
        if let Some(path) = path {
            let opened = self.open(fs, config, &[path]);
            if opened.is_error {
                return opened;
            }
        }
        let Some(file) = self.open.clone() else {
            return error("No file open. Use the `open` command first.");
        };
        let mut lines = match self.read(fs, config, &file) {
            Ok(lines) => lines,
            Err(message) => return error(message),
        };
        if start == 0 || start > lines.len() + 1 || end + 1 < start || end > lines.len() {
            return error(format!(
                "Error: the range {start}:{end} is not within the file's {} lines (line numbers start at 1; use <start_line> - 1 as <end_line> to insert before <start_line>).",
                lines.len()
            ));
        }
        lines.splice(
            start - 1..end,
            body_lines.iter().map(|line| (*line).to_owned()),
        );
        let mut text = lines.join("\n");
        text.push('\n');
        let resolved = match fs.resolve(&file) {
            Ok(resolved) => resolved,
            Err(err) => return error(err.to_string()),
        };
        if let Err(err) = fs.write(&resolved, text.as_bytes()) {
            return error(err.to_string());
        }
        self.line = start;
        ok(format!(
            "{}File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
            self.print(&lines)
        ))
    }

    /// SWE-agent's `_constrain_line` then `_print`: the window around the current line.
    fn print(&mut self, lines: &[String]) -> String {
        let total = lines.len();
        let half = WINDOW / 2;
        self.line = self.line.min(total.saturating_sub(half)).max(half);
        let mut out = format!("[File: {} ({total} lines total)]\n", self.open_file());
        let above = self.line.saturating_sub(half);
        if above > 0 {
            out.push_str(&format!("({above} more lines above)\n"));
        }
        let last = (self.line + half).max(half).min(total);
        let first = last.saturating_sub(WINDOW);
        for (index, line) in lines.iter().enumerate().take(last).skip(first) {
            out.push_str(&format!("{}:{line}\n", index + 1));
        }
        let below = total.saturating_sub(self.line + half);
        if below > 0 {
            out.push_str(&format!("({below} more lines below)\n"));
        }
        out
    }
}

/// The window centre that shows `line` a sixth of a window from the top (SWE-agent's
/// `open`/`goto`: `max(line + WINDOW/2 - WINDOW/6, 1)`).
fn centre_for(line: usize) -> usize {
    (line + WINDOW / 2).saturating_sub(WINDOW / 6).max(1)
}

fn shell_output(
    shell: &dyn Shell,
    timeout: Duration,
    script: &str,
) -> Result<String, CommandOutput> {
    match shell.run(script, timeout) {
        Ok(outcome) if outcome.timed_out => Err(error(format!(
            "The command took too long to execute (>{}s)",
            timeout.as_secs()
        ))),
        Ok(outcome) => Ok(outcome.stdout_text()),
        Err(err) => Err(error(format!("Error: {err}"))),
    }
}

fn search_dir(shell: &dyn Shell, timeout: Duration, args: &[&str]) -> CommandOutput {
    let Some(&term) = args.first() else {
        return error("Usage: search_dir <search_term> [<dir>]");
    };
    let dir = args.get(1).copied().unwrap_or("./");
    let script = format!(
        "find {dir} -type f ! -path '*/.*' -exec grep -nIH -- {term} {{}} + | cut -d: -f1 | sort | uniq -c",
        dir = quoted(dir),
        term = quoted(term)
    );
    let matches = match shell_output(shell, timeout, &script) {
        Ok(matches) => matches,
        Err(failed) => return failed,
    };
    let counts: Vec<(usize, String)> = matches
        .lines()
        .filter_map(|line| {
            let (count, file) = line.trim().split_once(' ')?;
            let file = file.trim();
            let file = match file.trim_start_matches('.').strip_prefix('/') {
                Some(rest) if file.starts_with('.') => {
                    format!("./{}", rest.trim_start_matches('/'))
                }
                _ => file.to_owned(),
            };
            Some((count.parse().ok()?, file))
        })
        .collect();
    if counts.is_empty() {
        return ok(format!("No matches found for \"{term}\" in {dir}\n"));
    }
    if counts.len() > MAX_MATCHES {
        return ok(format!(
            "More than {} files matched for \"{term}\" in {dir}. Please narrow your search.\n",
            counts.len()
        ));
    }
    let total: usize = counts.iter().map(|(count, _)| count).sum();
    let mut out = format!("Found {total} matches for \"{term}\" in {dir}:\n");
    for (count, file) in &counts {
        out.push_str(&format!("{file} ({count} matches)\n"));
    }
    out.push_str(&format!("End of matches for \"{term}\" in {dir}\n"));
    ok(out)
}

fn search_file(shell: &dyn Shell, timeout: Duration, term: &str, file: &str) -> CommandOutput {
    let script = format!("grep -n -- {} {}", quoted(term), quoted(file));
    let matches = match shell_output(shell, timeout, &script) {
        Ok(matches) => matches,
        Err(failed) => return failed,
    };
    let hits: Vec<(usize, &str)> = matches
        .lines()
        .filter_map(|line| {
            let (number, text) = line.split_once(':')?;
            Some((number.parse().ok()?, text))
        })
        .collect();
    if hits.is_empty() {
        return ok(format!("No matches found for \"{term}\" in {file}\n"));
    }
    if hits.len() > MAX_MATCHES {
        return ok(format!(
            "More than {} lines matched for \"{term}\" in {file}. Please narrow your search.\n",
            hits.len()
        ));
    }
    let mut out = format!("Found {} matches for \"{term}\" in {file}:\n", hits.len());
    for (number, text) in &hits {
        out.push_str(&format!("Line {number}:{text}\n"));
    }
    out.push_str(&format!("End of matches for \"{term}\" in {file}\n"));
    ok(out)
}

fn find_file(shell: &dyn Shell, timeout: Duration, args: &[&str]) -> CommandOutput {
    let Some(&name) = args.first() else {
        return error("Usage: find_file <file_name> [<dir>]");
    };
    let dir = args.get(1).copied().unwrap_or("./");
    let script = format!("find {} -type f -name {}", quoted(dir), quoted(name));
    let matches = match shell_output(shell, timeout, &script) {
        Ok(matches) => matches,
        Err(failed) => return failed,
    };
    let found: Vec<&str> = matches.lines().filter(|line| !line.is_empty()).collect();
    if found.is_empty() {
        return ok(format!("No matches found for \"{name}\" in {dir}\n"));
    }
    let mut out = format!("Found {} matches for \"{name}\" in {dir}:\n", found.len());
    for path in found {
        out.push_str(path);
        out.push('\n');
    }
    ok(out)
}

/// SWE-agent's observation: the output (or its no-output note), then the prompt lines.
pub fn render_observation(output: &str, open_file: &str) -> String {
    let output = if output.trim().is_empty() {
        "Your command ran successfully and did not produce any output."
    } else {
        output.trim_end_matches('\n')
    };
    format!("{output}\n(Open file: {open_file})\n(Current directory: /testbed)\nbash-$")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_shell_quoting() {
        assert_eq!(words("open \"a b.py\" 3"), ["open", "a b.py", "3"]);
        assert_eq!(
            words("search_dir 'def f(' src"),
            ["search_dir", "def f(", "src"]
        );
        assert_eq!(words("submit"), ["submit"]);
    }

    #[test]
    fn windows_follow_swe_agents_arithmetic() {
        // open FILE 120 in a 300-line file: centre max(120 + 50 - 16, 1) = 154, so lines
        // 105..=204 are shown with 104 above and 96 below.
        let lines: Vec<String> = (1..=300).map(|n| format!("l{n}")).collect();
        let mut state = SweAgentState {
            open: Some("/testbed/f.py".into()),
            line: centre_for(120),
        };
        let shown = state.print(&lines);
        assert!(shown.starts_with(
            "[File: /testbed/f.py (300 lines total)]\n(104 more lines above)\n105:l105\n"
        ));
        assert!(shown.ends_with("204:l204\n(96 more lines below)\n"));
        // A short file shows whole, with no above/below notes.
        let short: Vec<String> = (1..=3).map(|n| format!("s{n}")).collect();
        state.line = centre_for(2);
        assert_eq!(
            state.print(&short),
            "[File: /testbed/f.py (3 lines total)]\n1:s1\n2:s2\n3:s3\n"
        );
    }
}
