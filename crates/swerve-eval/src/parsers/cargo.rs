//! `cargo test` output (SWE-bench `parse_log_cargo`): `test a::b ... ok` / `... FAILED`.
//!
//! [`cargo_exact`] is SWE-bench's parser as it is (`log_parsers/rust.py` at b8d53321), for the
//! rows SWE-bench's own specs grade (SWE-bench Multilingual). [`cargo`] reads more, beyond
//! SWE-bench: `ignored` (and `ignored, reason`) gives SKIPPED, a `#[should_panic]`
//! test's `test a::b - should panic ... ok` gives `a::b`, and doc tests
//! (`test src/lib.rs - f (line 3) ... ok`) keep their spaced names. Any other outcome word
//! is not recorded, as in SWE-bench.

use std::sync::LazyLock;

use regex::Regex;

use super::StatusMap;
use crate::status::TestStatus;

/// `test NAME ... OUTCOME` on a trimmed line.
static TEST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test\s+(.+?)\s+\.\.\.\s+(\w+)(, .*)?$").expect("test-line pattern is valid")
});

/// `test NAME ... OUTCOME` with a name without spaces, on a trimmed line: SWE-bench's pattern.
static EXACT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test\s+(\S+)\s+\.\.\.\s+(\w+)$").expect("exact test-line pattern is valid")
});

/// SWE-bench's `parse_log_cargo` exactly: `ok` passes and `FAILED` fails; any other outcome
/// (`ignored`), a `#[should_panic]` test's `NAME - should panic ... ok` and a doc test's
/// spaced name are not recorded, so a listed test that SWE-bench would not find is missing
/// here too.
pub fn cargo_exact(log: &str) -> StatusMap {
    super::trimmed_line_statuses(log, &EXACT_LINE, 1, |c| match &c[2] {
        "ok" => Some(TestStatus::Passed),
        "FAILED" => Some(TestStatus::Failed),
        _ => None,
    })
}

/// `cargo test` / libtest output.
pub fn cargo(log: &str) -> StatusMap {
    let mut map = StatusMap::new();
    for line in log.split('\n') {
        let Some(c) = TEST_LINE.captures(line.trim()) else {
            continue;
        };
        let status = match (&c[2], c.get(3)) {
            ("ok", None) => TestStatus::Passed,
            ("FAILED", None) => TestStatus::Failed,
            ("ignored", _) => TestStatus::Skipped,
            _ => continue,
        };
        let name = &c[1];
        let name = name.strip_suffix(" - should panic").unwrap_or(name);
        map.insert(name.to_owned(), status);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    #[test]
    fn reads_libtest_lines() {
        let log = "\
running 6 tests
test search::tests::one ... ok
test search::tests::two ... FAILED
test search::tests::three ... ignored
test search::tests::four ... ignored, needs network
test search::tests::panics - should panic ... ok
test search::tests::bench ... bench:         120 ns/iter (+/- 3)
test src/lib.rs - Searcher::new (line 42) ... ok

failures:
test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out
";
        let expected: StatusMap = [
            ("search::tests::one", Passed),
            ("search::tests::two", Failed),
            ("search::tests::three", Skipped),
            ("search::tests::four", Skipped),
            ("search::tests::panics", Passed),
            ("src/lib.rs - Searcher::new (line 42)", Passed),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(cargo(log), expected);
    }

    #[test]
    fn cargo_exact_reads_only_what_swe_benchs_pattern_reads() {
        // tokio-rs__axum-1119's empty run (`cargo test --package axum --lib slash`), as
        // recorded, and the other forms `cargo` reads beyond SWE-bench.
        let log = "\
test routing::test_replace_trailing_slash ... ok
test routing::tests::not_found_for_extra_trailing_slash ... FAILED
test routing::tests::routes_must_start_with_slash - should panic ... ok
test search::tests::three ... ignored
test search::tests::four ... ignored, needs network
test src/lib.rs - Searcher::new (line 42) ... ok
test result: FAILED. 9 passed; 3 failed; 0 ignored; 0 measured; 190 filtered out; finished in 0.01s
";
        let expected: StatusMap = [
            ("routing::test_replace_trailing_slash", Passed),
            ("routing::tests::not_found_for_extra_trailing_slash", Failed),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(cargo_exact(log), expected);
        assert_eq!(cargo(log).len(), 6);
    }
}
