//! `search` over a temporary workspace: directory and file searches, every message.

use crate::common;

use common::Workspace;
use swerve_tools::ToolConfig;

fn sample(config: ToolConfig) -> Workspace {
    let ws = Workspace::with_config(config);
    ws.write("a.py", "foo\nbar foo\n");
    ws.write("sub/b.py", "foo\n");
    ws.write("sub/deep/c.txt", "xfoo\r\n");
    ws.write("z.py", "nothing\n");
    ws.write(".hidden/h.py", "foo\n");
    ws.write("ignored/i.py", "foo\n");
    ws.write(".gitignore", "ignored/\n");
    ws.write("bin.dat", b"foo\0");
    ws
}

fn search(ws: &mut Workspace, args: &[(&str, &str)]) -> String {
    ws.call("search", args).output
}

#[test]
fn directory_search_counts_per_file() {
    let mut ws = sample(ToolConfig::default());
    let result = ws.call("search", &[("search_term", "foo"), ("path", "/testbed")]);
    let expected = "Found 4 matches for \"foo\" in /testbed:\n./a.py (2 matches)\n./sub/b.py (1 matches)\n./sub/deep/c.txt (1 matches)\nEnd of matches for \"foo\" in /testbed\n";
    assert_eq!(result.output, expected);
    assert_eq!(
        result.observation,
        format!("Execution output of [search]:\n{expected}")
    );
    assert_eq!(result.error_code, "0");
    // `path` defaults to the repository root.
    assert_eq!(search(&mut ws, &[("search_term", "foo")]), expected);
    assert_eq!(
        search(&mut ws, &[("search_term", "foo"), ("path", "sub")]),
        "Found 2 matches for \"foo\" in /testbed/sub:\n./sub/b.py (1 matches)\n./sub/deep/c.txt (1 matches)\nEnd of matches for \"foo\" in /testbed/sub\n"
    );
    assert_eq!(
        search(&mut ws, &[("search_term", "foo"), ("python_only", "true")]),
        "Found 3 matches for \"foo\" in /testbed:\n./a.py (2 matches)\n./sub/b.py (1 matches)\nEnd of matches for \"foo\" in /testbed\n"
    );
    assert_eq!(
        search(&mut ws, &[("search_term", "zzz")]),
        "No matches found for \"zzz\" in /testbed\n"
    );
}

#[test]
fn python_only_config_and_file_cap() {
    let mut ws = sample(ToolConfig {
        python_only: true,
        search_max_files: 1,
        ..ToolConfig::default()
    });
    assert_eq!(
        search(&mut ws, &[("search_term", "foo")]),
        "More than 2 files matched for \"foo\" in /testbed. Please narrow your search.\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[
                ("search_term", "foo"),
                ("python_only", "false"),
                ("path", "/testbed/sub/deep")
            ]
        ),
        "Found 1 matches for \"foo\" in /testbed/sub/deep:\n./sub/deep/c.txt (1 matches)\nEnd of matches for \"foo\" in /testbed/sub/deep\n"
    );
}

#[test]
fn gitignore_of_parent_directories_applies_to_subdirectory_searches() {
    let mut ws = Workspace::new();
    ws.write(".gitignore", "/sub/deep\n*.log\n");
    ws.write("sub/x.txt", "needle\n");
    ws.write("sub/y.log", "needle\n");
    ws.write("sub/deep/z.txt", "needle\n");
    ws.write("sub/.gitignore", "!keep.log\n");
    ws.write("sub/keep.log", "needle\n");
    let expected = |dir: &str| {
        format!(
            "Found 2 matches for \"needle\" in {dir}:\n./sub/keep.log (1 matches)\n./sub/x.txt (1 matches)\nEnd of matches for \"needle\" in {dir}\n"
        )
    };
    assert_eq!(
        search(&mut ws, &[("search_term", "needle")]),
        expected("/testbed")
    );
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "needle"), ("path", "/testbed/sub")]
        ),
        expected("/testbed/sub")
    );
}

#[test]
fn hidden_or_ignored_directories_can_be_searched_explicitly() {
    let mut ws = sample(ToolConfig::default());
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/.hidden")]
        ),
        "Found 1 matches for \"foo\" in /testbed/.hidden:\n./.hidden/h.py (1 matches)\nEnd of matches for \"foo\" in /testbed/.hidden\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/ignored")]
        ),
        "Found 1 matches for \"foo\" in /testbed/ignored:\n./ignored/i.py (1 matches)\nEnd of matches for \"foo\" in /testbed/ignored\n"
    );
}

#[test]
fn file_search_prints_grep_lines() {
    let mut ws = sample(ToolConfig::default());
    ws.write("w.txt", "  foo  \nnone\nfoo bar   \n");
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/a.py")]
        ),
        "Matches for \"foo\" in /testbed/a.py:\n1:foo\n2:bar foo\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/w.txt")]
        ),
        "Matches for \"foo\" in /testbed/w.txt:\n1:  foo  \n3:foo bar\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "zzz"), ("path", "/testbed/a.py")]
        ),
        "No matches found for \"zzz\" in /testbed/a.py\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/bin.dat")]
        ),
        "Matches for \"foo\" in /testbed/bin.dat:\nBinary file /testbed/bin.dat matches\n"
    );
}

#[test]
fn line_cap_regex_and_errors() {
    let mut ws = sample(ToolConfig {
        search_max_line_matches: Some(1),
        ..ToolConfig::default()
    });
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/a.py")]
        ),
        "Matches for \"foo\" in /testbed/a.py:\n1:foo\n[1 more matching lines not shown; use a more specific search term]\n"
    );
    assert_eq!(
        search(&mut ws, &[("search_term", "ba[rz]"), ("path", "a.py")]),
        "No matches found for \"ba[rz]\" in /testbed/a.py\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[
                ("search_term", "^ba[rz]"),
                ("path", "a.py"),
                ("regex", "true")
            ]
        ),
        "Matches for \"^ba[rz]\" in /testbed/a.py:\n2:bar foo\n"
    );
    let invalid = ws.call("search", &[("search_term", "("), ("regex", "true")]);
    assert!(
        invalid
            .output
            .starts_with("ERROR: Invalid regular expression '(': regex parse error"),
        "{}",
        invalid.output
    );
    assert!(invalid.is_error);
    assert_eq!(invalid.error_code, "Error: Exit code 1");

    let missing = ws.call("search", &[("search_term", "x"), ("path", "/testbed/nope")]);
    assert_eq!(
        missing.output,
        "Directory '/testbed/nope' not found or not a directory.\n"
    );
    assert_eq!(missing.error_code, "Error: Exit code 1");
    assert_eq!(
        search(&mut ws, &[("path", "/testbed")]),
        "ERROR: Missing required parameter 'search_term' for 'search'.\n"
    );
    assert_eq!(
        search(&mut ws, &[("search_term", "x"), ("path", "/")]),
        "ERROR: The path '/' is outside the repository /testbed. Only paths under /testbed can be used.\n"
    );
}

#[test]
fn symlinked_directories_are_searched_at_their_real_path_and_links_inside_skipped() {
    use std::os::unix::fs::symlink;
    let mut ws = sample(ToolConfig::default());
    symlink("sub", ws.root().join("alias")).unwrap();
    symlink("/etc/passwd", ws.root().join("sub/passwd")).unwrap();
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "foo"), ("path", "/testbed/alias")]
        ),
        "Found 2 matches for \"foo\" in /testbed/sub:\n./sub/b.py (1 matches)\n./sub/deep/c.txt (1 matches)\nEnd of matches for \"foo\" in /testbed/sub\n"
    );
    assert_eq!(
        search(
            &mut ws,
            &[("search_term", "root"), ("path", "/testbed/sub")]
        ),
        "No matches found for \"root\" in /testbed/sub\n"
    );
}
