//! SWE-smith's default log parser (`swesmith/harness/log_parsers.py`, `parse_log_pytest`,
//! SWE-smith commit cf2e649d): pytest's verbose lines, `TEST_ID STATUS`, where a line that
//! starts with a token, whitespace and a status name (`PASSED`, `FAILED`, `SKIPPED`,
//! `ERROR`, `XFAIL`) gives the token that status; a later line for the same id wins.

use std::sync::LazyLock;

use regex::Regex;

use super::StatusMap;
use crate::status::TestStatus;

/// `^(\S+)(\s+)STATUS`, as SWE-smith matches each line (`re.match`, no end anchor).
static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+)\s+(PASSED|FAILED|SKIPPED|ERROR|XFAIL)").expect("line pattern is valid")
});

/// SWE-smith's statuses of the tests in `log`.
pub fn swe_smith(log: &str) -> StatusMap {
    let mut statuses = StatusMap::new();
    for line in log.split('\n') {
        if let Some(captures) = LINE.captures(line) {
            let status = match &captures[2] {
                "PASSED" => TestStatus::Passed,
                "FAILED" => TestStatus::Failed,
                "SKIPPED" => TestStatus::Skipped,
                "ERROR" => TestStatus::Error,
                _ => TestStatus::Xfail,
            };
            statuses.insert(captures[1].to_owned(), status);
        }
    }
    statuses
}
