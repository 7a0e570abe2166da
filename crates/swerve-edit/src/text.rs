//! Text helpers shared by the viewer, the editor and the benchmark: lines as `grep -n`
//! counts them, line numbering in the native tools' style, CRLF files edited as LF, and the
//! part of a reply after a `</think>` block.

use std::fmt::Write;

/// The lines of `text` split on `\n`, without a last empty line for a final newline
/// (`"a\nb\n"` has two lines, as Python's `readlines` and `grep -n` count them).
pub fn split_lines(text: &str) -> Vec<&str> {
    text.split_terminator('\n').collect()
}

/// Appends line `number` as the native tools print it: the number right-aligned in six
/// columns, a tab, the line.
pub fn push_numbered(out: &mut String, number: usize, line: &str) {
    let _ = write!(out, "{number:6}\t{line}");
}

/// `lines` numbered from `first` (see [`push_numbered`]), joined with newlines.
pub fn numbered<'a>(first: usize, lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for (offset, line) in lines.into_iter().enumerate() {
        if offset > 0 {
            out.push('\n');
        }
        push_numbered(&mut out, first + offset, line);
    }
    out
}

/// What a model reply says after its reasoning: the text after the first `</think>`,
/// trimmed, when there is one (SWE-Edit reads replies this way); nothing when a `<think>` is
/// never closed (the reply was cut off while reasoning); otherwise the reply.
pub fn after_think(reply: &str) -> &str {
    match reply.split_once("</think>") {
        Some((_, answer)) => answer.trim(),
        None if reply.contains("<think>") => "",
        None => reply,
    }
}

/// A file's text as the editor works on it: a file whose every line break is `\r\n` is
/// edited with `\n` breaks and written back with `\r\n`; any other file byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditableText {
    /// The text with `\n` line breaks (for a CRLF file) or as it was.
    pub text: String,
    crlf: bool,
}

impl EditableText {
    /// Reads a file's contents.
    pub fn new(raw: &str) -> Self {
        let breaks = raw.matches('\n').count();
        let crlf = breaks > 0 && raw.matches("\r\n").count() == breaks;
        let text = if crlf {
            raw.replace("\r\n", "\n")
        } else {
            raw.to_owned()
        };
        Self { text, crlf }
    }

    /// `edited` (with `\n` breaks) in the file's own line breaks.
    pub fn restore(&self, edited: &str) -> String {
        if self.crlf {
            edited.replace('\n', "\r\n")
        } else {
            edited.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_numbering_and_think_blocks() {
        assert_eq!(split_lines("a\nb\n"), ["a", "b"]);
        assert_eq!(split_lines("a\n\nb"), ["a", "", "b"]);
        assert!(split_lines("").is_empty());
        assert_eq!(numbered(9, ["x", "y"]), "     9\tx\n    10\ty");
        assert_eq!(
            after_think("<think>[[1,2]]</think>\n [[3, 4]] "),
            "[[3, 4]]"
        );
        assert_eq!(after_think(" [[3, 4]]"), " [[3, 4]]");
        assert_eq!(after_think("<think>[[3, 4]]"), "");
    }

    #[test]
    fn crlf_files_round_trip_and_mixed_files_stay_as_they_are() {
        let crlf = EditableText::new("a\r\nb\r\n");
        assert_eq!(crlf.text, "a\nb\n");
        assert_eq!(crlf.restore("a\nc\n"), "a\r\nc\r\n");
        let mixed = EditableText::new("a\r\nb\n");
        assert_eq!(mixed.text, "a\r\nb\n");
        assert_eq!(mixed.restore("x\n"), "x\n");
        assert_eq!(EditableText::new("no breaks").restore("y"), "y");
    }
}
