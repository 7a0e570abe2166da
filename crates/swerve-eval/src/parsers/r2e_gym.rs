//! R2E-Gym's pytest log parser (`r2egym/repo_analysis/execution_log_parser.py`,
//! `parse_log_pytest`, as `_calculate_reward_r2e` in `r2egym/agenthub/runtime/docker.py`
//! applies it), line for line, so that its test ids are the keys of R2E-Gym's
//! `expected_output_json`.
//!
//! The output is first cleaned as R2E-Gym's `run_tests` cleans it (ANSI colour codes and
//! `\r` removed). Only the part after the first `short test summary info` (up to a second
//! one) is read; a line containing `PASSED` marks PASSED, else one containing `FAILED`
//! FAILED, else one containing `ERROR` ERROR, for the test id made of everything after the
//! first `::`, its `::` separators turned into `.` (`tests/t.py::TestA::test_b` is
//! `TestA.test_b`). Ids are cut at their first ` - `, in sorted order, a later id winning
//! over an earlier one that cuts to the same text.

use std::sync::LazyLock;

use regex::Regex;

use super::StatusMap;
use crate::status::TestStatus;

/// What R2E-Gym's `run_tests` removes from the output before parsing it.
static NOISE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*m|\r").expect("noise pattern is valid"));

/// The marker R2E-Gym's parser reads after.
const SUMMARY: &str = "short test summary info";

/// R2E-Gym's statuses of the tests in `log`.
pub fn r2e_gym(log: &str) -> StatusMap {
    let log = NOISE.replace_all(log, "");
    let Some((_, after)) = log.split_once(SUMMARY) else {
        return StatusMap::new();
    };
    let summary = after.split(SUMMARY).next().unwrap_or(after);
    let mut parsed = StatusMap::new();
    for line in summary.trim().split('\n') {
        let status = if line.contains("PASSED") {
            TestStatus::Passed
        } else if line.contains("FAILED") {
            TestStatus::Failed
        } else if line.contains("ERROR") {
            TestStatus::Error
        } else {
            continue;
        };
        let id = line.split("::").skip(1).collect::<Vec<_>>().join(".");
        let id = match status {
            TestStatus::Passed => id,
            _ => cut(&id).to_owned(),
        };
        parsed.insert(id, status);
    }
    // The parser's map is in insertion order; the reward re-keys it in sorted order.
    let mut rekeyed = StatusMap::new();
    for (id, status) in parsed {
        rekeyed.insert(cut(&id).to_owned(), status);
    }
    rekeyed
}

/// A test id as `_calculate_reward_r2e` keys it: up to its first ` - `.
pub fn cut(id: &str) -> &str {
    id.split(" - ").next().unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::r2e_gym;
    use crate::status::TestStatus;

    #[test]
    fn reads_the_summary_as_r2e_gym_does() {
        let log = "\x1b[1m===== short test summary info =====\x1b[0m\r\n\
                   PASSED r2e_tests/test_1.py::TestA::test_b\n\
                   FAILED r2e_tests/test_1.py::test_c - AssertionError: PASSED expected\n\
                   ERROR r2e_tests/test_1.py::test_d - ImportError\n\
                   ===== 1 failed, 1 passed, 1 error in 0.1s =====\n";
        let parsed = r2e_gym(log);
        assert_eq!(parsed.get("TestA.test_b"), Some(&TestStatus::Passed));
        // R2E-Gym checks PASSED first, wherever it is on the line.
        assert_eq!(parsed.get("test_c"), Some(&TestStatus::Passed));
        assert_eq!(parsed.get("test_d"), Some(&TestStatus::Error));
        assert_eq!(parsed.len(), 3);
        assert!(r2e_gym("PASSED a.py::test_x").is_empty());
    }
}
