//! What the text formats share: finding where calls may be, the call blocks found there,
//! choosing the one call, and the thought around it.

use std::borrow::Cow;

use swerve_core::ToolCall;

use super::error::{CallSyntax, FormatError};
use super::{ModelOutput, ParsedResponse};

/// Which of several identical call blocks is the call (differing blocks are an error).
/// It decides the thought (the text before the chosen block) and the call text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pick {
    /// The first block, as R2E-Gym's `parse_response`.
    #[default]
    First,
    /// The last block, as SWE-AGILE's `parse_xml_response`.
    Last,
}

/// The tags of a reasoning block; calls drafted inside it are not calls.
const THINK_START: &str = "<think>";
const THINK_END: &str = "</think>";

/// The text with `\r\n` line ends turned into `\n`.
pub(super) fn normalize_newlines(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Where calls may start: after the first `</think>` that ends reasoning, or at the start.
/// A `</think>` ends reasoning when a `<think>` comes before it, or when no call opens
/// before it (the generation prompt may have opened the reasoning); otherwise it is part
/// of a call's argument. `opens_call` tells whether a text opens a call.
pub(super) fn call_region_start(text: &str, opens_call: impl Fn(&str) -> bool) -> usize {
    match text.find(THINK_END) {
        Some(at) if text[..at].contains(THINK_START) || !opens_call(&text[..at]) => {
            at + THINK_END.len()
        }
        _ => 0,
    }
}

/// True for a code-fence line opening a block: three backticks and an optional language.
fn is_fence(line: &str) -> bool {
    line.strip_prefix("```").is_some_and(|language| {
        language
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

/// `body` without a code fence around it: a first line of backticks (and language) and a
/// last line of three backticks.
pub(super) fn strip_fences(body: &str) -> &str {
    let mut body = body.trim();
    if let Some(first_line_end) = body.find('\n')
        && is_fence(body[..first_line_end].trim())
    {
        body = body[first_line_end + 1..].trim();
    }
    body.strip_suffix("```").map_or(body, str::trim_end)
}

/// True when `tail`, the end of an output after the last complete part of a call, is only
/// what a stop sequence or a closed code fence leaves of the missing `closing` tag:
/// nothing, a prefix of the tag, or a closing fence.
pub(super) fn is_cut_tail(tail: &str, closing: &str) -> bool {
    let tail = tail.trim();
    let tail = tail.strip_suffix("```").map_or(tail, str::trim_end);
    closing.starts_with(tail)
}

/// At most `max_chars` characters of `text` (trimmed), with `…` when cut.
pub(super) fn shorten(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Finds the next occurrence of a fixed tag, remembering the last answer so that scanning
/// many unclosed blocks stays linear.
pub(super) struct NextTag {
    tag: &'static str,
    found: Option<Option<usize>>,
}

impl NextTag {
    /// A finder for `tag`.
    pub fn new(tag: &'static str) -> Self {
        Self { tag, found: None }
    }

    /// Where `tag` next occurs in `text` at or after `from`.
    pub fn find(&mut self, text: &str, from: usize) -> Option<usize> {
        match self.found {
            Some(found) if found.is_none_or(|at| at >= from) => found,
            _ => {
                let found = text[from..].find(self.tag).map(|at| from + at);
                self.found = Some(found);
                found
            }
        }
    }
}

/// One call block of a text reply.
#[derive(Debug)]
pub(super) struct Block {
    /// Where the block starts in the normalized text.
    pub start: usize,
    /// Where it ends: after its closing tag, or where the text or the block was cut.
    pub end: usize,
    /// The tool name as written, as far as it could be read.
    pub name: String,
    /// The call, or what is wrong with it.
    pub parsed: Result<ToolCall, FormatError>,
}

/// Reads the one call of a text reply: `scan` finds the call blocks of the normalized text.
/// No block is [`FormatError::NoCall`]; identical blocks count as one (`pick` says which
/// one is the call); a block not closed before the next one is reported as such; other
/// differing or broken blocks are [`FormatError::MultipleCalls`].
pub(super) fn parse_text_reply(
    output: &ModelOutput,
    syntax: CallSyntax,
    pick: Pick,
    scan: fn(&str) -> Vec<Block>,
) -> Result<ParsedResponse, FormatError> {
    let text = normalize_newlines(&output.text);
    let mut blocks = scan(&text);
    let block = match blocks.len() {
        0 => return Err(FormatError::NoCall { syntax }),
        1 => blocks.remove(0),
        _ => {
            let first = &blocks[0].parsed;
            let all_same = first.is_ok() && blocks.iter().all(|block| block.parsed == *first);
            if !all_same {
                if let Err(err @ FormatError::UnclosedBlock { .. }) = first {
                    return Err(err.clone());
                }
                let names = blocks.into_iter().map(|block| block.name).collect();
                return Err(FormatError::MultipleCalls { syntax, names });
            }
            match pick {
                Pick::First => blocks.swap_remove(0),
                Pick::Last => blocks.pop().expect("several blocks"),
            }
        }
    };
    let call = block.parsed?;
    Ok(ParsedResponse {
        thought: thought_before(&text, block.start),
        call,
        call_text: text[block.start..block.end].trim_end().to_owned(),
        call_id: None,
        note: None,
    })
}

/// The text before the call at `start`, trimmed, without a code-fence line opened right
/// before the call.
fn thought_before(text: &str, start: usize) -> String {
    let before = text[..start].trim_end();
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let before = if is_fence(before[line_start..].trim()) {
        &before[..line_start]
    } else {
        before
    };
    before.trim().to_owned()
}

/// `thought`, a separator and `call`; just `call` when there is no thought.
pub(super) fn join_thought(thought: &str, separator: &str, call: &str) -> String {
    let thought = thought.trim();
    if thought.is_empty() {
        call.to_owned()
    } else {
        format!("{thought}{separator}{call}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_and_tails() {
        assert_eq!(strip_fences("```json\n{}\n```"), "{}");
        assert_eq!(strip_fences(" {} "), "{}");
        assert_eq!(strip_fences("```\n{}"), "{}");
        assert!(is_cut_tail("", "</function>"));
        assert!(is_cut_tail("\n</func", "</function>"));
        assert!(is_cut_tail("\n```\n", "</function>"));
        assert!(!is_cut_tail("ls", "</function>"));
        assert_eq!(
            thought_before("Let me look.\n```xml\n<f", 20),
            "Let me look."
        );
        assert_eq!(thought_before("a ```xml <f", 9), "a ```xml");
        assert_eq!(shorten("  abcdef ", 3), "abc…");
        assert_eq!(shorten("ab", 3), "ab");
    }
}
