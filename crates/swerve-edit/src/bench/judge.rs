//! The optional LLM judge of PR-Edit: it sees the original file and two diffs (the editor's
//! and the reference's) and answers `Result: EQUIVALENT` or `Result: NOT_EQUIVALENT`.
//! Outcomes that need no judge are decided without a call: an edit that did not apply is
//! not equivalent, one that produced the target byte for byte is.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use swerve_llm::{Model, Usage};

use super::instance::EditInstance;
use crate::subagent::ask;
use crate::text::after_think;

const JUDGE_SYSTEM: &str = "\
You review code changes. You receive a source file and two diffs against it: a candidate \
change and a reference change that is known to be right. Decide whether the candidate \
does the same thing as the reference: the program behaves the same after either change. \
Differences in formatting, comments, blank lines or the names of local variables do not \
matter; missing parts, extra behaviour or different logic do.

Explain your reasoning briefly, then end with exactly one line: `Result: EQUIVALENT` or \
`Result: NOT_EQUIVALENT`.";

static VERDICT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Result[\s*:]*(NOT_EQUIVALENT|EQUIVALENT)").expect("valid pattern")
});

/// How a verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeSource {
    /// The edit did not apply: not equivalent, no call.
    NotApplied,
    /// The edit produced the target exactly: equivalent, no call.
    ExactMatch,
    /// The judge model decided.
    Model,
}

/// The judge's decision on one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    /// Equivalent or not; `None` when the judge failed or its answer had no verdict.
    pub equivalent: Option<bool>,
    /// How the verdict was reached.
    pub source: JudgeSource,
    /// Why there is no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The judge call's token counts.
    #[serde(default)]
    pub usage: Usage,
    /// The judge call's cost.
    #[serde(default)]
    pub cost: f64,
}

/// The verdict of a judge reply: the last `Result: …` line after its reasoning.
pub fn verdict(reply: &str) -> Option<bool> {
    let last = VERDICT.captures_iter(after_think(reply)).last()?;
    Some(&last[1] == "EQUIVALENT")
}

/// Judges the editor's `result` for `instance` (`None`: the edit did not apply).
pub async fn judge(model: &dyn Model, instance: &EditInstance, result: Option<&str>) -> Judgement {
    let decided = |equivalent, source| Judgement {
        equivalent: Some(equivalent),
        source,
        error: None,
        usage: Usage::default(),
        cost: 0.0,
    };
    let Some(result) = result else {
        return decided(false, JudgeSource::NotApplied);
    };
    if result == instance.target {
        return decided(true, JudgeSource::ExactMatch);
    }
    let message = format!(
        "The file before the change:\n```\n{}\n```\n\nCandidate change:\n```diff\n{}```\n\nReference change:\n```diff\n{}```\n\nDoes the candidate do the same as the reference?",
        instance.original.trim_end_matches('\n'),
        instance.diff_to(result),
        instance.diff_to(&instance.target),
    );
    let (reply, record) = ask(model, "judge", JUDGE_SYSTEM, message).await;
    let verdict = reply.as_deref().ok().and_then(verdict);
    Judgement {
        equivalent: verdict,
        source: JudgeSource::Model,
        error: match (&reply, verdict) {
            (Err(error), _) => Some(error.clone()),
            (Ok(_), None) => Some(
                "the judge's answer has no `Result: EQUIVALENT` or `Result: NOT_EQUIVALENT` line"
                    .to_owned(),
            ),
            (Ok(_), Some(_)) => None,
        },
        usage: record.usage(),
        cost: record.cost(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_the_last_result_line() {
        assert_eq!(verdict("Looks right.\nResult: EQUIVALENT"), Some(true));
        assert_eq!(verdict("Result: NOT_EQUIVALENT\n"), Some(false));
        assert_eq!(verdict("**Result:** EQUIVALENT"), Some(true));
        assert_eq!(
            verdict("<think>Result: EQUIVALENT?</think>Result: NOT_EQUIVALENT"),
            Some(false)
        );
        assert_eq!(
            verdict("Result: EQUIVALENT ... no wait. Result: NOT_EQUIVALENT"),
            Some(false)
        );
        assert_eq!(verdict("They are equivalent."), None);
    }
}
