//! SWE-bench Multilingual's parsers for the C and JavaScript repositories swerve runs
//! (`swebench/harness/log_parsers/{c,javascript}.py`, commit b8d53321): [`tap`] (TAP lines,
//! SWE-bench's `parse_log_tap`, which it uses for `axios/axios` and `mrdoob/three.js`) and
//! [`jq`] (automake's `PASS:` / `FAIL:` lines, `parse_log_jq`). The Rust repositories use
//! [`super::cargo`] (`parse_log_cargo`).
//!
//! Each reads every line with surrounding whitespace removed, as SWE-bench's
//! `re.match(pattern, line.strip())` does; a later line for the same test wins.

use std::sync::LazyLock;

use regex::Regex;

use super::StatusMap;
use crate::status::TestStatus;

/// `ok N NAME` / `not ok N NAME` (`^(ok|not ok) (\d+) (.+)$`).
static TAP_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(ok|not ok) (\d+) (.+)$").expect("TAP pattern is valid"));

/// `PASS: NAME` / `FAIL: NAME` (`^\s*(PASS|FAIL):\s(.+)$`); automake's `SKIP:`, `XFAIL:`
/// and `ERROR:` are not read, as in SWE-bench.
static AUTOMAKE_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(PASS|FAIL):\s(.+)$").expect("automake pattern is valid"));

/// TAP output (mocha's `-R tap`): `ok` passes, `not ok` fails; the test's number is dropped,
/// so the id is the rest of the line (mocha's full title).
pub fn tap(log: &str) -> StatusMap {
    super::trimmed_line_statuses(log, &TAP_LINE, 3, |c| {
        Some(if &c[1] == "ok" {
            TestStatus::Passed
        } else {
            TestStatus::Failed
        })
    })
}

/// jq's `make check` (automake's test driver, the oniguruma submodule's tests included).
pub fn jq(log: &str) -> StatusMap {
    super::trimmed_line_statuses(log, &AUTOMAKE_LINE, 2, |c| {
        Some(if &c[1] == "PASS" {
            TestStatus::Passed
        } else {
            TestStatus::Failed
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn map(entries: &[(&str, TestStatus)]) -> StatusMap {
        entries
            .iter()
            .map(|(id, status)| ((*id).to_owned(), *status))
            .collect()
    }

    #[test]
    fn tap_reads_mochas_lines() {
        // axios__axios-4731's empty run: `npx mocha -R tap test/unit/adapters/http.js -g
        // 'body length'` in swerve's eval sandbox, as recorded.
        let log = "\
+ npx mocha -R tap test/unit/adapters/http.js -g 'body length'
ok 1 supports http with nodejs should support max body length
not ok 2 supports http with nodejs should properly support default max body length (follow-redirects as well)
  request should have succeeded
  AssertionError [ERR_ASSERTION]: request should have succeeded
      at Timeout._onTimeout (test/unit/adapters/http.js:591:16)
# tests 2
# pass 1
# fail 1
1..2
+ SWEBENCH_TEST_EXIT_CODE=1
";
        assert_eq!(
            tap(log),
            map(&[
                (
                    "supports http with nodejs should support max body length",
                    Passed
                ),
                (
                    "supports http with nodejs should properly support default max body length (follow-redirects as well)",
                    Failed
                ),
            ])
        );
    }

    #[test]
    fn tap_needs_the_number_and_a_name() {
        // SWE-bench's pattern: a number, then a name; a plan line or a bare `ok` is nothing.
        let log = "1..2\nok\nok 3\nnot ok x name\n   ok 4 indented counts  \n";
        assert_eq!(tap(log), map(&[("indented counts", Passed)]));
    }

    #[test]
    fn jq_reads_automakes_result_lines_not_its_summary() {
        // jqlang__jq-2728's empty run: lines from the end of jq's `make check` (automake's test
        // driver) in swerve's eval sandbox, as recorded.
        let log = "\
PASS: tests/optionaltest
PASS: tests/mantest
PASS: tests/jqtest
FAIL: tests/shtest
PASS: tests/utf8test
============================================================================
Testsuite summary for jq 1.6-292-g87e3dfd-dirty
============================================================================
# TOTAL: 8
# PASS:  7
# SKIP:  0
# FAIL:  1
# ERROR: 0
";
        assert_eq!(
            jq(log),
            map(&[
                ("tests/optionaltest", Passed),
                ("tests/mantest", Passed),
                ("tests/jqtest", Passed),
                ("tests/shtest", Failed),
                ("tests/utf8test", Passed),
            ])
        );
        // SKIP, XFAIL and ERROR lines are not read, as in SWE-bench; indented lines are.
        assert_eq!(
            jq("SKIP: a\nXFAIL: b\nERROR: c\n  PASS: d\nPASS:e\n"),
            map(&[("d", Passed)])
        );
    }
}
