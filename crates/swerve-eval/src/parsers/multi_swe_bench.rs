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

/// The repositories whose Multi-SWE-bench parser swerve has; each parses with [`cargo`]
/// (`cargo test`'s `test NAME ... ok` lines) in its class for rows without
/// `number_interval` or `tag`.
pub const REPOSITORIES: [&str; 10] = [
    "BurntSushi/ripgrep",
    "clap-rs/clap",
    "nushell/nushell",
    "rayon-rs/rayon",
    "serde-rs/serde",
    "sharkdp/bat",
    "sharkdp/fd",
    "tokio-rs/bytes",
    "tokio-rs/tokio",
    "tokio-rs/tracing",
];

/// The parser Multi-SWE-bench uses for `repo` (`owner/name`, compared without regard to
/// ASCII case), or `None` for a repository whose parser swerve does not have.
pub fn for_repo(repo: &str) -> Option<Parser> {
    REPOSITORIES
        .iter()
        .any(|known| known.eq_ignore_ascii_case(repo))
        .then_some(cargo as Parser)
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

/// The patterns of the Rust repositories' `parse_log` (the `...` are any three characters,
/// as in the Python source).
static CARGO_PATTERNS: LazyLock<[(Regex, TestStatus); 3]> = LazyLock::new(|| {
    let pattern = |text: &str| Regex::new(text).expect("cargo pattern is valid");
    [
        (pattern(r"^test (\S+) ... ok"), TestStatus::Passed),
        (pattern(r"^test (\S+) ... FAILED"), TestStatus::Failed),
        (pattern(r"^test (\S+) ... ignored"), TestStatus::Skipped),
    ]
});

/// The Rust repositories' `parse_log` (`tokio_rs/bytes.py`, `sharkdp/fd.py`, …): a trimmed
/// line starting `test NAME ... ok`, `... FAILED` or `... ignored`. Unlike SWE-bench's
/// ([`super::cargo`]), a doc test (`test src/lib.rs - f (line 3) ... ok`) or a
/// `should panic` test is not read: its name has a space.
pub fn cargo(log: &str) -> StatusMap {
    let mut sets = Sets::default();
    for line in python_lines(log) {
        let line = line.trim_matches(super::swe_smith::is_python_space);
        for (pattern, status) in CARGO_PATTERNS.iter() {
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
    fn known_repositories_have_a_parser() {
        assert!(for_repo("tokio-rs/bytes").is_some());
        assert!(for_repo("burntsushi/ripgrep").is_some());
        assert!(for_repo("fmtlib/fmt").is_none());
    }
}
