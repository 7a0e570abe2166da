//! No parser, nor the log checks, panics on any input, and every parser is deterministic.

use proptest::prelude::*;
use swerve_eval::grading;
use swerve_eval::parsers::{self, PARSER_NAMES};

/// Fragments of real logs, so generated text reaches the parsers' deeper paths.
const FRAGMENTS: &[&str] = &[
    "PASSED ",
    "FAILED ",
    "SKIPPED [1] ",
    "ERROR ",
    "XFAIL ",
    " - ",
    "::",
    "[",
    "]",
    "/",
    "//",
    "*",
    " ... ",
    " ...",
    "ok",
    "OK",
    "FAIL",
    "ERROR:",
    "FAIL:",
    "skipped 'x'",
    "expected failure",
    " (m.T)",
    " (i=1)",
    "test_",
    " F",
    " E",
    "___ ",
    ".py:",
    " ___",
    "test ",
    " - should panic",
    "ignored, r",
    "--- PASS: ",
    "--- FAIL: ",
    " (0.00s)",
    "<testsuite>",
    "<testsuites>",
    "</testsuite>",
    "<testcase name=\"a\" classname=\"b\">",
    "<testcase name='x'/>",
    "</testcase>",
    "<failure/>",
    "<error>",
    "<skipped type=\"pytest.xfail\"/>",
    "&amp;",
    "&bogus;",
    "<![CDATA[",
    "]]>",
    "<!--",
    "<?xml ",
    "\x1b[31m",
    "[0m",
    "\r",
    "\t",
    "\u{1}",
    "é",
    "💥",
    ">>>>> Start Test Output",
    ">>>>> End Test Output",
    ">>>>> Test Exit Code: ",
    "-",
    "99999999999",
    "0",
    "1",
    ">>>>> Tests Timed Out",
    "Applying sites.0002_alter_domain_unique...test_no_migrations",
    "Executed 3 of 3",
    "\n",
    "\n",
    "\n",
    " ",
];

fn logs() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..80).prop_map(|f| f.concat()),
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(FRAGMENTS).prop_map(str::to_owned),
                any::<String>()
            ],
            0..40
        )
        .prop_map(|f| f.concat()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parsers_never_panic(log in logs()) {
        for name in PARSER_NAMES {
            let parse = parsers::parser(name).unwrap();
            let first = parse(&log);
            prop_assert_eq!(first, parse(&log), "{} is not deterministic", name);
            let _ = grading::check_log(&log, parse);
        }
        for (repo, parse) in parsers::swe_smith::REPO_PARSERS {
            let first = parse(&log);
            prop_assert_eq!(first, parse(&log), "SWE-smith's parser of {} is not deterministic", repo);
        }
        let out = parsers::test_output(&log);
        prop_assert!(out.text.len() <= log.len());
    }
}
