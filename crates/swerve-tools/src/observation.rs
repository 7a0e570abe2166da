//! Observation rendering: how a tool's output is shown to the model
//! (R2E-Gym `Observation.__str__`), and the runtime's output clean-up.

use std::borrow::Cow;

/// Shown when a reply has no tool call (R2E-Gym `CONTINUE_MSG`).
pub const CONTINUE_MSG: &str = "\nYou forgot to use a function call in your response. \nYOU MUST USE A FUNCTION CALL IN EACH RESPONSE.\n\nIMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.\n";

/// The observation of `finish`/`submit`.
pub const FINISHED: &str = "<<< Finished >>>";

/// Renders the observation of one call of tool `name`:
/// - no name: [`CONTINUE_MSG`];
/// - `finish`/`submit`: [`FINISHED`];
/// - `execute_bash`: `Exit code: {error_code}\nExecution output of [execute_bash]:\n{output}`,
///   where an output of more than `2 * keep_lines` lines keeps its first and last
///   `keep_lines` lines around a truncation marker;
/// - anything else: `Execution output of [{name}]:\n{output}`, untruncated.
pub fn render_observation(name: &str, output: &str, error_code: &str, keep_lines: usize) -> String {
    match name {
        "" => CONTINUE_MSG.to_owned(),
        "finish" | "submit" => FINISHED.to_owned(),
        "execute_bash" => format!(
            "Exit code: {error_code}\nExecution output of [execute_bash]:\n{}",
            truncate_middle(output, keep_lines)
        ),
        _ => format!("Execution output of [{name}]:\n{output}"),
    }
}

/// Keeps the first and last `keep` lines of an output longer than `2 * keep` lines
/// (lines as Python's `splitlines` counts them).
fn truncate_middle(output: &str, keep: usize) -> Cow<'_, str> {
    let lines = crate::pytext::splitlines(output);
    if lines.len() <= 2 * keep {
        return Cow::Borrowed(output);
    }
    let divider = "-".repeat(50);
    Cow::Owned(format!(
        "{}\n{divider}\n<Observation truncated in middle for saving context>\n{divider}\n{}",
        lines[..keep].join("\n"),
        lines[lines.len() - keep..].join("\n")
    ))
}

/// Removes ANSI colour codes (`ESC [ digits/; m`) and carriage returns, as R2E-Gym's
/// runtime does to command output (upstream only on exit status 0; here always, so a
/// failing command's output is as readable as a passing one's).
pub fn strip_ansi_and_cr(text: &str) -> Cow<'_, str> {
    if !text.contains(['\x1b', '\r']) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut index = 0;
    while index < bytes.len() {
        let skip = match bytes[index] {
            b'\r' => 1,
            b'\x1b' if bytes.get(index + 1) == Some(&b'[') => {
                let params = bytes[index + 2..]
                    .iter()
                    .take_while(|&&b| b.is_ascii_digit() || b == b';')
                    .count();
                if bytes.get(index + 2 + params) == Some(&b'm') {
                    params + 3
                } else {
                    0
                }
            }
            _ => 0,
        };
        if skip == 0 {
            index += 1;
        } else {
            out.push_str(&text[copied..index]);
            index += skip;
            copied = index;
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_codes_and_carriage_returns() {
        assert_eq!(
            strip_ansi_and_cr("\x1b[31mred\x1b[0m\r\nok\x1b[2J"),
            "red\nok\x1b[2J"
        );
        assert_eq!(strip_ansi_and_cr("plain"), "plain");
        assert_eq!(strip_ansi_and_cr("\x1b[1;32m"), "");
        assert_eq!(strip_ansi_and_cr("é\x1b[m\r"), "é");
    }
}
