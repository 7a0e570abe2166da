//! `go test -v` output (SWE-bench `parse_log_gotest`): `--- PASS: TestX (0.00s)`,
//! `--- FAIL: …`, `--- SKIP: …`; subtests are indented and named `TestX/sub`.

use std::sync::LazyLock;

use regex::Regex;

use super::StatusMap;
use crate::status::TestStatus;

/// A result line, trimmed.
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$").expect("result pattern is valid")
});

/// `go test -v` output.
pub fn gotest(log: &str) -> StatusMap {
    super::trimmed_line_statuses(log, &RESULT, 2, |c| {
        Some(match &c[1] {
            "PASS" => TestStatus::Passed,
            "FAIL" => TestStatus::Failed,
            _ => TestStatus::Skipped,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    #[test]
    fn reads_results_and_subtests() {
        let log = "\
=== RUN   TestParse
=== RUN   TestParse/empty
=== RUN   TestParse/unicode
--- FAIL: TestParse (0.01s)
    --- PASS: TestParse/empty (0.00s)
    --- FAIL: TestParse/unicode (0.00s)
        parse_test.go:40: got 1, want 2
=== RUN   TestNetwork
--- SKIP: TestNetwork (0.00s)
--- PASS: TestFormat (1.50s)
FAIL
FAIL	github.com/gin-gonic/gin	1.523s
";
        let expected: StatusMap = [
            ("TestParse", Failed),
            ("TestParse/empty", Passed),
            ("TestParse/unicode", Failed),
            ("TestNetwork", Skipped),
            ("TestFormat", Passed),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(gotest(log), expected);
    }
}
