//! What grading shares with the configuration: how a patch that changes its own test
//! machinery is rewarded (`reward.test_machinery_change`).

use serde::{Deserialize, Serialize};

/// What a patch's change to the test machinery (the files that decide how the tests are
/// collected, run and reported: `conftest.py`, pytest's configuration, the repository's own
/// runner, …) does to its grade. Either way the tests run with the machinery of the base
/// plus the test patch: the change never reaches the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestMachineryChange {
    /// The instance is not resolved (reward 0), whatever the tests say, and the report names
    /// the files: a policy learns never to touch the judge. The default, and every training
    /// preset's.
    #[default]
    Reject,
    /// The instance is graded by the tests run with the machinery restored; the report names
    /// the files. For evaluations that compare with SWE-bench's numbers.
    Flag,
}

impl TestMachineryChange {
    /// The name in configuration files and reports: `reject` or `flag`.
    pub fn as_str(self) -> &'static str {
        match self {
            TestMachineryChange::Reject => "reject",
            TestMachineryChange::Flag => "flag",
        }
    }
}
