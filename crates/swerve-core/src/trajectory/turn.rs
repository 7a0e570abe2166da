//! How an assistant turn writes SWE-AGILE's reasoning and digest into text: the digest
//! block in front of the action ([`content`]), kept reasoning in front of the content
//! ([`inline`]), and the inverse of each ([`strip_inline`], [`action`]).
//!
//! The agent writes turns with these functions (`swerve_agent::agile::structure`
//! re-exports them), and [`super::Trajectory::conversation`] reads recorded turns back
//! with them, so the two can never disagree.

/// Opens the digest.
pub const DIGEST_OPEN: &str = "<reasoning_digest>";
/// Closes the digest.
pub const DIGEST_CLOSE: &str = "</reasoning_digest>";
/// The reasoning tags replies may use, as (opening, closing): `<think>` and SWE-AGILE's
/// `<reasoning>` for instruct models. Kept reasoning is always written with the first pair.
pub const REASONING_TAGS: [(&str, &str); 2] =
    [("<think>", "</think>"), ("<reasoning>", "</reasoning>")];

/// What the conversation keeps of a structured reply besides its reasoning: the digest
/// block, then the action (when there is one).
pub fn content(digest: &str, action: &str) -> String {
    let block = format!("{DIGEST_OPEN}\n{digest}\n{DIGEST_CLOSE}");
    if action.is_empty() {
        block
    } else {
        format!("{block}\n{action}")
    }
}

/// An assistant turn's content with its reasoning written in front, as SWE-AGILE renders
/// the turns whose reasoning is kept: `<think>\n{reasoning}\n</think>\n\n{content}`.
pub fn inline(reasoning: &str, content: &str) -> String {
    let (open, close) = REASONING_TAGS[0];
    format!("{open}\n{reasoning}\n{close}\n\n{content}")
}

/// The content of `text` written by [`inline`] with `reasoning`; `None` when `text` does
/// not start with that reasoning.
pub fn strip_inline<'a>(reasoning: &str, text: &'a str) -> Option<&'a str> {
    let (open, close) = REASONING_TAGS[0];
    text.strip_prefix(open)?
        .strip_prefix('\n')?
        .strip_prefix(reasoning)?
        .strip_prefix('\n')?
        .strip_prefix(close)?
        .strip_prefix("\n\n")
}

/// The action of a content written by [`content`] with `digest`; `None` when `text` does
/// not start with that digest's block.
pub fn action<'a>(digest: &str, text: &'a str) -> Option<&'a str> {
    let rest = text
        .strip_prefix(DIGEST_OPEN)?
        .strip_prefix('\n')?
        .strip_prefix(digest)?
        .strip_prefix('\n')?
        .strip_prefix(DIGEST_CLOSE)?;
    Some(rest.strip_prefix('\n').unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_writer_has_its_inverse() {
        for (digest, act) in [("d", "CALL"), ("two\nlines", ""), ("", "x\n")] {
            let written = content(digest, act);
            assert_eq!(action(digest, &written), Some(act), "{written:?}");
            for reasoning in ["r", "", "a\n\nb"] {
                let kept = inline(reasoning, &written);
                assert_eq!(strip_inline(reasoning, &kept), Some(written.as_str()));
                assert_eq!(strip_inline("other", &kept), None);
            }
        }
        assert_eq!(
            content("d", ""),
            "<reasoning_digest>\nd\n</reasoning_digest>"
        );
        assert_eq!(inline("r", "c"), "<think>\nr\n</think>\n\nc");
        assert_eq!(action("d", "no digest"), None);
        assert_eq!(action("e", &content("d", "x")), None);
    }
}
