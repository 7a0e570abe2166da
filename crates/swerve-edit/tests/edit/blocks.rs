//! SEARCH/REPLACE blocks: parsing, application, every documented error text, the
//! whole-file rewrite, and the two matching aids with their notes.

use swerve_edit::blocks::{ApplyError, Fallback, MatchOptions, Mode, apply, parse_blocks};
use swerve_edit::ranges::LineRange;

const FILE: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";

fn block(search: &str, replace: &str) -> String {
    format!("<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n")
}

fn paper() -> MatchOptions {
    MatchOptions::default()
}

fn aided() -> MatchOptions {
    MatchOptions {
        whitespace_fallback: true,
        did_you_mean: true,
    }
}

#[test]
fn blocks_apply_in_order_on_the_text_the_previous_ones_left() {
    let reply = format!(
        "Here you go.\n{}{}",
        block("    return a + b\n", "    return b + a\n"),
        block(
            "return b + a\n\n\ndef sub",
            "return b + a\n\n\ndef subtract"
        ),
    );
    let applied = apply(FILE, &reply, &paper()).unwrap();
    assert_eq!(applied.mode, Mode::Targeted);
    assert_eq!(applied.blocks, 2);
    assert!(applied.fallbacks.is_empty());
    assert_eq!(
        applied.text,
        FILE.replace("a + b", "b + a")
            .replace("def sub", "def subtract")
    );
}

#[test]
fn parsing_follows_the_exact_markers() {
    let blocks = parse_blocks(&format!(
        "<think>{}</think>\n```\n{}```",
        block("draft\n", "x\n"),
        block("a\n", "")
    ));
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].search, "a\n");
    assert_eq!(blocks[0].replace, "");
    // CRLF replies read as LF.
    assert_eq!(
        parse_blocks("<<<<<<< SEARCH\r\na\r\n=======\r\nb\r\n>>>>>>> REPLACE").len(),
        1
    );
    // A newline is required after SEARCH and after =======.
    for reply in [
        "<<<<<<< SEARCH a\n=======\nb\n>>>>>>> REPLACE",
        "<<<<<<< SEARCH\na\n=======b\n>>>>>>> REPLACE",
        "<<<<<<< SEARCH\na\n=======\nb\n",
        "<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE",
    ] {
        assert!(parse_blocks(reply).is_empty(), "{reply}");
    }
}

#[test]
fn every_documented_error_text() {
    let cases: Vec<(String, &str)> = vec![
        (
            "I would rename it.".to_owned(),
            "ERROR: LLM did not produce valid search-replace blocks. LLM output was:\nI would rename it.",
        ),
        (
            "<think>thinking</think>\nNo blocks here.".to_owned(),
            "ERROR: LLM did not produce valid search-replace blocks. LLM output was:\nNo blocks here.",
        ),
        (
            format!("{}{}", block("", "new file\n"), block("a\n", "b\n")),
            "ERROR: Full rewrite mode (empty SEARCH) requires exactly one SEARCH/REPLACE block.",
        ),
        (
            format!(
                "{}{}",
                block("    return a + b\n", "x\n"),
                block("  \n", "y\n")
            ),
            "ERROR: Full rewrite mode (empty SEARCH) requires exactly one SEARCH/REPLACE block.",
        ),
        (
            block("    return a / b\n", "x\n"),
            "ERROR: Could not find the search block in the file.",
        ),
        (
            block("(a, b):\n", "(a, b, c):\n"),
            "ERROR: Found 3 occurrences of the search block.",
        ),
        (
            format!(
                "{}{}",
                block("def add", "def mul"),
                block("def mul(a, b):\n", "def times(a, b):\n")
            ),
            "ERROR: Found 2 occurrences of the search block.",
        ),
    ];
    for (reply, expected) in cases {
        let error = apply(FILE, &reply, &paper()).unwrap_err();
        assert_eq!(error.message(), expected, "{reply}");
        let format_error =
            expected.contains("valid search-replace") || expected.contains("Full rewrite");
        assert_eq!(error.is_format_error(), format_error, "{reply}");
    }
}

#[test]
fn an_empty_search_rewrites_the_whole_file_keeping_its_final_newline() {
    let applied = apply(FILE, &block("", "x = 1\n\n\n"), &paper()).unwrap();
    assert_eq!(applied.mode, Mode::Rewrite);
    assert_eq!(applied.text, "x = 1\n");
    let applied = apply("no newline", &block("\n", "y = 2\n"), &paper()).unwrap();
    assert_eq!(applied.text, "y = 2");
}

#[test]
fn whitespace_fallback_applies_a_unique_loose_match_and_reindents() {
    let reply = block(
        "def sub(a, b):\n  return a - b\n",
        "def sub(a, b):\n  return b - a\n",
    );
    assert!(matches!(
        apply(FILE, &reply, &paper()),
        Err(ApplyError::NotFound { .. })
    ));
    let options = MatchOptions {
        whitespace_fallback: true,
        did_you_mean: false,
    };
    let applied = apply(FILE, &reply, &options).unwrap();
    assert_eq!(applied.text, FILE.replace("a - b", "b - a"));
    assert_eq!(
        applied.fallbacks,
        [Fallback {
            block: 1,
            lines: LineRange { start: 5, end: 6 }
        }]
    );
    // Matching two places loosely is still not found.
    let twice = "if x:\n    go()\nif x:\n  go()\n";
    let error = apply(twice, &block("if x:\n go()\n", "stop()\n"), &options).unwrap_err();
    assert_eq!(
        error.message(),
        "ERROR: Could not find the search block in the file."
    );
}

#[test]
fn did_you_mean_shows_the_closest_lines_or_the_occurrences() {
    let reply = format!(
        "{}{}",
        block("    return a + b\n", "    return b + a\n"),
        block("def sub(x, y):\n    return x - y\n", "pass\n")
    );
    let error = apply(FILE, &reply, &aided()).unwrap_err();
    let message = error.message();
    assert!(
        message.starts_with("ERROR: Could not find the search block in the file.\n\nSEARCH block 2 of 2 was:\ndef sub(x, y):\n    return x - y\n\nDid you mean lines 5-6 ("),
        "{message}"
    );
    assert!(
        message.ends_with("% similar)?\n     5\tdef sub(a, b):\n     6\t    return a - b"),
        "{message}"
    );
    let error = apply(FILE, &block("zzz qqq\n", "x\n"), &aided()).unwrap_err();
    assert!(
        error
            .message()
            .ends_with("\nNo lines of the file resemble it."),
        "{}",
        error.message()
    );
    let error = apply(FILE, &block("(a, b):\n", "()\n"), &aided()).unwrap_err();
    assert_eq!(
        error.message(),
        "ERROR: Found 3 occurrences of the search block.\n\nSEARCH block 1 occurs at lines 1, 5, 9."
    );
}
