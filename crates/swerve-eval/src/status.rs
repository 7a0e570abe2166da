//! Per-test statuses as SWE-bench's log parsers report them, and the two eval types.

use serde::{Deserialize, Serialize};

/// A test's outcome in a log (SWE-bench's `TestStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TestStatus {
    /// The test passed.
    Passed,
    /// An assertion failed.
    Failed,
    /// The test was skipped.
    Skipped,
    /// The test could not run (an error outside its assertions: collection, setup, crash).
    Error,
    /// An expected failure (pytest `xfail`, unittest `expected failure`).
    Xfail,
}

/// How FAIL_TO_PASS / PASS_TO_PASS are judged (SWE-bench 5.x `EvalType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalType {
    /// Tests must be seen passing (the default).
    #[default]
    PassAndFail,
    /// A test fails only if it is listed as failed (for runners that print only failures).
    FailOnly,
}
