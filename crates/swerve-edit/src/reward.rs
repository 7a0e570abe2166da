//! SWE-Edit's editor reward for RL (§3.2, §4.3.1): the editor's reply is applied to the
//! original file, and the reward is 1 when the result equals the target after SWE-Edit's
//! normalization (`normalize_code`: comments and docstrings removed, whitespace runs
//! collapsed), else 0. A reply that is not well formed, does not match, or uses a format
//! the policy does not allow earns 0. [`rl_row`] is the editor's prompt for one PR-Edit
//! instance, as a trainer samples it, with the target the reward compares against.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::bench::EditInstance;
use crate::bench::normalize;
use crate::blocks::{MatchOptions, Mode, apply};
use crate::format::EditFormat;
use crate::prompts::{editor_message, editor_system};
use crate::text::EditableText;

/// The reward of one reply, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditReward {
    /// 1.0 on a normalized match, else 0.0.
    pub reward: f64,
    /// `applied`, `unchanged`, `format_error` or `match_failure`.
    pub status: String,
    /// The result equals the target after SWE-Edit's normalization.
    pub normalized_match: bool,
    /// The result equals the target byte for byte.
    pub exact_match: bool,
    /// `targeted` or `rewrite`, for a reply that applied.
    pub mode: Option<String>,
    /// What was wrong with a reply that did not apply.
    pub error: Option<String>,
}

/// The reward of `reply` (the editor's whole answer, reasoning included) on `original`,
/// against `target`, under the `format` policy.
pub fn edit_reward(
    original: &str,
    target: &str,
    reply: &str,
    format: EditFormat,
    matching: &MatchOptions,
) -> EditReward {
    let editable = EditableText::new(original);
    match apply(&editable.text, reply, matching).and_then(|applied| format.check(applied)) {
        Ok(applied) => {
            let result = editable.restore(&applied.text);
            let normalized_match = normalize::swe_edit(&result) == normalize::swe_edit(target);
            EditReward {
                reward: if normalized_match { 1.0 } else { 0.0 },
                status: if applied.text == editable.text {
                    "unchanged"
                } else {
                    "applied"
                }
                .to_owned(),
                normalized_match,
                exact_match: result == target,
                mode: Some(
                    match applied.mode {
                        Mode::Targeted => "targeted",
                        Mode::Rewrite => "rewrite",
                    }
                    .to_owned(),
                ),
                error: None,
            }
        }
        Err(error) => EditReward {
            reward: 0.0,
            status: if error.is_format_error() {
                "format_error"
            } else {
                "match_failure"
            }
            .to_owned(),
            normalized_match: false,
            exact_match: false,
            mode: None,
            error: Some(error.message()),
        },
    }
}

/// The editor's RL prompt for `instance` under `format`: its system and user messages (as
/// `swerve run`'s editor subagent sends them), the target and what the reward needs.
pub fn rl_row(instance: &EditInstance, format: EditFormat) -> Value {
    let editable = EditableText::new(&instance.original);
    json!({
        "instance_id": instance.instance_id,
        "prompt": [
            {"role": "system", "content": editor_system(format)},
            {"role": "user", "content": editor_message(&editable.text, &instance.instruction)},
        ],
        "label": instance.target,
        "original": instance.original,
        "path": instance.path,
        "reward": {"kind": "normalized_match", "format": format.name()},
        "metadata": instance.metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "def f(x):\n    # double it\n    return x * 2\n";

    /// SWE-Edit §3.2, §4.3.1: reward = 1 iff normalize_code(result) == normalize_code(target),
    /// normalize_code dropping comments and collapsing whitespace; 0 for unusable replies.
    #[test]
    fn rewards_by_hand() {
        let target = "def f(x):\n    return x * 3\n";
        let block = |search: &str, replace: &str| {
            format!("<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
        };
        let table: [(String, EditFormat, f64, &str); 7] = [
            // The comment survives, but normalization removes it: a match.
            (
                block("    return x * 2", "    return x * 3"),
                EditFormat::Adaptive,
                1.0,
                "applied",
            ),
            // Spacing inside the expression differs: normalization keeps single spaces.
            (
                block("    return x * 2", "    return  x*3"),
                EditFormat::Adaptive,
                0.0,
                "applied",
            ),
            // A wrong value: no match.
            (
                block("    return x * 2", "    return x * 4"),
                EditFormat::Adaptive,
                0.0,
                "applied",
            ),
            // SEARCH not in the file.
            (
                block("    return y", "    return x * 3"),
                EditFormat::Adaptive,
                0.0,
                "match_failure",
            ),
            // No block at all.
            (
                "I would change the 2 to a 3.".to_owned(),
                EditFormat::Adaptive,
                0.0,
                "format_error",
            ),
            // A whole-file rewrite under the fixed find-replace policy (Table 5).
            (
                block("", target.trim_end()),
                EditFormat::FindReplace,
                0.0,
                "format_error",
            ),
            // The same rewrite under the adaptive policy.
            (
                block("", target.trim_end()),
                EditFormat::Adaptive,
                1.0,
                "applied",
            ),
        ];
        for (reply, format, reward, status) in table {
            let got = edit_reward(ORIGINAL, target, &reply, format, &MatchOptions::default());
            assert_eq!(
                (got.reward, got.status.as_str()),
                (reward, status),
                "{reply}"
            );
        }
        // `x*3` vs `x * 3`: SWE-Edit's normalization keeps non-space characters, so the
        // whitespace inside an expression matters only as a run (one space vs none).
        assert_eq!(normalize::swe_edit("return  x*3"), "return x*3");
    }

    #[test]
    fn rl_rows_carry_the_policys_prompt_and_the_target() {
        let instance = EditInstance {
            instance_id: "r@1".into(),
            path: "f.py".into(),
            original: ORIGINAL.into(),
            target: "t".into(),
            instruction: "Triple it.".into(),
            metadata: Default::default(),
        };
        let row = rl_row(&instance, EditFormat::FindReplace);
        assert_eq!(row["label"], "t");
        assert_eq!(row["reward"]["format"], "find-replace");
        let system = row["prompt"][0]["content"].as_str().unwrap();
        assert!(system.contains("SEARCH is never empty"), "{system}");
        let user = row["prompt"][1]["content"].as_str().unwrap();
        assert!(user.contains("Instruction: Triple it."));
    }
}
