//! Reading a teacher's reply: exactly one `<reasoning>…</reasoning>` block, then exactly one
//! `<reasoning_digest>…</reasoning_digest>` block, both non-empty.
//!
//! The teacher writes `<reasoning>` rather than `<think>` so that a server's reasoning
//! parser never mistakes the annotation for the teacher's own thinking. Anything up to a
//! last `</think>` is that thinking (a server without a reasoning parser leaves it in the
//! text) and is skipped, and so is any text around the two blocks. What is read must fit
//! in the agent's reply structure unchanged: no `<think>` tag inside, and no tool call in
//! the digest. Never panics.

use std::fmt;

use crate::agile::structure::{DIGEST_CLOSE, DIGEST_OPEN};

/// Opens the reasoning block.
pub const REASONING_OPEN: &str = "<reasoning>";
/// Closes the reasoning block.
pub const REASONING_CLOSE: &str = "</reasoning>";

/// The end of a thinking model's own thinking, when the server leaves it in the text.
const THINK_CLOSE: &str = "</think>";
/// A tag that would break the agent's reply structure if it were inside a block.
const THINK_OPEN: &str = "<think>";

/// What a valid reply holds, each trimmed and non-empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// The detailed reasoning.
    pub reasoning: String,
    /// Its digest.
    pub digest: String,
}

/// Why a reply is not usable. The `Display` text is what the teacher is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyError {
    /// A tag is missing.
    Missing {
        /// The tag.
        tag: &'static str,
    },
    /// A tag comes more than once.
    Repeated {
        /// The tag.
        tag: &'static str,
        /// How often.
        count: usize,
    },
    /// The tags are not in the order reasoning, then digest.
    OutOfOrder,
    /// A block has nothing in it.
    Empty {
        /// The block's opening tag.
        block: &'static str,
    },
    /// A block holds a `<think>` tag.
    ThinkTag {
        /// The block's opening tag.
        block: &'static str,
    },
    /// The digest holds a tool call.
    CallInDigest,
}

impl std::error::Error for ReplyError {}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { tag } => write!(f, "Your reply has no {tag} tag."),
            Self::Repeated { tag, count } => write!(
                f,
                "Your reply has {count} {tag} tags, but exactly one is allowed."
            ),
            Self::OutOfOrder => write!(
                f,
                "Your blocks are out of order: first {REASONING_OPEN}…{REASONING_CLOSE}, then {DIGEST_OPEN}…{DIGEST_CLOSE}."
            ),
            Self::Empty { block } => write!(f, "Your {block} block is empty."),
            Self::ThinkTag { block } => write!(
                f,
                "Your {block} block contains {THINK_OPEN}, which would break the agent's reply structure."
            ),
            Self::CallInDigest => write!(
                f,
                "Your digest contains a tool call; it must only summarize the reasoning."
            ),
        }
    }
}

/// Reads `text`; `has_call(segment)` tells whether a tool call starts in a piece of text
/// (the agent's tool-call format's view).
pub fn parse(text: &str, has_call: impl Fn(&str) -> bool) -> Result<Annotation, ReplyError> {
    let text = text.replace("\r\n", "\n");
    let text = match text.rfind(THINK_CLOSE) {
        Some(at) => &text[at + THINK_CLOSE.len()..],
        None => text.as_str(),
    };
    let mut at = [0; 4];
    for (slot, tag) in
        at.iter_mut()
            .zip([REASONING_OPEN, REASONING_CLOSE, DIGEST_OPEN, DIGEST_CLOSE])
    {
        let found: Vec<usize> = text.match_indices(tag).map(|(at, _)| at).collect();
        *slot = match found.as_slice() {
            [] => return Err(ReplyError::Missing { tag }),
            [one] => *one,
            many => {
                return Err(ReplyError::Repeated {
                    tag,
                    count: many.len(),
                });
            }
        };
    }
    let [reasoning_open, reasoning_close, digest_open, digest_close] = at;
    if !(reasoning_open < reasoning_close
        && reasoning_close < digest_open
        && digest_open < digest_close)
    {
        return Err(ReplyError::OutOfOrder);
    }
    let reasoning = text[reasoning_open + REASONING_OPEN.len()..reasoning_close].trim();
    let digest = text[digest_open + DIGEST_OPEN.len()..digest_close].trim();
    for (block, body) in [(REASONING_OPEN, reasoning), (DIGEST_OPEN, digest)] {
        if body.is_empty() {
            return Err(ReplyError::Empty { block });
        }
        if body.contains(THINK_OPEN) {
            return Err(ReplyError::ThinkTag { block });
        }
    }
    if has_call(digest) {
        return Err(ReplyError::CallInDigest);
    }
    Ok(Annotation {
        reasoning: reasoning.to_owned(),
        digest: digest.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Annotation, ReplyError> {
        parse(text, |segment| segment.contains("<function="))
    }

    #[test]
    fn reads_the_two_blocks_and_skips_what_surrounds_them() {
        let expected = Annotation {
            reasoning: "The test fails in parse.".into(),
            digest: "parse drops the sign".into(),
        };
        for reply in [
            "<reasoning>\nThe test fails in parse.\n</reasoning>\n<reasoning_digest>\nparse drops the sign\n</reasoning_digest>",
            "Sure.\r\n<reasoning>The test fails in parse.</reasoning>\r\n<reasoning_digest> parse drops the sign </reasoning_digest>\r\nDone.",
            // A thinking model's own thinking, left in the text, may mention the tags.
            "<think>I should write <reasoning> and <reasoning_digest> blocks.</think><reasoning>The test fails in parse.</reasoning><reasoning_digest>parse drops the sign</reasoning_digest>",
        ] {
            assert_eq!(read(reply), Ok(expected.clone()), "{reply}");
        }
    }

    #[test]
    fn each_problem_is_named() {
        let cases = [
            ("just text", "Your reply has no <reasoning> tag."),
            (
                "<reasoning>r</reasoning>",
                "Your reply has no <reasoning_digest> tag.",
            ),
            (
                "<reasoning>r</reasoning><reasoning_digest>d",
                "Your reply has no </reasoning_digest> tag.",
            ),
            (
                "<reasoning>a</reasoning><reasoning>b</reasoning><reasoning_digest>d</reasoning_digest>",
                "Your reply has 2 <reasoning> tags, but exactly one is allowed.",
            ),
            (
                "<reasoning_digest>d</reasoning_digest><reasoning>r</reasoning>",
                "Your blocks are out of order",
            ),
            (
                "<reasoning> </reasoning><reasoning_digest>d</reasoning_digest>",
                "Your <reasoning> block is empty.",
            ),
            (
                "<reasoning>r</reasoning><reasoning_digest></reasoning_digest>",
                "Your <reasoning_digest> block is empty.",
            ),
            (
                "<reasoning><think>r</reasoning><reasoning_digest>d</reasoning_digest>",
                "Your <reasoning> block contains <think>",
            ),
            (
                "<reasoning>r</reasoning><reasoning_digest>d <function=search></reasoning_digest>",
                "Your digest contains a tool call",
            ),
        ];
        for (reply, expected) in cases {
            let error = read(reply).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{reply}: {error}");
        }
    }
}
