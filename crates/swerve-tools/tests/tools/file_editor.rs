//! `file_editor` over a temporary workspace: every command and error text.

use crate::common;

use common::Workspace;
use serde_json::json;
use swerve_core::ToolCall;
use swerve_tools::{TRUNCATED_MESSAGE, ToolConfig};

const TWELVE_LINES: &str =
    "line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\nline11\nline12\n";

#[test]
fn full_view_and_observation() {
    let mut ws = Workspace::new();
    ws.write("a.py", "def f():\n\treturn 1\n");
    let result = ws.call(
        "file_editor",
        &[("command", "view"), ("path", "/testbed/a.py")],
    );
    let expected = "Here's the result of running `cat -n` on the file: /testbed/a.py:\n     1 def f():\n     2 \treturn 1\n";
    assert_eq!(result.output, expected);
    assert_eq!(
        result.observation,
        format!("Execution output of [file_editor]:\n{expected}")
    );
    assert_eq!(result.error_code, "0");
    assert!(!result.is_error && !result.done);
}

#[test]
fn relative_paths_are_taken_from_the_repository_root() {
    let mut ws = Workspace::new();
    ws.write("pkg/m.rs", "fn main() {}\n");
    for path in ["pkg/m.rs", "./pkg/m.rs", "/testbed//pkg/./m.rs"] {
        assert_eq!(
            ws.edit(&[("command", "view"), ("path", path)]),
            "Here's the result of running `cat -n` on the file: /testbed/pkg/m.rs:\n     1 fn main() {}\n"
        );
    }
}

#[test]
fn view_range_slices_and_validates() {
    let mut ws = Workspace::new();
    ws.write("f.txt", TWELVE_LINES);
    let view = |ws: &mut Workspace, range: &str| {
        ws.edit(&[
            ("command", "view"),
            ("path", "/testbed/f.txt"),
            ("view_range", range),
        ])
    };
    assert_eq!(
        view(&mut ws, "[11, -1]"),
        "Here's the result of running `cat -n` on the file: /testbed/f.txt:\n    11 line11\n    12 line12\n"
    );
    assert_eq!(
        view(&mut ws, "[2, 3]"),
        "Here's the result of running `cat -n` on the file: /testbed/f.txt:\n     2 line2\n     3 line3\n"
    );
    assert_eq!(
        view(&mut ws, "[0, 3]"),
        "\nERROR: Invalid view_range [0, 3]: start line must be in [1, 12]\n"
    );
    assert_eq!(
        view(&mut ws, "[13, -1]"),
        "\nERROR: Invalid view_range [13, -1]: start line must be in [1, 12]\n"
    );
    assert_eq!(
        view(&mut ws, "[5, 4]"),
        "\nERROR: Invalid view_range [5, 4]: end must be >= start and <= 12, or -1 to view until end.\n"
    );
    assert_eq!(
        view(&mut ws, "[5, 13]"),
        "\nERROR: Invalid view_range [5, 13]: end must be >= start and <= 12, or -1 to view until end.\n"
    );
    assert_eq!(
        view(&mut ws, "abc"),
        "ERROR: Invalid view_range 'abc': expected two integers such as [11, 12] (use -1 as the end to view until the end of the file).\n"
    );
    // JSON arrays work as well as R2E's strings.
    let call = ToolCall::new("file_editor")
        .arg("command", "view")
        .arg("path", "/testbed/f.txt")
        .arg("view_range", json!([12, 12]));
    assert_eq!(
        ws.toolbox.call(&call).output,
        "Here's the result of running `cat -n` on the file: /testbed/f.txt:\n    12 line12\n"
    );
}

#[test]
fn directory_listing_two_levels_without_hidden() {
    let mut ws = Workspace::new();
    ws.write("b.txt", "");
    ws.write("a.py", "");
    ws.write(".hidden/x.py", "");
    ws.write("sub/c.py", "");
    ws.write("sub/.h.py", "");
    ws.write("sub/deep/more/e.py", "");
    let expected = "Here's the files and directories up to 2 levels deep in /testbed, excluding hidden:\n/testbed\n/testbed/a.py\n/testbed/b.txt\n/testbed/sub\n/testbed/sub/c.py\n/testbed/sub/deep\n\n";
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed")]),
        expected
    );
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/sub/")]),
        "Here's the files and directories up to 2 levels deep in /testbed/sub, excluding hidden:\n/testbed/sub\n/testbed/sub/c.py\n/testbed/sub/deep\n/testbed/sub/deep/more\n\n"
    );
}

#[test]
fn python_only_mode_is_r2e_gym() {
    let mut ws = Workspace::with_config(ToolConfig {
        python_only: true,
        ..ToolConfig::default()
    });
    ws.write("b.txt", "text\n");
    ws.write("a.py", "x = 1\n");
    ws.write("sub/c.md", "");
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed")]),
        "Here's the files and directories up to 2 levels deep in /testbed, excluding hidden:\n/testbed\n/testbed/a.py\n/testbed/sub\n\n"
    );
    // Upstream prints its own `ERROR: ` prefix inside the error, after an empty line.
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/b.txt")]),
        "\nERROR: ERROR: Viewing non-Python files is disallowed for saving context. File 'b.txt' is not a .py file.\n"
    );
}

#[test]
fn create_makes_parents_and_refuses_to_overwrite() {
    let mut ws = Workspace::new();
    let output = ws.edit(&[
        ("command", "create"),
        ("path", "/testbed/new/dir/x.py"),
        ("file_text", "print(1)\n\tx"),
    ]);
    assert_eq!(
        output,
        "File created at /testbed/new/dir/x.py. Here's the result of running `cat -n` on /testbed/new/dir/x.py:\n     1\tprint(1)\n     2\t        x\nReview the file and make sure that it is as expected. Edit the file if necessary.\n"
    );
    assert_eq!(ws.read("new/dir/x.py"), "print(1)\n\tx");
    assert_eq!(
        ws.edit(&[
            ("command", "create"),
            ("path", "/testbed/new/dir/x.py"),
            ("file_text", "y")
        ]),
        "ERROR: File already exists at: /testbed/new/dir/x.py. Cannot overwrite with 'create'.\n"
    );
    assert_eq!(
        ws.edit(&[("command", "create"), ("path", "/testbed/other.py")]),
        "ERROR: Cannot create file without 'file_text' parameter.\n"
    );
}

#[test]
fn str_replace_shows_a_snippet_and_enforces_uniqueness() {
    let mut ws = Workspace::new();
    ws.write("f.txt", TWELVE_LINES);
    let output = ws.edit(&[
        ("command", "str_replace"),
        ("path", "/testbed/f.txt"),
        ("old_str", "line6"),
        ("new_str", "LINE6\nextra"),
    ]);
    assert_eq!(
        output,
        "The file /testbed/f.txt has been edited. Here's the result of running `cat -n` on a snippet of /testbed/f.txt:\n     2\tline2\n     3\tline3\n     4\tline4\n     5\tline5\n     6\tLINE6\n     7\textra\n     8\tline7\n     9\tline8\n    10\tline9\n    11\tline10\nReview the changes and make sure they are as expected. Edit the file again if necessary.\n"
    );
    assert_eq!(
        ws.read("f.txt"),
        TWELVE_LINES.replace("line6", "LINE6\nextra")
    );

    assert_eq!(
        ws.edit(&[
            ("command", "str_replace"),
            ("path", "/testbed/f.txt"),
            ("old_str", "nope"),
            ("new_str", "x")
        ]),
        "ERROR: No occurrences of 'nope' found in /testbed/f.txt for replacement.\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "str_replace"),
            ("path", "/testbed/f.txt"),
            ("old_str", "line1"),
            ("new_str", "x")
        ]),
        "ERROR: Multiple occurrences of 'line1' found in /testbed/f.txt. Please ensure it is unique before using str_replace.\n"
    );
    assert_eq!(
        ws.edit(&[("command", "str_replace"), ("path", "/testbed/f.txt")]),
        "ERROR: Missing required parameter 'old_str' for 'str_replace'.\n"
    );
}

#[test]
fn str_replace_without_new_str_deletes_near_the_top() {
    let mut ws = Workspace::new();
    ws.write("g.txt", "a\nb\nc\n");
    assert_eq!(
        ws.edit(&[
            ("command", "str_replace"),
            ("path", "/testbed/g.txt"),
            ("old_str", "b\n")
        ]),
        "The file /testbed/g.txt has been edited. Here's the result of running `cat -n` on a snippet of /testbed/g.txt:\n     1\ta\n     2\tc\n     3\t\nReview the changes and make sure they are as expected. Edit the file again if necessary.\n"
    );
    assert_eq!(ws.read("g.txt"), "a\nc\n");
}

#[test]
fn edits_keep_crlf_tabs_permissions_and_trailing_newline_state() {
    use std::os::unix::fs::PermissionsExt;
    let mut ws = Workspace::new();
    ws.write("w.bat", "one\r\ntwo\r\nthree\r\n");
    ws.edit(&[
        ("command", "str_replace"),
        ("path", "/testbed/w.bat"),
        ("old_str", "one\ntwo"),
        ("new_str", "1\n2"),
    ]);
    assert_eq!(ws.read("w.bat"), "1\r\n2\r\nthree\r\n");

    ws.write("Makefile", "all:\n\techo hi");
    let path = ws.root().join("Makefile");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    ws.edit(&[
        ("command", "str_replace"),
        ("path", "/testbed/Makefile"),
        ("old_str", "hi"),
        ("new_str", "bye"),
    ]);
    assert_eq!(ws.read("Makefile"), "all:\n\techo bye");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o751
    );
    // No temporary files are left behind.
    let names: Vec<_> = std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn expand_tabs_mode_matches_r2e_gym() {
    let mut ws = Workspace::with_config(ToolConfig {
        expand_tabs: true,
        ..ToolConfig::default()
    });
    ws.write("t.py", "if x:\n\ty = 1\n");
    ws.edit(&[
        ("command", "str_replace"),
        ("path", "/testbed/t.py"),
        ("old_str", "        y = 1"),
        ("new_str", "\ty = 2"),
    ]);
    assert_eq!(ws.read("t.py"), "if x:\n        y = 2\n");
}

#[test]
fn insert_after_a_line_with_bounds() {
    let mut ws = Workspace::new();
    ws.write("f.txt", TWELVE_LINES);
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("insert_line", "6"),
            ("new_str", "new A\nnew B")
        ]),
        "The file /testbed/f.txt has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n     3\tline3\n     4\tline4\n     5\tline5\n     6\tline6\n     7\tnew A\n     8\tnew B\n     9\tline7\n    10\tline8\n    11\tline9\n    12\tline10\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n"
    );
    assert!(
        ws.read("f.txt")
            .starts_with("line1\nline2\nline3\nline4\nline5\nline6\nnew A\nnew B\nline7\n")
    );
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("insert_line", "0"),
            ("new_str", "top")
        ]),
        "The file /testbed/f.txt has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\ttop\n     2\tline1\n     3\tline2\n     4\tline3\n     5\tline4\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n"
    );
    // 15 lines plus the empty piece after the final newline, as R2E-Gym counts them.
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("insert_line", "17"),
            ("new_str", "x")
        ]),
        "ERROR: Invalid insert_line 17. Must be in [0, 16].\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("insert_line", "-1"),
            ("new_str", "x")
        ]),
        "ERROR: Invalid insert_line -1. Must be in [0, 16].\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("insert_line", "x"),
            ("new_str", "x")
        ]),
        "ERROR: Invalid insert_line 'x': expected an integer line number.\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("insert_line", "1")
        ]),
        "ERROR: Missing required parameter 'new_str' for 'insert'.\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "insert"),
            ("path", "/testbed/f.txt"),
            ("new_str", "x")
        ]),
        "ERROR: Missing required parameter 'insert_line' for 'insert'.\n"
    );
}

#[test]
fn undo_edit_walks_back_through_history() {
    let mut ws = Workspace::new();
    ws.write("u.txt", "a\nb\n");
    ws.edit(&[
        ("command", "str_replace"),
        ("path", "/testbed/u.txt"),
        ("old_str", "a"),
        ("new_str", "A"),
    ]);
    ws.edit(&[
        ("command", "insert"),
        ("path", "/testbed/u.txt"),
        ("insert_line", "2"),
        ("new_str", "c"),
    ]);
    assert_eq!(ws.read("u.txt"), "A\nb\nc\n");
    assert_eq!(
        ws.edit(&[("command", "undo_edit"), ("path", "/testbed/u.txt")]),
        "Last edit to /testbed/u.txt undone successfully. Here's the result of running `cat -n` on /testbed/u.txt:\n     1\tA\n     2\tb\n     3\t\n\n"
    );
    // The same file through another spelling of its path shares the history.
    ws.edit(&[("command", "undo_edit"), ("path", "u.txt")]);
    assert_eq!(ws.read("u.txt"), "a\nb\n");
    assert_eq!(
        ws.edit(&[("command", "undo_edit"), ("path", "/testbed/u.txt")]),
        "ERROR: No previous edits found for /testbed/u.txt to undo.\n"
    );

    ws.edit(&[
        ("command", "create"),
        ("path", "/testbed/made.py"),
        ("file_text", "x"),
    ]);
    assert_eq!(
        ws.edit(&[("command", "undo_edit"), ("path", "/testbed/made.py")]),
        "Last edit to /testbed/made.py undone successfully. Here's the result of running `cat -n` on /testbed/made.py:\n     1\t\n\n"
    );
    assert!(!ws.root().join("made.py").exists());
}

#[test]
fn path_and_command_errors() {
    let mut ws = Workspace::new();
    ws.write("a.py", "x\n");
    ws.write("d/x.py", "x\n");
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/missing.py")]),
        "ERROR: The path '/testbed/missing.py' does not exist.\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "str_replace"),
            ("path", "/testbed/d"),
            ("old_str", "x")
        ]),
        "ERROR: The path '/testbed/d' is a directory. Only 'view' can be used on directories.\n"
    );
    assert_eq!(
        ws.edit(&[("command", "delete"), ("path", "/testbed/a.py")]),
        "ERROR: Unrecognized command 'delete'. Allowed commands: view, create, str_replace, insert, undo_edit.\n"
    );
    assert_eq!(
        ws.edit(&[("command", "view")]),
        "ERROR: Missing required parameter 'path' for 'view'.\n"
    );
    assert_eq!(
        ws.edit(&[("path", "/testbed/a.py")]),
        "ERROR: Missing required parameter 'command' for 'file_editor'. Allowed commands: view, create, str_replace, insert, undo_edit.\n"
    );
    let result = ws.call(
        "file_editor",
        &[("command", "view"), ("path", "/etc/passwd")],
    );
    assert_eq!(
        result.output,
        "ERROR: The path '/etc/passwd' is outside the repository /testbed. Only paths under /testbed can be used.\n"
    );
    assert!(result.is_error);
    assert_eq!(result.error_code, "0");
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/../etc/passwd")]),
        "ERROR: The path '/testbed/../etc/passwd' is outside the repository /testbed. Only paths under /testbed can be used.\n"
    );
}

#[test]
fn symlinks_inside_are_followed_and_escapes_refused() {
    use std::os::unix::fs::symlink;
    let mut ws = Workspace::new();
    ws.write("real/a.txt", "hello\n");
    symlink("real", ws.root().join("rel_link")).unwrap();
    symlink("/testbed/real/a.txt", ws.root().join("abs_link")).unwrap();
    symlink("/etc", ws.root().join("etc_link")).unwrap();
    symlink("../..", ws.root().join("real/up")).unwrap();
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/rel_link/a.txt")]),
        "Here's the result of running `cat -n` on the file: /testbed/rel_link/a.txt:\n     1 hello\n"
    );
    ws.edit(&[
        ("command", "str_replace"),
        ("path", "/testbed/abs_link"),
        ("old_str", "hello"),
        ("new_str", "bye"),
    ]);
    assert_eq!(ws.read("real/a.txt"), "bye\n");
    assert!(
        std::fs::symlink_metadata(ws.root().join("abs_link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/etc_link/passwd")]),
        "ERROR: The path '/testbed/etc_link/passwd' leads outside the repository /testbed: the symbolic link '/testbed/etc_link' points to '/etc'.\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "create"),
            ("path", "/testbed/real/up/evil.py"),
            ("file_text", "x")
        ]),
        "ERROR: The path '/testbed/real/up/evil.py' leads outside the repository /testbed: the symbolic link '/testbed/real/up' points to '../..'.\n"
    );
    // The listing shows in-repository links and does not descend into escaping ones.
    let listing = ws.edit(&[("command", "view"), ("path", "/testbed")]);
    assert!(listing.contains("/testbed/rel_link/a.txt\n"), "{listing}");
    assert!(
        listing.contains("/testbed/etc_link\n") && !listing.contains("/testbed/etc_link/"),
        "{listing}"
    );
}

#[test]
fn binary_non_utf8_and_huge_files_are_refused() {
    let mut ws = Workspace::with_config(ToolConfig {
        max_file_bytes: 1000,
        ..ToolConfig::default()
    });
    ws.write("bin.dat", b"ab\0cd");
    ws.write("latin.txt", b"caf\xe9\n");
    ws.write("big.log", "x".repeat(1001));
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/bin.dat")]),
        "ERROR: The file '/testbed/bin.dat' is a binary file (it contains NUL bytes); only text files can be viewed or edited.\n"
    );
    assert_eq!(
        ws.edit(&[
            ("command", "str_replace"),
            ("path", "/testbed/latin.txt"),
            ("old_str", "caf")
        ]),
        "ERROR: The file '/testbed/latin.txt' is not valid UTF-8 (first invalid byte at offset 3); only UTF-8 text files can be viewed or edited. Inspect it with execute_bash instead (e.g. `file`, `iconv`, `grep -n`).\n"
    );
    assert_eq!(
        ws.edit(&[("command", "view"), ("path", "/testbed/big.log")]),
        "ERROR: The file '/testbed/big.log' is too large to load (1001 bytes; the limit is 1000 bytes). Use `grep -n` to find the lines you need and print them with `sed -n 'START,ENDp' /testbed/big.log` instead.\n"
    );
}

#[test]
fn long_outputs_are_clipped_at_max_response_len() {
    let mut ws = Workspace::new();
    let text: String = (1..=3000).map(|i| format!("line number {i}\n")).collect();
    ws.write("long.txt", &text);
    let output = ws.edit(&[("command", "view"), ("path", "/testbed/long.txt")]);
    let header = "Here's the result of running `cat -n` on the file: /testbed/long.txt:\n";
    let full: String = header.to_owned()
        + &(1..=3000)
            .map(|i| format!("{i:6} line number {i}"))
            .collect::<Vec<_>>()
            .join("\n");
    let expected = format!("{}{TRUNCATED_MESSAGE}\n", &full[..10_000]);
    assert_eq!(output, expected);
}

#[test]
fn long_python_files_get_the_condensed_view() {
    let mut ws = Workspace::new();
    let mut source = String::from("import os\n\n\nclass Big:\n");
    for i in 0..20 {
        source.push_str(&format!("    def method_{i}(self):\n        a = {i}\n        b = a + 1\n        c = b + 1\n        return c\n\n"));
    }
    ws.write("big.py", &source);
    let output = ws.edit(&[("command", "view"), ("path", "/testbed/big.py")]);
    let header = "Here is a condensed view for file: /testbed/big.py; [Note: Useful for understanding file structure in a concise manner. Please use specific view_range without concise cmd if you want to explore further into the relevant parts.]\n";
    let mut lines = vec![
        "     1 import os".to_owned(),
        "     2 ".into(),
        "     3 ".into(),
        "     4 class Big:".into(),
    ];
    for i in 0..20 {
        let def = 5 + 6 * i;
        lines.push(format!("{def:6}     def method_{i}(self):"));
        lines.push(format!(
            "{:6} ... eliding lines {}-{} ...",
            def + 1,
            def + 1,
            def + 4
        ));
        lines.push(format!("{:6} ", def + 5));
    }
    assert_eq!(output, format!("{header}{}\n", lines.join("\n")));
    // A view_range shows the real lines.
    assert_eq!(
        ws.edit(&[
            ("command", "view"),
            ("path", "/testbed/big.py"),
            ("view_range", "[6, 6]")
        ]),
        "Here's the result of running `cat -n` on the file: /testbed/big.py:\n     6         a = 0\n"
    );
    ws.write("bad.py", "x = '''\n".repeat(60) + "y = (\n");
    assert_eq!(
        ws.edit(&[
            ("command", "view"),
            ("path", "/testbed/bad.py"),
            ("concise", "True")
        ]),
        "ERROR: Syntax error for file /testbed/bad.py: '(' was never closed (/testbed/bad.py, line 61)\n"
    );
}

#[test]
fn edit_failures_are_classified_from_the_editors_own_texts() {
    use swerve_tools::{EditFailure, edit_failure};
    let mut ws = Workspace::new();
    ws.write("a.py", "x = 1\nx = 1\ny = 2\n");
    type Arguments<'a> = &'a [(&'a str, &'a str)];
    let cases: [(Arguments, Option<EditFailure>); 10] = [
        (
            &[
                ("command", "str_replace"),
                ("path", "/testbed/a.py"),
                ("old_str", "y = 2"),
                ("new_str", "y = 3"),
            ],
            None,
        ),
        (
            &[
                ("command", "str_replace"),
                ("path", "/testbed/a.py"),
                ("old_str", "z = 9"),
            ],
            Some(EditFailure::Match),
        ),
        (
            &[
                ("command", "str_replace"),
                ("path", "/testbed/a.py"),
                ("old_str", "x = 1"),
            ],
            Some(EditFailure::Match),
        ),
        (
            &[("command", "str_replace"), ("path", "/testbed/a.py")],
            Some(EditFailure::Format),
        ),
        (
            &[
                ("command", "insert"),
                ("path", "/testbed/a.py"),
                ("insert_line", "99"),
                ("new_str", "w = 0"),
            ],
            Some(EditFailure::Format),
        ),
        (
            &[
                ("command", "insert"),
                ("path", "/testbed/a.py"),
                ("insert_line", "one"),
                ("new_str", "w = 0"),
            ],
            Some(EditFailure::Format),
        ),
        (
            &[
                ("command", "insert"),
                ("path", "/testbed/a.py"),
                ("new_str", "w"),
            ],
            Some(EditFailure::Format),
        ),
        (
            &[("command", "create"), ("path", "/testbed/b.py")],
            Some(EditFailure::Format),
        ),
        (
            &[
                ("command", "create"),
                ("path", "/testbed/a.py"),
                ("file_text", "x"),
            ],
            Some(EditFailure::Other),
        ),
        (
            &[
                ("command", "str_replace"),
                ("path", "/testbed/missing.py"),
                ("old_str", "x"),
            ],
            Some(EditFailure::Other),
        ),
    ];
    for (args, expected) in cases {
        let output = ws.edit(args);
        assert_eq!(edit_failure(&output), expected, "{args:?}: {output}");
    }
}

#[test]
fn commands_left_out_of_the_settings_are_refused_and_an_empty_list_removes_the_tool() {
    use swerve_tools::FileEditorCommand;
    let mut ws = Workspace::with_config(ToolConfig {
        file_editor_commands: vec![FileEditorCommand::View],
        ..ToolConfig::default()
    });
    ws.write("a.py", "x = 1\n");
    let result = ws.call(
        "file_editor",
        &[
            ("command", "str_replace"),
            ("path", "/testbed/a.py"),
            ("old_str", "x = 1"),
            ("new_str", "x = 2"),
        ],
    );
    assert_eq!(
        result.output,
        "ERROR: The command 'str_replace' is not offered in this set-up. Allowed commands: view.\n"
    );
    assert!(result.is_error);
    assert_eq!(ws.read("a.py"), "x = 1\n", "nothing was written");
    assert_eq!(
        swerve_tools::edit_failure(&result.output),
        Some(swerve_tools::EditFailure::Other)
    );
    assert!(
        !ws.edit(&[("command", "view"), ("path", "/testbed/a.py")])
            .contains("ERROR")
    );

    let mut ws = Workspace::with_config(ToolConfig {
        file_editor_commands: Vec::new(),
        ..ToolConfig::default()
    });
    ws.write("a.py", "x = 1\n");
    let result = ws.call(
        "file_editor",
        &[("command", "view"), ("path", "/testbed/a.py")],
    );
    assert!(result.is_error);
    assert_eq!(
        result.observation,
        "Invalid Action: input action must be one of allowed actions \n Allowed actions: ['search', 'execute_bash', 'finish'] \n Input action: file_editor\n"
    );
}
