//! SWE-smith's log parsers (`swesmith/harness/log_parsers.py`, SWE-smith commit cf2e649d):
//! [`swe_smith`], its default (`parse_log_pytest`), and the six it keeps for repositories
//! whose runners print otherwise (`MAP_REPO_TO_PARSER`), found by [`for_repo`].
//!
//! Each reads the log line by line (split on `\n`) exactly as SWE-smith's Python does,
//! including its quirks (a later line for the same id wins; mypy's parser takes the last
//! word of any line that mentions `PASSED` or `FAILED`), so that swerve's verdicts on a log
//! equal SWE-smith's. `scripts/swe-smith-crosscheck.py` runs SWE-smith's own parsers on the
//! fixtures the tests compare against.

use std::sync::LazyLock;

use regex::Regex;

use super::{Parser, StatusMap};
use crate::status::TestStatus;

/// The statuses SWE-smith's loops try, in `TestStatus`'s order, with their names.
const STATUSES: [(&str, TestStatus); 5] = [
    ("PASSED", TestStatus::Passed),
    ("FAILED", TestStatus::Failed),
    ("SKIPPED", TestStatus::Skipped),
    ("ERROR", TestStatus::Error),
    ("XFAIL", TestStatus::Xfail),
];

/// Python's `str.isspace` for one character: Unicode white space and the four separators
/// (U+001C–U+001F) Python counts as space too. `str.split()` and `str.strip()` use it.
pub(super) fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.split()` (no separator): the words between runs of space.
fn python_words(line: &str) -> Vec<&str> {
    line.split(is_python_space)
        .filter(|word| !word.is_empty())
        .collect()
}

/// The status called `name` (one of [`STATUSES`]).
fn status_named(name: &str) -> TestStatus {
    STATUSES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(TestStatus::Error, |(_, status)| *status)
}

/// Python's `\s` in a `str` pattern, for the regexes below.
const SPACE: &str = r"[\s\x1c-\x1f]";

/// Every parser SWE-smith keeps for a repository of its own (`MAP_REPO_TO_PARSER`), by
/// repository as SWE-smith names it (`owner/name`, case as in the instance ids).
pub const REPO_PARSERS: [(&str, Parser); 6] = [
    ("gin-gonic/gin", gotest),
    ("HIPS/autograd", autograd),
    ("paramiko/paramiko", paramiko),
    ("python/mypy", mypy),
    ("tornadoweb/tornado", tornado),
    ("un33k/python-slugify", python_slugify),
];

/// The parser SWE-smith grades `repo`'s logs with: its own for the repositories of
/// [`REPO_PARSERS`] (compared exactly, as SWE-smith's dictionary lookup does), else
/// [`swe_smith`].
pub fn for_repo(repo: &str) -> Parser {
    REPO_PARSERS
        .iter()
        .find(|(name, _)| *name == repo)
        .map_or(swe_smith as Parser, |(_, parser)| *parser)
}

/// `^(\S+)(\s+)STATUS`, as SWE-smith matches each line (`re.match`, no end anchor).
static PYTEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^([^\s\x1c-\x1f]+){SPACE}+(PASSED|FAILED|SKIPPED|ERROR|XFAIL)"
    ))
    .expect("line pattern is valid")
});

/// SWE-smith's default parser (`parse_log_pytest`): pytest's verbose lines, `TEST_ID
/// STATUS`, where a line that starts with a token, whitespace and a status name gives the
/// token that status; a later line for the same id wins.
pub fn swe_smith(log: &str) -> StatusMap {
    by_pattern(log, &PYTEST_LINE, 1, 2)
}

/// The statuses of the lines `pattern` matches: capture group `id` names the test and
/// `status` holds one of [`STATUSES`]; a later line for the same id wins.
fn by_pattern(log: &str, pattern: &Regex, id: usize, status: usize) -> StatusMap {
    let mut statuses = StatusMap::new();
    for line in log.split('\n') {
        if let Some(captures) = pattern.captures(line) {
            statuses.insert(captures[id].to_owned(), status_named(&captures[status]));
        }
    }
    statuses
}

/// `^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$`, matched on the stripped line.
static GO_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$").expect("go test pattern is valid")
});

/// `parse_log_gotest` (gin-gonic/gin): `go test -v`'s `--- PASS: Name (0.00s)` lines.
pub fn gotest(log: &str) -> StatusMap {
    let mut statuses = StatusMap::new();
    for line in log.split('\n') {
        if let Some(captures) = GO_LINE.captures(line.trim_matches(is_python_space)) {
            let status = match &captures[1] {
                "PASS" => TestStatus::Passed,
                "FAIL" => TestStatus::Failed,
                _ => TestStatus::Skipped,
            };
            statuses.insert(captures[2].to_owned(), status);
        }
    }
    statuses
}

/// `parse_log_mypy` (python/mypy, run as `pytest -rA -k …`): a line that contains
/// `PASSED` (else `FAILED`) anywhere gives its last word that status.
pub fn mypy(log: &str) -> StatusMap {
    let mut statuses = StatusMap::new();
    for line in log.split('\n') {
        let status = if line.contains("PASSED") {
            TestStatus::Passed
        } else if line.contains("FAILED") {
            TestStatus::Failed
        } else {
            continue;
        };
        if let Some(test) = python_words(line).last() {
            statuses.insert((*test).to_owned(), status);
        }
    }
    statuses
}

/// The start of python-slugify's unittest lines: `^([a-zA-Z0-9_\-,\.\s\(\)']+)\s\.{3}\s`.
const SLUGIFY_TEST: &str = r"^([a-zA-Z0-9_\-,\.\s\x1c-\x1f\(\)']+)[\s\x1c-\x1f]\.{3}[\s\x1c-\x1f]";

/// python-slugify's outcomes: the line ends `ok`, `FAIL` or `ERROR` right after ` ... `.
static SLUGIFY_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("{SLUGIFY_TEST}(ok|FAIL|ERROR)$")).expect("slugify pattern is valid")
});

/// `parse_log_python_slugify` (un33k/python-slugify, `python test.py --verbose`):
/// unittest's verbose `name (module.Class) ... ok` lines.
pub fn python_slugify(log: &str) -> StatusMap {
    let mut statuses = StatusMap::new();
    for line in log.split('\n') {
        if let Some(captures) = SLUGIFY_LINE.captures(line) {
            let status = match &captures[2] {
                "ok" => TestStatus::Passed,
                "FAIL" => TestStatus::Failed,
                _ => TestStatus::Error,
            };
            statuses.insert(captures[1].to_owned(), status);
        }
    }
    statuses
}

/// `parse_log_tornado` (tornadoweb/tornado, `python -m tornado.test --verbose`): unittest's
/// verbose lines: `… ... ok` passes, `… ... skipped …` is skipped, and the `ERROR: name
/// (module.Class)` / `FAIL: …` headings of the failure report fail the test they name.
pub fn tornado(log: &str) -> StatusMap {
    let mut statuses = StatusMap::new();
    for line in log.split('\n') {
        let before_dots = || line.split(" ... ").next().unwrap_or(line).to_owned();
        if line.ends_with("... ok") {
            statuses.insert(before_dots(), TestStatus::Passed);
        } else if line.contains(" ... skipped ") {
            statuses.insert(before_dots(), TestStatus::Skipped);
        } else if line.starts_with("ERROR:") || line.starts_with("FAIL:") {
            let words = python_words(line);
            let named = words.get(1..3.min(words.len())).unwrap_or_default();
            statuses.insert(named.join(" "), TestStatus::Failed);
        }
    }
    statuses
}

/// `^STATUS\s(\S+)`: pytest's `-rA` summary lines.
static PARAMIKO_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^(PASSED|FAILED|SKIPPED|ERROR|XFAIL){SPACE}([^\s\x1c-\x1f]+)"
    ))
    .expect("paramiko pattern is valid")
});

/// `parse_log_paramiko` (paramiko/paramiko, `pytest -rA`): the summary's `STATUS test_id`
/// lines.
pub fn paramiko(log: &str) -> StatusMap {
    by_pattern(log, &PARAMIKO_LINE, 2, 1)
}

/// `^\[gw\d\]\sSTATUS\s(\S+)`: pytest-xdist's verbose lines of workers 0 to 9.
static AUTOGRAD_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\[gw\d\]{SPACE}(PASSED|FAILED|SKIPPED|ERROR|XFAIL){SPACE}([^\s\x1c-\x1f]+)"
    ))
    .expect("autograd pattern is valid")
});

/// `parse_log_autograd` (HIPS/autograd, pytest with xdist): `[gw0] PASSED test_id` lines.
pub fn autograd(log: &str) -> StatusMap {
    by_pattern(log, &AUTOGRAD_LINE, 2, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_find_their_parser_and_others_the_default() {
        let log = "--- PASS: TestContext (0.00s)\n";
        assert_eq!(for_repo("gin-gonic/gin")(log).len(), 1);
        assert!(for_repo("pandas-dev/pandas")(log).is_empty());
        // SWE-smith looks repositories up exactly, case included.
        assert!(for_repo("Gin-Gonic/gin")(log).is_empty());
    }

    #[test]
    fn python_whitespace_includes_the_separators() {
        assert_eq!(python_words("a\u{1f}b  c"), ["a", "b", "c"]);
        assert!(python_words(" \t ").is_empty());
    }
}
