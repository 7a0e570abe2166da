//! SWE-agent's toolset (`tools.toolset = "swe_agent"`) through the toolbox, with calls as
//! the fenced format reads them from replies (the long-context RL seed's scaffold, §3.3).

use crate::common;

use common::Workspace;
use swerve_tools::formats::{FencedFormat, ModelOutput, ToolFormat};
use swerve_tools::{ToolConfig, ToolResult, Toolset};

fn workspace() -> Workspace {
    Workspace::with_config(ToolConfig {
        toolset: Toolset::SweAgent,
        ..ToolConfig::default()
    })
}

/// Runs the one command of `reply` as the agent loop would.
fn run(ws: &mut Workspace, reply: &str) -> ToolResult {
    let parsed = FencedFormat.parse(&ModelOutput::from_text(reply)).unwrap();
    ws.toolbox.call(&parsed.call)
}

fn numbered(count: usize) -> String {
    (1..=count).map(|n| format!("line {n}\n")).collect()
}

#[test]
fn open_goto_and_scroll_move_a_100_line_window() {
    let mut ws = workspace();
    ws.write("src/big.py", numbered(250));
    let opened = run(&mut ws, "Look.\n```\nopen src/big.py\n```");
    assert!(!opened.is_error, "{}", opened.observation);
    let observation = &opened.observation;
    assert!(
        observation.starts_with("[File: /testbed/src/big.py (250 lines total)]\n1:line 1\n"),
        "{observation}"
    );
    assert!(
        observation.contains("100:line 100\n(150 more lines below)\n"),
        "{observation}"
    );
    assert!(
        observation
            .ends_with("(Open file: /testbed/src/big.py)\n(Current directory: /testbed)\nbash-$")
    );

    // goto 200: centre max(200 + 50 - 16, 1) = 234, constrained to 250 - 50 = 200.
    let moved = run(&mut ws, "```\ngoto 200\n```").observation;
    assert!(
        moved.contains("(150 more lines above)\n151:line 151\n"),
        "{moved}"
    );
    assert!(moved.contains("250:line 250\n(Open file"), "{moved}");
    let up = run(&mut ws, "```\nscroll_up\n```").observation;
    assert!(up.contains("(52 more lines above)\n53:line 53\n"), "{up}");
    let error = run(&mut ws, "```\ngoto 999\n```");
    assert!(error.is_error);
    assert!(
        error
            .observation
            .starts_with("Error: <line> must be less than or equal to 250")
    );
}

#[test]
fn edit_replaces_a_line_range_of_the_open_or_named_file() {
    let mut ws = workspace();
    ws.write("a.py", "def f(x):\n    return x\n\nprint(f(1))\n");
    run(&mut ws, "```\nopen a.py\n```");
    let edited = run(
        &mut ws,
        "Fix.\n```\nedit 2:2\n    return x + 1\nend_of_edit\n```",
    );
    assert!(!edited.is_error, "{}", edited.observation);
    assert_eq!(
        ws.read("a.py"),
        "def f(x):\n    return x + 1\n\nprint(f(1))\n"
    );
    assert!(edited.observation.contains("2:    return x + 1\n"));
    assert!(
        edited
            .observation
            .contains("File updated. Please review the changes")
    );
    // Insert before line 1 (end = start - 1) in a file named by the command.
    ws.write("b.py", "x = 1\n");
    let inserted = run(&mut ws, "```\nedit b.py 1:0\nimport os\nend_of_edit\n```");
    assert!(!inserted.is_error, "{}", inserted.observation);
    assert_eq!(ws.read("b.py"), "import os\nx = 1\n");
    assert!(inserted.observation.contains("(Open file: /testbed/b.py)"));
    // Errors name what is wrong and change nothing.
    for (reply, message) in [
        (
            "```\nedit 5:9\nx\nend_of_edit\n```",
            "is not within the file's 2 lines",
        ),
        (
            "```\nedit 1:1\nno terminator\n```",
            "must end with a line holding only end_of_edit",
        ),
        (
            "```\nedit one:2\nx\nend_of_edit\n```",
            "start_line must be a number",
        ),
    ] {
        let result = run(&mut ws, reply);
        assert!(result.is_error, "{reply}");
        assert!(
            result.observation.contains(message),
            "{}",
            result.observation
        );
    }
    assert_eq!(ws.read("b.py"), "import os\nx = 1\n");
}

#[test]
fn search_commands_and_the_shell() {
    let mut ws = workspace();
    ws.write("pkg/one.py", "def target():\n    pass\n");
    ws.write("pkg/two.py", "target()\ntarget()\n");
    let found = run(&mut ws, "```\nsearch_dir target pkg\n```").observation;
    assert!(
        found.starts_with("Found 3 matches for \"target\" in pkg:\n"),
        "{found}"
    );
    assert!(
        found.contains("pkg/one.py (1 matches)\npkg/two.py (2 matches)\n"),
        "{found}"
    );
    assert!(found.contains("End of matches for \"target\" in pkg"));
    let in_file = run(&mut ws, "```\nsearch_file \"def target\" pkg/one.py\n```").observation;
    assert!(in_file.contains("Line 1:def target():\n"), "{in_file}");
    let files = run(&mut ws, "```\nfind_file two.py\n```").observation;
    assert!(
        files.contains("Found 1 matches for \"two.py\" in ./:\n./pkg/two.py\n"),
        "{files}"
    );
    let none = run(&mut ws, "```\nsearch_file target\n```");
    assert!(
        none.observation
            .starts_with("No file open. Use the open command first.")
    );

    let shell = run(&mut ws, "```\nls pkg && echo oops >&2\n```");
    assert_eq!(
        shell.observation,
        "one.py\ntwo.py\noops\n(Open file: n/a)\n(Current directory: /testbed)\nbash-$"
    );
    let quiet = run(&mut ws, "```\ntrue\n```").observation;
    assert!(quiet.starts_with("Your command ran successfully and did not produce any output.\n"));
    let created = run(&mut ws, "```\ncreate new.py\n```");
    assert!(
        created
            .observation
            .starts_with("[File: /testbed/new.py (1 lines total)]\n1:\n"),
        "{}",
        created.observation
    );
    let submitted = run(&mut ws, "Done.\n```\nsubmit\n```");
    assert!(submitted.done);
}

/// SWE-Edit's and SWE-World's names for R2E-Gym's tools (`tools.rename`).
#[test]
fn renamed_tools_run_under_their_new_names_only() {
    let mut config = ToolConfig::default();
    config
        .rename
        .insert("file_editor".into(), "str_replace_editor".into());
    config.rename.insert("finish".into(), "submit".into());
    let mut ws = Workspace::with_config(config);
    ws.write("a.py", "x = 1\n");
    let viewed = ws.call(
        "str_replace_editor",
        &[("command", "view"), ("path", "/testbed/a.py")],
    );
    assert!(!viewed.is_error, "{}", viewed.observation);
    assert!(
        viewed
            .observation
            .starts_with("Execution output of [str_replace_editor]:\n"),
        "{}",
        viewed.observation
    );
    let old = ws.call(
        "file_editor",
        &[("command", "view"), ("path", "/testbed/a.py")],
    );
    assert!(old.is_error);
    assert!(
        old.observation
            .contains("'str_replace_editor', 'search', 'execute_bash', 'submit'"),
        "{}",
        old.observation
    );
    assert!(ws.call("submit", &[("command", "submit")]).done);
}
