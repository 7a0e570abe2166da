//! [`FencedFormat`]: SWE-agent's thought-action format, the long-context RL seed's scaffold
//! (§3.3, App. E–F): a discussion, then exactly one command in a fenced code block.
//!
//! Blocks are found as SWE-agent's `ThoughtActionParser` finds them: a fence line with a
//! language opens a (nested) block, a bare fence line closes the innermost open one or
//! opens a block at the top level. Unlike SWE-agent, which takes the last block, several
//! differing top-level blocks are an error ("multiple commands in a single turn", App. E),
//! and no block is "command not extractable". Calls drafted before `</think>` are ignored.
//!
//! The call's tool is the command's first word when it is one of SWE-agent's special
//! commands ([`crate::swe_agent::COMMANDS`]), else `execute_bash`; its `command` argument is
//! the whole block. Use it with `tools.toolset = "swe_agent"`.

use serde_json::Value;
use swerve_core::ToolCall;

use super::error::{CallSyntax, FormatError};
use super::scan::Pick;
use super::scan::{Block, call_region_start, join_thought, parse_text_reply};
use super::{AssistantMessage, ModelOutput, ParsedResponse, Rendered, ResultMessage, ToolFormat};

/// SWE-agent's response-format instructions (its 0.x default system template).
const INSTRUCTIONS: &str = "Please note that THE EDIT COMMAND REQUIRES PROPER INDENTATION.
If you'd like to add the line '        print(x)' you must fully write that out, with all those spaces before the code! Indentation is important and code that is not indented correctly will fail and require fixing before it can be run.

RESPONSE FORMAT:
Your shell prompt is formatted as follows:
(Open file: <path>) <cwd> $

You need to format your output using two fields; discussion and command.
Your output should always include _one_ discussion and _one_ command field EXACTLY as in the following example:
DISCUSSION
First I'll start by using ls to see what files are in the current directory. Then maybe we can look at some relevant files to see what they look like.
```
ls -a
```

You should only include a *SINGLE* command in the command section and then wait for a response from the shell before continuing with more discussion and commands. Everything you include in the DISCUSSION section will be saved for future reference.
If you'd like to issue two commands at once, PLEASE DO NOT DO THAT! Please instead first submit just the first command, and then after receiving a response you'll be able to issue the second command.
You're free to use any other bash commands you want (e.g. find, grep, cat, ls, cd) in addition to the special commands listed above.
However, the environment does NOT support interactive session commands (e.g. python, vim), so please do not invoke them.";

/// SWE-agent's fenced thought-action format (`fenced`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FencedFormat;

impl ToolFormat for FencedFormat {
    fn name(&self) -> &'static str {
        "fenced"
    }

    /// `COMMANDS:` with each tool's signature and docstring (SWE-agent's command docs), then
    /// the response format.
    fn render(&self, tools: &[Value]) -> Rendered {
        let mut docs = String::from("COMMANDS:\n");
        for tool in tools {
            let function = tool.get("function").unwrap_or(tool);
            let name = function["name"].as_str().unwrap_or_default();
            let signature = function["x-signature"].as_str().unwrap_or(name);
            let description = function["description"].as_str().unwrap_or_default().trim();
            docs.push_str(&format!(
                "{name}:\n  docstring: {description}\n  signature: {signature}\n\n"
            ));
        }
        docs.push_str(INSTRUCTIONS);
        Rendered {
            system_text: Some(docs),
            tools: None,
        }
    }

    fn parse(&self, output: &ModelOutput) -> Result<ParsedResponse, FormatError> {
        let mut parsed = parse_text_reply(output, CallSyntax::Fenced, Pick::First, scan_blocks)?;
        if let Some(thought) = parsed.thought.strip_prefix("DISCUSSION") {
            parsed.thought = thought.trim().to_owned();
        }
        Ok(parsed)
    }

    /// The thought, a blank line and the command in a bare fence.
    fn render_call(&self, thought: &str, call: &ToolCall, _id: Option<&str>) -> AssistantMessage {
        let command = call
            .arguments
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or(call.name.as_str());
        AssistantMessage {
            content: join_thought(thought, "\n\n", &format!("```\n{command}\n```")),
            tool_calls: Vec::new(),
        }
    }

    fn render_result(&self, observation: &str, _call_id: Option<&str>) -> ResultMessage {
        ResultMessage::user(observation)
    }
}

/// The call of one command text.
pub fn command_call(command: &str) -> ToolCall {
    let word = command.split_whitespace().next().unwrap_or_default();
    let name = if crate::swe_agent::COMMANDS.contains(&word) {
        word
    } else {
        "execute_bash"
    };
    ToolCall::new(name).arg("command", command)
}

/// A fence line: three backticks and an optional language (`Some(language)`).
fn fence(line: &str) -> Option<&str> {
    let rest = line.trim_end().strip_prefix("```")?;
    (!rest.contains(char::is_whitespace) && !rest.contains('`')).then_some(rest)
}

/// The top-level fenced blocks after the reasoning.
fn scan_blocks(text: &str) -> Vec<Block> {
    let region = call_region_start(text, |before| before.contains("```"));
    let mut blocks = Vec::new();
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (fence start, body start)
    let mut position = region;
    for line in text[region..].split_inclusive('\n') {
        let line_start = position;
        position += line.len();
        let Some(language) = fence(line) else {
            continue;
        };
        if !stack.is_empty() && language.is_empty() {
            let (start, body_start) = stack.pop().expect("non-empty");
            if stack.is_empty() {
                let body = text[body_start..line_start].trim_end_matches('\n');
                let command = body.trim();
                let name = command.split_whitespace().next().unwrap_or_default();
                blocks.push(Block {
                    start,
                    end: line_start + line.trim_end_matches('\n').len(),
                    name: name.to_owned(),
                    parsed: if command.is_empty() {
                        Err(FormatError::MissingName {
                            syntax: CallSyntax::Fenced,
                        })
                    } else {
                        Ok(command_call(body.trim_matches('\n').trim_end()))
                    },
                });
            }
        } else {
            stack.push((line_start, position));
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ParsedResponse, FormatError> {
        FencedFormat.parse(&ModelOutput::from_text(text))
    }

    #[test]
    fn one_command_is_the_call() {
        let parsed = parse("DISCUSSION\nLet me look.\n```\nls -a\n```\n").unwrap();
        assert_eq!(parsed.thought, "Let me look.");
        assert_eq!(parsed.call.name, "execute_bash");
        assert_eq!(parsed.call.text_arg("command").as_deref(), Some("ls -a"));
        let parsed = parse("Open it.\n```bash\nopen src/a.py 40\n```").unwrap();
        assert_eq!(parsed.call.name, "open");
        assert_eq!(
            parsed.call.text_arg("command").as_deref(),
            Some("open src/a.py 40")
        );
        let edit = parse("Fix.\n```\nedit 3:4\n    return x\nend_of_edit\n```").unwrap();
        assert_eq!(edit.call.name, "edit");
        assert_eq!(
            edit.call.text_arg("command").as_deref(),
            Some("edit 3:4\n    return x\nend_of_edit")
        );
        assert_eq!(
            parse("Done.\n```\nsubmit\n```").unwrap().call.name,
            "submit"
        );
    }

    #[test]
    fn nested_fences_stay_inside_the_command() {
        let text = "Write the doc.\n```\nedit 1:1\n```python\nx = 1\n```\nend_of_edit\n```";
        let parsed = parse(text).unwrap();
        assert_eq!(
            parsed.call.text_arg("command").as_deref(),
            Some("edit 1:1\n```python\nx = 1\n```\nend_of_edit")
        );
    }

    #[test]
    fn the_seeds_two_format_errors() {
        // App. E, error type 1: the command is not extractable.
        let none = parse("I will run the tests now: pytest -x").unwrap_err();
        assert_eq!(
            none,
            FormatError::NoCall {
                syntax: CallSyntax::Fenced
            }
        );
        assert!(none.to_string().contains("one discussion and one command"));
        // App. E, error type 2: multiple commands in a single turn.
        let many = parse("First\n```\nls\n```\nthen\n```\ncat a.py\n```").unwrap_err();
        assert!(
            matches!(many, FormatError::MultipleCalls { .. }),
            "{many:?}"
        );
        assert!(many.to_string().contains("*SINGLE* command"), "{many}");
        // Identical repeats count as one call; drafts inside reasoning do not count.
        assert!(parse("a\n```\nls\n```\nb\n```\nls\n```").is_ok());
        let thought = parse("<think>\n```\nrm -rf x\n```\n</think>\nList.\n```\nls\n```").unwrap();
        assert_eq!(thought.call.text_arg("command").as_deref(), Some("ls"));
    }

    #[test]
    fn calls_round_trip() {
        let call = command_call("search_dir \"def foo\" src");
        let message = FencedFormat.render_call("Search.", &call, None);
        assert_eq!(
            message.content,
            "Search.\n\n```\nsearch_dir \"def foo\" src\n```"
        );
        let parsed = parse(&message.content).unwrap();
        assert_eq!(parsed.call, call);
        assert_eq!(parsed.thought, "Search.");
    }
}
