//! Test-log parsers: each turns a test runner's output into per-test [`TestStatus`]es.
//!
//! The Python parsers re-implement SWE-bench's (`swebench/harness/log_parsers/python.py`) so
//! that the test ids they produce are the ids in SWE-bench's `FAIL_TO_PASS` / `PASS_TO_PASS`
//! lists; [`cargo_exact`] and [`gotest`] re-implement its Rust and Go parsers ([`cargo`] reads
//! more of libtest's lines). [`junit`] reads JUnit
//! XML reports, which SWE-bench has no parser for. [`r2e_gym`] is R2E-Gym's own pytest
//! parser, for R2E-Gym's exact-status reward, and [`swe_smith`] SWE-smith's
//! default, with its six repository parsers in [`swe_smith::REPO_PARSERS`]
//! ([`crate::rule`]); [`multi_swe_bench`] holds Multi-SWE-bench's, by repository, and
//! [`multilingual`] SWE-bench Multilingual's TAP and jq parsers. Every parser is a plain
//! `fn(&str) -> StatusMap`: deterministic, and it never panics, whatever it is given.
//!
//! [`parser`] finds a parser by name (the names in [`PARSER_NAMES`]), [`parser_for_repo`]
//! names the parser SWE-bench uses for a repository, and [`test_output`] cuts the test output
//! out of a whole evaluation log.

mod cargo;
mod gotest;
mod junit;
pub mod multi_swe_bench;
mod multilingual;
mod output;
mod pytest;
pub mod r2e_gym;
pub mod swe_smith;
mod sympy;
mod unittest;

use std::collections::BTreeMap;

use crate::status::TestStatus;

pub use cargo::{cargo, cargo_exact};
pub use gotest::gotest;
pub use junit::junit;
pub use multilingual::{jq, tap};
pub use output::{END_TEST_OUTPUT, InvalidMarker, START_TEST_OUTPUT, TestOutput, test_output};
pub use pytest::{matplotlib, pytest, pytest_options, pytest_v2};
pub use r2e_gym::r2e_gym;
pub use swe_smith::swe_smith;
pub use sympy::sympy;
pub use unittest::django;

/// Test id → status, as a parser reads them from a log. Sorted, so reports are deterministic.
pub type StatusMap = BTreeMap<String, TestStatus>;

/// A log parser.
pub type Parser = fn(&str) -> StatusMap;

/// The statuses of the lines `pattern` matches, each line trimmed of surrounding white space
/// (SWE-bench's `re.match(pattern, line.strip())` loops): capture group `id` names the test
/// and `status` gives its status from the match, or `None` to record nothing; a later line
/// for the same test wins.
fn trimmed_line_statuses(
    log: &str,
    pattern: &regex::Regex,
    id: usize,
    status: impl Fn(&regex::Captures<'_>) -> Option<TestStatus>,
) -> StatusMap {
    let mut map = StatusMap::new();
    for line in log.split('\n') {
        let Some(captures) = pattern.captures(line.trim()) else {
            continue;
        };
        if let Some(status) = status(&captures) {
            map.insert(captures[id].to_owned(), status);
        }
    }
    map
}

/// The names [`parser`] knows.
pub const PARSER_NAMES: &[&str] = &[
    "pytest",
    "pytest_options",
    "pytest_v2",
    "matplotlib",
    "django",
    "unittest",
    "sympy",
    "cargo",
    "cargo_exact",
    "gotest",
    "junit",
    "r2e_gym",
    "swe_smith",
    "tap",
    "jq",
];

/// Every parser with its name. `unittest` is the Django parser: Django's runner prints
/// unittest's verbose format, and the parser accepts plain unittest output as well.
const PARSERS: &[(&str, Parser)] = &[
    ("pytest", pytest),
    ("pytest_options", pytest_options),
    ("pytest_v2", pytest_v2),
    ("matplotlib", matplotlib),
    ("django", django),
    ("unittest", django),
    ("sympy", sympy),
    ("cargo", cargo),
    ("cargo_exact", cargo_exact),
    ("gotest", gotest),
    ("junit", junit),
    ("r2e_gym", r2e_gym),
    ("swe_smith", swe_smith),
    ("tap", tap),
    ("jq", jq),
];

/// The parser called `name` (one of [`PARSER_NAMES`]).
pub fn parser(name: &str) -> Option<Parser> {
    PARSERS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// Repositories and the parser SWE-bench uses for each (v4's `MAP_REPO_TO_PARSER` for the
/// Python, Rust and Go repositories; SWE-bench Multilingual's for jq, axios and three.js).
const REPO_PARSERS: &[(&str, &str)] = &[
    // Python (swebench/harness/log_parsers/python.py).
    ("astropy/astropy", "pytest_v2"),
    ("django/django", "django"),
    ("marshmallow-code/marshmallow", "pytest"),
    ("matplotlib/matplotlib", "matplotlib"),
    // SWE-bench's seaborn parser reads the same `-rA` summary lines as `pytest`.
    ("mwaskom/seaborn", "pytest"),
    ("pallets/flask", "pytest"),
    ("psf/requests", "pytest_options"),
    ("pvlib/pvlib-python", "pytest"),
    ("pydata/xarray", "pytest"),
    ("pydicom/pydicom", "pytest_options"),
    ("pylint-dev/astroid", "pytest"),
    ("pylint-dev/pylint", "pytest_options"),
    ("pytest-dev/pytest", "pytest"),
    ("pyvista/pyvista", "pytest"),
    ("scikit-learn/scikit-learn", "pytest_v2"),
    ("sqlfluff/sqlfluff", "pytest"),
    ("sphinx-doc/sphinx", "pytest_v2"),
    ("sympy/sympy", "sympy"),
    // Rust (rust.py): SWE-bench's parse_log_cargo as it is.
    ("burntsushi/ripgrep", "cargo_exact"),
    ("sharkdp/bat", "cargo_exact"),
    ("astral-sh/ruff", "cargo_exact"),
    ("tokio-rs/tokio", "cargo_exact"),
    ("uutils/coreutils", "cargo_exact"),
    ("nushell/nushell", "cargo_exact"),
    ("tokio-rs/axum", "cargo_exact"),
    // C and JavaScript (SWE-bench Multilingual's c.py and javascript.py, b8d53321).
    ("jqlang/jq", "jq"),
    ("axios/axios", "tap"),
    ("mrdoob/three.js", "tap"),
    // Go (go.py).
    ("caddyserver/caddy", "gotest"),
    ("hashicorp/terraform", "gotest"),
    ("prometheus/prometheus", "gotest"),
    ("gohugoio/hugo", "gotest"),
    ("gin-gonic/gin", "gotest"),
    ("flipt-io/flipt", "gotest"),
    ("future-architect/vuls", "gotest"),
    ("gravitational/teleport", "gotest"),
    ("navidrome/navidrome", "gotest"),
];

/// The name of the parser SWE-bench uses for `repo` (`owner/name`, compared without regard
/// to ASCII case, as GitHub does), or `None` for a repository it has no parser here for.
pub fn parser_for_repo(repo: &str) -> Option<&'static str> {
    REPO_PARSERS
        .iter()
        .find(|(r, _)| r.eq_ignore_ascii_case(repo))
        .map(|(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_parser_and_every_repo_a_known_name() {
        assert_eq!(PARSER_NAMES.len(), PARSERS.len());
        for (name, (listed, _)) in PARSER_NAMES.iter().zip(PARSERS) {
            assert_eq!(name, listed);
            assert!(parser(name).is_some());
        }
        for (_, name) in REPO_PARSERS {
            assert!(PARSER_NAMES.contains(name), "{name}");
        }
        assert!(parser("nose").is_none());
    }

    #[test]
    fn repos_map_to_swe_bench_parsers() {
        assert_eq!(parser_for_repo("django/django"), Some("django"));
        assert_eq!(parser_for_repo("sympy/sympy"), Some("sympy"));
        assert_eq!(parser_for_repo("astropy/astropy"), Some("pytest_v2"));
        assert_eq!(parser_for_repo("psf/requests"), Some("pytest_options"));
        assert_eq!(parser_for_repo("pytest-dev/pytest"), Some("pytest"));
        assert_eq!(parser_for_repo("BurntSushi/ripgrep"), Some("cargo_exact"));
        assert_eq!(parser_for_repo("gin-gonic/gin"), Some("gotest"));
        assert_eq!(parser_for_repo("google/gson"), None);
    }
}
