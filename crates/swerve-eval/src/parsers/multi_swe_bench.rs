//! Multi-SWE-bench's log parsers: the `parse_log` of each repository's `Instance`
//! (`multi_swe_bench/harness/repos/<language>/<org>/<repo>.py`, Multi-SWE-bench commit
//! 24f493f8), for the family's reward rule ([`crate::rule::grade_multi_swe_bench`]), found
//! by [`for_repo`].
//!
//! Multi-SWE-bench's parsers collect three sets (passed, failed, skipped) line by line, each
//! line cut as Python's `str.splitlines` cuts and trimmed as `str.strip` trims, each pattern
//! tried with `re.match` (anchored at the start only). A test in two sets makes the
//! harness's `TestResult` refuse the log, so no report is made and the task is not resolved:
//! such a test is [`TestStatus::Error`] here, which the rule counts as a failure.
//! `scripts/multi-swe-bench-crosscheck.py` runs Multi-SWE-bench's own parsers on the
//! fixtures the tests compare against.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::{Parser, StatusMap};
use crate::status::TestStatus;

/// The repositories whose Multi-SWE-bench parser swerve has, with it (each is the parser of
/// the repository's class for rows without `number_interval` or `tag`).
pub const REPO_PARSERS: [(&str, Parser); 12] = [
    ("BurntSushi/ripgrep", cargo),
    ("clap-rs/clap", cargo),
    ("fmtlib/fmt", ctest),
    ("jqlang/jq", automake),
    ("nushell/nushell", cargo),
    ("rayon-rs/rayon", cargo),
    ("serde-rs/serde", cargo),
    ("sharkdp/bat", cargo),
    ("sharkdp/fd", cargo),
    ("tokio-rs/bytes", cargo),
    ("tokio-rs/tokio", cargo),
    ("tokio-rs/tracing", cargo),
];

/// The names of the repositories in [`REPO_PARSERS`].
pub fn repositories() -> Vec<&'static str> {
    REPO_PARSERS.iter().map(|(repo, _)| *repo).collect()
}

/// The parser Multi-SWE-bench uses for `repo` (`owner/name`, compared without regard to
/// ASCII case), or `None` for a repository whose parser swerve does not have.
pub fn for_repo(repo: &str) -> Option<Parser> {
    REPO_PARSERS
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(repo))
        .map(|(_, parser)| *parser)
}

/// The passed, failed and skipped tests as a parser collects them.
#[derive(Default)]
struct Sets {
    passed: BTreeSet<String>,
    failed: BTreeSet<String>,
    skipped: BTreeSet<String>,
}

impl Sets {
    /// One status per test; a test in more than one set is [`TestStatus::Error`].
    fn into_statuses(self) -> StatusMap {
        let mut map = StatusMap::new();
        for (set, status) in [
            (self.passed, TestStatus::Passed),
            (self.failed, TestStatus::Failed),
            (self.skipped, TestStatus::Skipped),
        ] {
            for test in set {
                map.entry(test)
                    .and_modify(|seen| *seen = TestStatus::Error)
                    .or_insert(status);
            }
        }
        map
    }
}

/// Python's `str.splitlines`: lines end at `\n`, `\r`, `\r\n`, `\v`, `\f`, U+001C–U+001E,
/// U+0085, U+2028 and U+2029.
fn python_lines(log: &str) -> impl Iterator<Item = &str> {
    let breaks = |c: char| {
        matches!(
            c,
            '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}'
                ..='\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
    };
    let mut rest = log;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(breaks).unwrap_or(rest.len());
        let line = &rest[..end];
        let after = &rest[end..];
        let skip = match after {
            _ if after.starts_with("\r\n") => 2,
            _ => after.chars().next().map_or(0, char::len_utf8),
        };
        rest = &after[skip..];
        Some(line)
    })
}

/// Patterns tried on every trimmed, non-empty line with `re.match`, each capturing the test
/// name into the set of its status (Passed, Failed or Skipped).
type Patterns = [(Regex, TestStatus)];

/// The sets `patterns` collect from `log`, as the repositories' `parse_log` loops do.
fn by_patterns(log: &str, patterns: &Patterns) -> StatusMap {
    let mut sets = Sets::default();
    for line in python_lines(log) {
        let line = line.trim_matches(super::swe_smith::is_python_space);
        for (pattern, status) in patterns {
            let Some(found) = pattern.captures(line) else {
                continue;
            };
            let set = match status {
                TestStatus::Passed => &mut sets.passed,
                TestStatus::Failed => &mut sets.failed,
                _ => &mut sets.skipped,
            };
            set.insert(found[1].to_owned());
        }
    }
    sets.into_statuses()
}

/// Compiles a parser's patterns (written as in the Python source).
fn patterns<const N: usize>(sources: [(&str, TestStatus); N]) -> [(Regex, TestStatus); N] {
    sources.map(|(source, status)| {
        let pattern = Regex::new(source).expect("Multi-SWE-bench pattern is valid");
        (pattern, status)
    })
}

/// The Rust repositories' patterns (the `...` are any three characters, as in the source).
static CARGO: LazyLock<[(Regex, TestStatus); 3]> = LazyLock::new(|| {
    patterns([
        (r"^test (\S+) ... ok", TestStatus::Passed),
        (r"^test (\S+) ... FAILED", TestStatus::Failed),
        (r"^test (\S+) ... ignored", TestStatus::Skipped),
    ])
});

/// The Rust repositories' `parse_log` (`tokio_rs/bytes.py`, `sharkdp/fd.py`, …): a trimmed
/// line starting `test NAME ... ok`, `... FAILED` or `... ignored`. Unlike SWE-bench's
/// ([`super::cargo`]), a doc test (`test src/lib.rs - f (line 3) ... ok`) or a
/// `should panic` test is not read: its name has a space.
pub fn cargo(log: &str) -> StatusMap {
    by_patterns(log, &*CARGO)
}

/// jq's patterns (`c/jqlang/jq.py`): automake's test driver, `PASS: tests/jqtest`.
static AUTOMAKE: LazyLock<[(Regex, TestStatus); 3]> = LazyLock::new(|| {
    patterns([
        (r"^PASS: (\S+)$", TestStatus::Passed),
        (r"^FAIL: (\S+)$", TestStatus::Failed),
        (r"^SKIP: (\S+)$", TestStatus::Skipped),
    ])
});

/// jq's `parse_log`: `make check`'s `PASS: NAME`, `FAIL: NAME`, `SKIP: NAME` lines
/// (`XFAIL`, `XPASS` and `ERROR` are not read).
pub fn automake(log: &str) -> StatusMap {
    by_patterns(log, &*AUTOMAKE)
}

/// fmt's patterns (`cpp/fmtlib/fmt.py`): ctest's `1/20 Test  #1: name ....   Passed`.
static CTEST: LazyLock<[(Regex, TestStatus); 2]> = LazyLock::new(|| {
    patterns([
        (
            r"^\d+/\d+\s*Test\s*#\d+:\s*(.*?)\s*\.+\s*Passed",
            TestStatus::Passed,
        ),
        (
            r"^\d+/\d+\s*Test\s*#\d+:\s*(.*?)\s*\.+\s*\*+Failed$",
            TestStatus::Failed,
        ),
    ])
});

/// fmt's `parse_log`: ctest's result lines, `Passed`, or `***Failed` at the very end of
/// the line. ctest prints the time after `***Failed`, so a failing test is in practice not
/// read (absent from the log, as in Multi-SWE-bench), nor is one that crashed, timed out or
/// did not run.
pub fn ctest(log: &str) -> StatusMap {
    by_patterns(log, &*CTEST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn map(entries: &[(&str, TestStatus)]) -> StatusMap {
        entries.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn reads_the_lines_multi_swe_bench_reads() {
        let log = "running 5 tests\r\n  test buf::one ... ok\n\
test buf::two ... FAILED\x0btest buf::three ... ignored, slow\n\
test src/lib.rs - f (line 3) ... ok\n\
test panics - should panic ... ok\n\
test quoted_ok ... okay\n";
        assert_eq!(
            cargo(log),
            map(&[
                ("buf::one", Passed),
                ("buf::two", Failed),
                ("buf::three", Skipped),
                ("quoted_ok", Passed),
            ])
        );
    }

    #[test]
    fn a_test_both_passing_and_failing_is_an_error() {
        let log = "test same ... ok\ntest same ... FAILED\ntest other ... ok\n";
        assert_eq!(cargo(log), map(&[("other", Passed), ("same", Error)]));
    }

    #[test]
    fn lines_split_as_python_splits_them() {
        let lines: Vec<&str> = python_lines("a\r\nb\rc\u{2028}d\n\ne").collect();
        assert_eq!(lines, ["a", "b", "c", "d", "", "e"]);
        assert_eq!(python_lines("x\n").count(), 1);
    }

    #[test]
    fn reads_make_checks_and_ctests_lines() {
        let log = "PASS: tests/jqtest\n  FAIL: tests/onigtest\nSKIP: tests/shtest\n\
XFAIL: tests/x\nPASS: two words\n";
        assert_eq!(
            automake(log),
            map(&[
                ("tests/jqtest", Passed),
                ("tests/onigtest", Failed),
                ("tests/shtest", Skipped),
            ])
        );
        let log = "      Start  1: args-test\n\
 1/3 Test  #1: args-test ........................   Passed    0.01 sec\n\
 2/3 Test  #2: base-test ........................***Failed    0.02 sec\n\
 3/3 Test  #3: slow-test ........................***Timeout  10.00 sec\n\
 4/4 Test  #4: bare-test ........................***Failed\n";
        // As in Python: a `***Failed` line that goes on with its time is not read.
        assert_eq!(
            ctest(log),
            map(&[("args-test", Passed), ("bare-test", Failed)])
        );
    }

    #[test]
    fn known_repositories_have_their_parser() {
        let log = "test a ... ok\nPASS: tests/jqtest\n1/1 Test #1: fmt-test ..... Passed 0.1 sec\n";
        let parsed = |repo: &str| for_repo(repo).map(|parse| parse(log));
        assert_eq!(parsed("tokio-rs/bytes"), Some(cargo(log)));
        assert_eq!(parsed("burntsushi/ripgrep"), Some(map(&[("a", Passed)])));
        assert_eq!(parsed("jqlang/jq"), Some(map(&[("tests/jqtest", Passed)])));
        assert_eq!(parsed("fmtlib/fmt"), Some(map(&[("fmt-test", Passed)])));
        assert!(for_repo("google/gson").is_none());
    }
}
