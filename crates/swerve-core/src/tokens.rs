//! Token counting: the one [`TokenCounter`] seam every budget and figure in swerve counts
//! with. [`ApproxTokens`] (about four characters per token) is the default where no
//! tokenizer is configured; swerve-chat's `Tokenizer` and `ChatModel` count exactly.

/// Counts the tokens of a text. Counts must not decrease when text is appended.
pub trait TokenCounter: Send + Sync {
    /// The number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// About four characters per token, rounded up: close enough for budgets of code and
/// English with the tokenizers SWE-World's models use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApproxTokens;

impl TokenCounter for ApproxTokens {
    fn count(&self, text: &str) -> usize {
        text.chars().count().div_ceil(4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximates_four_characters_per_token() {
        assert_eq!(ApproxTokens.count(""), 0);
        assert_eq!(ApproxTokens.count("abcd"), 1);
        assert_eq!(ApproxTokens.count("abcde"), 2);
        assert_eq!(ApproxTokens.count("éééé"), 1);
    }
}
