//! The SWE-AGILE reply structure: reasoning, then a digest, then the action.
//!
//! A structured reply reads
//!
//! ```text
//! <think>
//! REASONING
//! </think>
//! <reasoning_digest>
//! DIGEST
//! </reasoning_digest>
//! ACTION
//! ```
//!
//! where the action is one tool call, read afterwards by the run's tool-call format.
//! [`parse`] splits a reply into the three parts. The reasoning follows SWE-AGILE's parser
//! (FORMATS b.1): the reply is split at the first `</think>`; the reasoning is the text
//! before it without a leading `<think>` (so a server that strips the opening tag, as Qwen3
//! servers do, is fine); when a second `</think>` follows before the digest, the reasoning
//! is the text between the two. `<reasoning>…</reasoning>` (SWE-AGILE's prompt for
//! instruct models) is read the same way, and reasoning the server returned separately
//! (`reasoning_content`) counts too. Line ends may be CRLF; pieces are trimmed.
//!
//! Everything else is explicit: no reasoning, no digest, a digest after the call and
//! several digests are each a [`StructureError`] whose text tells the model what to write.
//! Text between the reasoning and the digest is ignored; a `<reasoning_digest>` tag after
//! the call belongs to the action (it may be text the call writes to a file).

use std::fmt;

// How turns are written in text is shared with the trajectory reader (swerve-core): the
// digest tags, the reasoning tags [`parse`] accepts (kept reasoning is always written with
// the first pair), the content kept besides the reasoning, and kept reasoning inline.
pub use swerve_core::trajectory::turn::{
    DIGEST_CLOSE, DIGEST_OPEN, REASONING_TAGS, content, inline,
};

/// A reply with all three parts, each trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structured {
    /// The reasoning (may be empty: `<think></think>` is a reasoning block).
    pub reasoning: String,
    /// The digest (never empty).
    pub digest: String,
    /// Everything after the digest: the tool call, and any text around it.
    pub action: String,
}

impl Structured {
    /// The reply as a model should write it; [`parse`] reads it back to `self`.
    pub fn render(&self) -> String {
        format!(
            "{}\n{}\n{}\n{}",
            REASONING_TAGS[0].0,
            self.reasoning,
            REASONING_TAGS[0].1,
            content(&self.digest, &self.action)
        )
    }
}

/// A reply without the structure: what is wrong, and what could be read of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// What is wrong.
    pub error: StructureError,
    /// The reasoning, when it was found.
    pub reasoning: Option<String>,
    /// The text after the reasoning (all of it when none was found), trimmed: what the
    /// conversation keeps as the turn's content.
    pub rest: String,
}

/// Why a reply does not have the structure. The `Display` text is what the model is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StructureError {
    /// Neither a reasoning block nor reasoning from the server.
    MissingReasoning,
    /// A reasoning block that is opened (`tag`) but never closed.
    UnclosedReasoning {
        /// The opening tag as written, `<think>` or `<reasoning>`.
        tag: &'static str,
    },
    /// No `<reasoning_digest>` after the reasoning.
    MissingDigest,
    /// A `<reasoning_digest>` without its `</reasoning_digest>`.
    UnclosedDigest,
    /// A digest with nothing in it.
    EmptyDigest,
    /// The tool call comes before the digest.
    DigestAfterAction,
    /// Several digests before the tool call.
    MultipleDigests {
        /// How many.
        count: usize,
    },
}

impl StructureError {
    /// The configuration key of the error's kind (`agent.reasoning.on_error.<key>`): an
    /// unclosed reasoning block is missing reasoning, an unclosed or empty digest a missing
    /// digest.
    pub fn key(&self) -> &'static str {
        match self {
            Self::MissingReasoning | Self::UnclosedReasoning { .. } => "missing_reasoning",
            Self::MissingDigest | Self::UnclosedDigest | Self::EmptyDigest => "missing_digest",
            Self::DigestAfterAction => "digest_after_action",
            Self::MultipleDigests { .. } => "multiple_digests",
        }
    }
}

/// The order every reply must follow, quoted by the error texts.
const ORDER: &str =
    "<think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call";

impl std::error::Error for StructureError {}

impl fmt::Display for StructureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingReasoning => write!(
                f,
                "Your reply has no reasoning. Begin every reply with your reasoning inside <think>…</think>. Reply again in this order: {ORDER}."
            ),
            Self::UnclosedReasoning { tag } => write!(
                f,
                "Your {tag} block is never closed, so your reply has no digest and no tool call after it. Keep your reasoning shorter and close it. Reply again in this order: {ORDER}."
            ),
            Self::MissingDigest => write!(
                f,
                "Your reply has no <reasoning_digest> block after the reasoning. Your reasoning will be removed from the conversation; the digest is what remains of it, so summarize what later steps need in it. Reply again in this order: {ORDER}."
            ),
            Self::UnclosedDigest => write!(
                f,
                "Your <reasoning_digest> block has no closing </reasoning_digest> tag. Reply again in this order: {ORDER}."
            ),
            Self::EmptyDigest => write!(
                f,
                "Your <reasoning_digest> block is empty. Summarize in it what later steps need to know from your reasoning. Reply again in this order: {ORDER}."
            ),
            Self::DigestAfterAction => write!(
                f,
                "Your tool call comes before your <reasoning_digest> block. The digest must come first and the tool call last. Reply again in this order: {ORDER}."
            ),
            Self::MultipleDigests { count } => write!(
                f,
                "Your reply has {count} <reasoning_digest> blocks before the tool call, but only one is allowed. Reply again in this order: {ORDER}."
            ),
        }
    }
}

/// Splits a reply into reasoning, digest and action. `text` is the reply's content,
/// `channel` the reasoning the server returned separately (ignored when blank; when the
/// text has a reasoning block too, the two are joined with a blank line), and
/// `has_call(segment)` tells whether a tool call starts in a piece of the text (the
/// tool-call format's view). Never panics.
pub fn parse(
    text: &str,
    channel: Option<&str>,
    has_call: impl Fn(&str) -> bool,
) -> Result<Structured, Malformed> {
    let text = text.replace("\r\n", "\n");
    let channel = channel
        .map(|reasoning| reasoning.replace("\r\n", "\n").trim().to_owned())
        .filter(|reasoning| !reasoning.is_empty());
    let (inline, rest) = split_reasoning(&text);
    let rest = rest.trim();
    let reasoning = match (channel, inline) {
        (Some(channel), Some(inline)) if !inline.is_empty() => {
            Some(format!("{channel}\n\n{inline}"))
        }
        (Some(channel), _) => Some(channel),
        (None, inline) => inline,
    };
    let Some(reasoning) = reasoning else {
        let error = REASONING_TAGS
            .iter()
            .find(|(open, _)| text.contains(open))
            .map_or(StructureError::MissingReasoning, |&(tag, _)| {
                StructureError::UnclosedReasoning { tag }
            });
        return Err(Malformed {
            error,
            reasoning: None,
            rest: rest.to_owned(),
        });
    };
    match split_digest(rest, &has_call) {
        Ok((digest, action)) => Ok(Structured {
            reasoning,
            digest,
            action,
        }),
        Err(error) => Err(Malformed {
            error,
            reasoning: Some(reasoning),
            rest: rest.to_owned(),
        }),
    }
}

/// The reasoning written in `text` (trimmed), if a reasoning block closes in it, and the
/// text after the block.
fn split_reasoning(text: &str) -> (Option<String>, &str) {
    let first_close = REASONING_TAGS
        .iter()
        .filter_map(|&(open, close)| text.find(close).map(|at| (open, close, at)))
        .min_by_key(|&(_, _, at)| at);
    let Some((open, close, at)) = first_close else {
        return (None, text);
    };
    let after = &text[at + close.len()..];
    let digest_at = after.find(DIGEST_OPEN).unwrap_or(after.len());
    if let Some(second) = after[..digest_at].find(close) {
        let reasoning = without_open(&after[..second], open);
        return (Some(reasoning), &after[second + close.len()..]);
    }
    (Some(without_open(&text[..at], open)), after)
}

/// `block` trimmed, without a leading `open` tag.
fn without_open(block: &str, open: &str) -> String {
    let block = block.trim();
    block.strip_prefix(open).unwrap_or(block).trim().to_owned()
}

/// The digest and the action of `rest`, the text after the reasoning.
fn split_digest(
    rest: &str,
    has_call: &impl Fn(&str) -> bool,
) -> Result<(String, String), StructureError> {
    let opens: Vec<usize> = rest.match_indices(DIGEST_OPEN).map(|(at, _)| at).collect();
    let Some(&first) = opens.first() else {
        return Err(StructureError::MissingDigest);
    };
    if has_call(&rest[..first]) {
        return Err(StructureError::DigestAfterAction);
    }
    let count = 1 + opens[1..]
        .iter()
        .take_while(|&&at| !has_call(&rest[first..at]))
        .count();
    if count > 1 {
        return Err(StructureError::MultipleDigests { count });
    }
    let body = first + DIGEST_OPEN.len();
    let Some(length) = rest[body..].find(DIGEST_CLOSE) else {
        return Err(StructureError::UnclosedDigest);
    };
    let digest = rest[body..body + length].trim();
    if digest.is_empty() {
        return Err(StructureError::EmptyDigest);
    }
    let action = rest[body + length + DIGEST_CLOSE.len()..].trim();
    Ok((digest.to_owned(), action.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call starts wherever `<function=` does (the XML format's view, simplified).
    fn xml_call(segment: &str) -> bool {
        segment.contains("<function=")
    }

    fn ok(text: &str) -> Structured {
        parse(text, None, xml_call).unwrap()
    }

    fn error(text: &str) -> StructureError {
        parse(text, None, xml_call).unwrap_err().error
    }

    const CALL: &str = "<function=search>\n<parameter=search_term>x</parameter>\n</function>";

    #[test]
    fn reads_the_three_parts() {
        let reply = format!(
            "<think>\nThe bug is in parse.\n</think>\n<reasoning_digest>\nparse drops signs\n</reasoning_digest>\n{CALL}"
        );
        assert_eq!(
            ok(&reply),
            Structured {
                reasoning: "The bug is in parse.".into(),
                digest: "parse drops signs".into(),
                action: CALL.into(),
            }
        );
    }

    #[test]
    fn tolerates_noise() {
        let expected = ok(&format!(
            "<think>r</think><reasoning_digest>d</reasoning_digest>{CALL}"
        ));
        for noisy in [
            // CRLF and surrounding whitespace.
            format!(
                "  \r\n<think>\r\nr\r\n</think>\r\n\r\n<reasoning_digest>\r\n d \r\n</reasoning_digest>\r\n{CALL}\r\n"
            ),
            // The server stripped the opening <think>.
            format!("r\n</think>\n<reasoning_digest>d</reasoning_digest>\n{CALL}"),
            // </think> twice: the reasoning is between the two (SWE-AGILE's rule).
            format!(
                "<think></think>\n<think>r</think><reasoning_digest>d</reasoning_digest>{CALL}"
            ),
            format!("draft</think>r</think><reasoning_digest>d</reasoning_digest>{CALL}"),
            // The <reasoning> variant, and text between reasoning and digest.
            format!(
                "<reasoning>r</reasoning>\nNow the digest:\n<reasoning_digest>d</reasoning_digest>{CALL}"
            ),
        ] {
            let parsed = ok(&noisy);
            assert_eq!(parsed.reasoning, expected.reasoning, "{noisy:?}");
            assert_eq!(parsed.digest, expected.digest, "{noisy:?}");
            assert_eq!(parsed.action.replace("\r\n", "\n"), CALL, "{noisy:?}");
        }
        // A </think> after the digest belongs to the action.
        let quoted = "<think>r</think><reasoning_digest>d</reasoning_digest><function=x><parameter=a></think></parameter></function>";
        assert_eq!(ok(quoted).reasoning, "r");
        // So does a digest tag after the call.
        let written = format!(
            "<think>r</think><reasoning_digest>d</reasoning_digest>{CALL}<reasoning_digest>"
        );
        assert!(ok(&written).action.ends_with(DIGEST_OPEN));
        // An empty reasoning block is reasoning.
        assert_eq!(
            ok("<think>\n\n</think><reasoning_digest>d</reasoning_digest>").reasoning,
            ""
        );
    }

    #[test]
    fn reasoning_may_come_from_the_server() {
        let text = format!("<reasoning_digest>d</reasoning_digest>\n{CALL}");
        let parsed = parse(&text, Some("\nr\r\n"), xml_call).unwrap();
        assert_eq!(
            (parsed.reasoning.as_str(), parsed.digest.as_str()),
            ("r", "d")
        );
        let both = format!("more</think><reasoning_digest>d</reasoning_digest>{CALL}");
        assert_eq!(
            parse(&both, Some("r"), xml_call).unwrap().reasoning,
            "r\n\nmore"
        );
        // A blank channel is no reasoning.
        assert_eq!(
            parse(&text, Some("  "), xml_call).unwrap_err().error,
            StructureError::MissingReasoning
        );
    }

    #[test]
    fn each_error_is_distinct_and_says_what_to_do() {
        let cases = [
            (
                format!("<reasoning_digest>d</reasoning_digest>{CALL}"),
                StructureError::MissingReasoning,
                "missing_reasoning",
                "Your reply has no reasoning. Begin every reply with your reasoning inside <think>…</think>. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
            (
                "<think>I keep thinking".to_owned(),
                StructureError::UnclosedReasoning { tag: "<think>" },
                "missing_reasoning",
                "Your <think> block is never closed, so your reply has no digest and no tool call after it. Keep your reasoning shorter and close it. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
            (
                format!("<think>r</think>\n{CALL}"),
                StructureError::MissingDigest,
                "missing_digest",
                "Your reply has no <reasoning_digest> block after the reasoning. Your reasoning will be removed from the conversation; the digest is what remains of it, so summarize what later steps need in it. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
            (
                format!("<think>r</think><reasoning_digest>d\n{CALL}"),
                StructureError::UnclosedDigest,
                "missing_digest",
                "Your <reasoning_digest> block has no closing </reasoning_digest> tag. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
            (
                format!("<think>r</think><reasoning_digest> \n </reasoning_digest>{CALL}"),
                StructureError::EmptyDigest,
                "missing_digest",
                "Your <reasoning_digest> block is empty. Summarize in it what later steps need to know from your reasoning. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
            (
                format!("<think>r</think>{CALL}\n<reasoning_digest>d</reasoning_digest>"),
                StructureError::DigestAfterAction,
                "digest_after_action",
                "Your tool call comes before your <reasoning_digest> block. The digest must come first and the tool call last. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
            (
                format!(
                    "<think>r</think><reasoning_digest>a</reasoning_digest><reasoning_digest>b</reasoning_digest>{CALL}"
                ),
                StructureError::MultipleDigests { count: 2 },
                "multiple_digests",
                "Your reply has 2 <reasoning_digest> blocks before the tool call, but only one is allowed. Reply again in this order: <think>…</think>, then <reasoning_digest>…</reasoning_digest>, then exactly one tool call.",
            ),
        ];
        for (text, expected, key, message) in cases {
            assert_eq!(error(&text), expected, "{text:?}");
            assert_eq!(expected.key(), key);
            assert_eq!(expected.to_string(), message);
        }
        assert_eq!(
            error("<reasoning>r"),
            StructureError::UnclosedReasoning { tag: "<reasoning>" }
        );
    }

    #[test]
    fn malformed_replies_keep_what_was_read() {
        let malformed =
            parse(&format!("<think> r </think>\n{CALL}\n"), None, xml_call).unwrap_err();
        assert_eq!(malformed.reasoning.as_deref(), Some("r"));
        assert_eq!(malformed.rest, CALL);
        let malformed = parse(" just text ", None, xml_call).unwrap_err();
        assert_eq!(
            (malformed.reasoning, malformed.rest.as_str()),
            (None, "just text")
        );
    }

    #[test]
    fn renders_kept_turns_and_content() {
        assert_eq!(
            content("d", ""),
            "<reasoning_digest>\nd\n</reasoning_digest>"
        );
        assert_eq!(
            inline("r", "<reasoning_digest>\nd\n</reasoning_digest>\nCALL"),
            "<think>\nr\n</think>\n\n<reasoning_digest>\nd\n</reasoning_digest>\nCALL"
        );
        let structured = Structured {
            reasoning: "r".into(),
            digest: "d".into(),
            action: CALL.into(),
        };
        assert_eq!(ok(&structured.render()), structured);
        // A kept turn as sent reads back the same.
        assert_eq!(ok(&inline("r", &content("d", CALL))), structured);
    }
}
