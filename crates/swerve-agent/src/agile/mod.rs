//! SWE-AGILE's dynamic reasoning context: replies structured as reasoning, a digest and an
//! action ([`structure`]), and context policies that keep the detailed reasoning of only
//! the last N assistant turns while digests, calls and observations stay ([`context`],
//! [`window`]), and the optional `recall_thought` tool that brings old reasoning back
//! ([`recall`]). [`ReasoningConfig`] is the `[agent.reasoning]` section that turns them on;
//! its defaults change nothing. See `docs/agile.md`.

pub mod context;
pub mod recall;
pub mod structure;
pub mod window;

use serde::{Deserialize, Serialize};

pub use context::{ContextPolicy, SendReasoning, Window};
pub use structure::{Malformed, StructureError, Structured};
pub use window::WindowPolicy;

/// The `[agent.reasoning]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReasoningConfig {
    /// Every reply must be `<think>…</think>`, `<reasoning_digest>…</reasoning_digest>`,
    /// then the tool call. Off: replies are read by the tool-call format alone, and the
    /// reasoning is the server's reasoning channel.
    pub required: bool,
    /// Which earlier assistant turns keep their reasoning in what the model is sent.
    pub window: WindowPolicy,
    /// Seeds the draw of a random window's N (with the trajectory id).
    pub seed: u64,
    /// How kept reasoning is sent back.
    pub send: SendReasoning,
    /// What each kind of structure error does.
    pub on_error: OnError,
    /// Offer the `recall_thought(step_ids)` tool, which shows the model the full reasoning
    /// of earlier steps ([`recall`]).
    pub recall_thought: bool,
}

impl ReasoningConfig {
    /// True for the defaults (nothing required, every turn's reasoning sent as it is).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The context policy of the trajectory `trajectory_id`.
    pub fn policy(&self, trajectory_id: &str) -> ContextPolicy {
        ContextPolicy {
            window: self.window.resolve(self.seed, trajectory_id),
            send: self.send,
        }
    }
}

/// What a structure error does, by kind (see [`StructureError::key`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OnError {
    /// No reasoning, or a reasoning block that is never closed.
    pub missing_reasoning: ErrorPolicy,
    /// No digest, or one that is not closed or empty.
    pub missing_digest: ErrorPolicy,
    /// The call comes before the digest.
    pub digest_after_action: ErrorPolicy,
    /// Several digests before the call.
    pub multiple_digests: ErrorPolicy,
}

impl OnError {
    /// The policy for `error`.
    pub fn policy(&self, error: &StructureError) -> ErrorPolicy {
        match error {
            StructureError::MissingReasoning | StructureError::UnclosedReasoning { .. } => {
                self.missing_reasoning
            }
            StructureError::MissingDigest
            | StructureError::UnclosedDigest
            | StructureError::EmptyDigest => self.missing_digest,
            StructureError::DigestAfterAction => self.digest_after_action,
            StructureError::MultipleDigests { .. } => self.multiple_digests,
        }
    }
}

/// What a structure error does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorPolicy {
    /// The error's text is the observation; it counts toward `agent.max_format_errors`.
    #[default]
    Tell,
    /// The episode ends at once with exit reason `format_errors` (SWE-AGILE's
    /// `check_format`); the model is not told.
    Terminate,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_full_section_and_rejects_unknown_keys() {
        let config: ReasoningConfig = toml::from_str(
            r#"
            required = true
            window = [1, 4]
            seed = 7
            send = "inline"
            recall_thought = true
            [on_error]
            missing_reasoning = "terminate"
            "#,
        )
        .unwrap();
        assert!(config.required && config.recall_thought && !config.is_default());
        assert_eq!(config.send, SendReasoning::Inline);
        assert_eq!(
            config
                .on_error
                .policy(&StructureError::UnclosedReasoning { tag: "<think>" }),
            ErrorPolicy::Terminate
        );
        assert_eq!(
            config.on_error.policy(&StructureError::EmptyDigest),
            ErrorPolicy::Tell
        );
        let policy = config.policy("task__0");
        assert!(matches!(policy.window, Window::Last(1..=4)));
        assert_eq!(policy, config.policy("task__0"));
        for bad in [
            "requierd = true",
            "[on_error]\nmissing = \"tell\"",
            "send = \"both\"",
        ] {
            assert!(toml::from_str::<ReasoningConfig>(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ReasoningConfig::default().policy("x"),
            ContextPolicy::default()
        );
    }
}
