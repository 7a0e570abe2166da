//! [`Hint`]: the next step a person can take about an error, kept apart from what went
//! wrong. Attach it as the error's outermost context
//! (`Err(error).context(Hint::new("use a new --out"))` with anyhow); the command line
//! prints the error on one line and the hint on its own `hint:` line after it.

use std::fmt;

/// What to do about an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint(String);

impl Hint {
    /// A hint saying `next_step`.
    pub fn new(next_step: impl Into<String>) -> Hint {
        Hint(next_step.into())
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Hint {}
