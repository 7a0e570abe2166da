//! [`Usage`]: the token counts of one model call, of a subagent's calls or of a whole run.
//! Its own file so that steps and the subagent calls recorded inside them can both count
//! tokens without importing each other.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

/// Token counts of one model call (or, in [`super::Outcome`], of a whole run). Counts a
/// provider did not report are 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Tokens of the request.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Tokens of the answer, reasoning included.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Request tokens served from the provider's prompt cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Answer tokens spent on reasoning.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}
