//! What the viewer and editor subagents are told: swerve's own system prompts and the user
//! messages that carry the file (numbered lines for the viewer, the raw text in a fence for
//! the editor).

use crate::text::{numbered, split_lines};

/// The viewer's instructions.
pub const VIEWER_SYSTEM: &str = "\
You help a software engineer read a source file. You receive the file with a line number \
in front of every line, and a question about it. Answer with the line ranges that the \
engineer needs to read to answer the question, and nothing else.

Answer format: a JSON array of [first_line, last_line] pairs, both ends included, counting \
lines from 1, for example [[12, 30], [88, 97]]. Answer [] when no part of the file is about \
the question.

How to choose ranges:
- Give whole units: a function, method or class from its signature (and decorators) to its \
end, a complete block of imports or constants. Never stop in the middle of one.
- Add the few lines around a unit that make it readable on its own, such as the enclosing \
class line or the comment above it.
- Prefer several small ranges to one range that spans unrelated code; give the whole file \
only when the question asks about all of it.
- Order the ranges by first line and do not let them overlap.

Write only the JSON array: no explanation, no code fence.";

/// The editor's instructions under `format` (SWE-Edit's adaptive format, or one of the two
/// fixed ones of its ablation, Table 5).
pub fn editor_system(format: crate::format::EditFormat) -> &'static str {
    use crate::format::EditFormat;
    match format {
        EditFormat::Adaptive => EDITOR_SYSTEM,
        EditFormat::FindReplace => EDITOR_SYSTEM_FIND_REPLACE,
        EditFormat::Rewrite => EDITOR_SYSTEM_REWRITE,
    }
}

/// The editor's instructions with only find-and-replace blocks (no whole-file rewrite).
pub const EDITOR_SYSTEM_FIND_REPLACE: &str = "\
You change a source file as an instruction says. You receive the whole file and the \
instruction, and you answer with edit blocks that swerve applies to the file.

An edit block looks like this:

<<<<<<< SEARCH
lines copied exactly from the file
=======
the lines that replace them
>>>>>>> REPLACE

Rules:
1. SEARCH must be copied from the file character for character: the same indentation, the \
same spaces, the same blank lines. Copy whole lines.
2. Every SEARCH must occur exactly once in the file. Include enough surrounding lines to \
make it unique, but no more than needed.
3. Several blocks are applied one after another, in the order you write them. Do not let \
two blocks change the same lines.
4. To delete lines, leave the part between ======= and >>>>>>> REPLACE empty.
5. SEARCH is never empty: the whole file cannot be rewritten at once. Change it with \
targeted blocks, even when much of it changes.
6. Change only what the instruction asks for. Keep the file's style and indentation.

Answer with the edit blocks only, without explanations.";

/// The editor's instructions with only a whole-file rewrite.
pub const EDITOR_SYSTEM_REWRITE: &str = "\
You change a source file as an instruction says. You receive the whole file and the \
instruction, and you answer with the complete new file in one edit block that swerve \
applies to the file.

The edit block looks like this, with nothing between SEARCH and =======:

<<<<<<< SEARCH
=======
the complete new file
>>>>>>> REPLACE

Rules:
1. Write exactly one block. Its SEARCH part is empty and its REPLACE part is the whole file \
after the change, from its first line to its last.
2. Change only what the instruction asks for; copy every other line exactly, with the same \
indentation, spaces and blank lines.

Answer with the edit block only, without explanations.";

/// The editor's instructions (SWE-Edit's adaptive format: targeted blocks or a rewrite).
pub const EDITOR_SYSTEM: &str = "\
You change a source file as an instruction says. You receive the whole file and the \
instruction, and you answer with edit blocks that swerve applies to the file.

An edit block looks like this:

<<<<<<< SEARCH
lines copied exactly from the file
=======
the lines that replace them
>>>>>>> REPLACE

Rules:
1. SEARCH must be copied from the file character for character: the same indentation, the \
same spaces, the same blank lines. Copy whole lines.
2. Every SEARCH must occur exactly once in the file. Include enough surrounding lines to \
make it unique, but no more than needed.
3. Several blocks are applied one after another, in the order you write them. Do not let \
two blocks change the same lines.
4. To delete lines, leave the part between ======= and >>>>>>> REPLACE empty.
5. To rewrite the whole file, write exactly one block whose SEARCH part is empty and whose \
REPLACE part is the complete new file. Choose this when most of the file changes or the \
file is short; choose targeted blocks when the change is local.
6. Change only what the instruction asks for. Keep the file's style and indentation.

Answer with the edit blocks only, without explanations.";

/// The viewer's user message: the file's lines numbered as the native tools number them
/// (trailing whitespace removed), then the question.
pub fn viewer_message(text: &str, query: &str) -> String {
    let lines = split_lines(text).into_iter().map(str::trim_end);
    format!(
        "{VIEWER_MESSAGE_HEAD}{}\n\nQuestion: {query}\n\nAnswer with the JSON array of line ranges that answer the question.",
        numbered(1, lines)
    )
}

/// The number of lines of the file a [`viewer_message`] carries: its numbered lines,
/// counted while each has the next number (a file line can hold no newline, so the count
/// stops exactly at the blank line before the question). `None` when `message` is not a
/// viewer message.
pub fn viewer_file_lines(message: &str) -> Option<usize> {
    let body = message.strip_prefix(VIEWER_MESSAGE_HEAD)?;
    let mut lines = 0;
    for line in body.split('\n') {
        match line.strip_prefix(&format!("{:6}\t", lines + 1)) {
            Some(_) => lines += 1,
            None => break,
        }
    }
    Some(lines)
}

/// The first line of a [`viewer_message`].
const VIEWER_MESSAGE_HEAD: &str = "The file, one numbered line per line:\n";

/// The editor's user message: the file in a code fence longer than any run of backticks
/// inside it, then the instruction.
pub fn editor_message(text: &str, instruction: &str) -> String {
    let longest_run = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!(
        "The file:\n{fence}\n{body}\n{fence}\n\nInstruction: {instruction}\n\nAnswer with the SEARCH/REPLACE blocks that carry out the instruction."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_file() {
        assert_eq!(
            viewer_message("a  \nb\n", "where is b?"),
            "The file, one numbered line per line:\n     1\ta\n     2\tb\n\nQuestion: where is b?\n\nAnswer with the JSON array of line ranges that answer the question."
        );
        let message = editor_message("x = '```'\n", "quote it");
        assert!(
            message.starts_with("The file:\n````\nx = '```'\n````\n"),
            "{message}"
        );
        assert!(editor_message("x\n", "i").starts_with("The file:\n```\nx\n```\n"));
    }

    #[test]
    fn a_viewer_message_tells_how_many_lines_its_file_has() {
        assert_eq!(viewer_file_lines(&viewer_message("", "q")), Some(0));
        assert_eq!(viewer_file_lines(&viewer_message("a\n\n", "q")), Some(2));
        assert_eq!(viewer_file_lines("The file:\n```\nx\n```"), None);
    }

    proptest::proptest! {
        #[test]
        fn the_line_count_survives_any_file_and_query(
            lines in proptest::collection::vec("[ -~\t]{0,12}", 0..40),
            query in "[ -~\n\t]{0,40}",
        ) {
            let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
            proptest::prop_assert_eq!(
                viewer_file_lines(&viewer_message(&text, &query)),
                Some(lines.len())
            );
        }
    }
}
