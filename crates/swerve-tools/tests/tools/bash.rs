//! `execute_bash` through a real `/bin/sh` in a temporary workspace.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Workspace;
use swerve_core::{ExecOutcome, Shell, ToolCall};
use swerve_tools::{ToolConfig, Toolbox, WorkspaceFs};

fn bash(ws: &mut Workspace, cmd: &str) -> swerve_tools::ToolResult {
    ws.call("execute_bash", &[("cmd", cmd)])
}

#[test]
fn success_layout_and_observation() {
    let mut ws = Workspace::new();
    ws.write("hello.txt", "hi there\n");
    let result = bash(&mut ws, "cat hello.txt; echo oops >&2");
    assert_eq!(result.output, "[STDOUT]\n\nhi there \n\n[STDERR]\n\noops\n");
    assert_eq!(result.error_code, "0");
    assert!(!result.is_error);
    assert_eq!(
        result.observation,
        "Exit code: 0\nExecution output of [execute_bash]:\n[STDOUT]\n\nhi there \n\n[STDERR]\n\noops\n"
    );
    // SWE-AGILE's parameter name works too.
    let result = ws.call("execute_bash", &[("command", "pwd")]);
    assert_eq!(
        result.output,
        format!("[STDOUT]\n\n{} \n\n[STDERR]\n\n\n", ws.root().display())
    );
}

#[test]
fn failures_are_prefixed_and_coded() {
    let mut ws = Workspace::new();
    let result = bash(&mut ws, "echo out; echo err >&2; exit 3");
    assert_eq!(
        result.output,
        "Error executing command:\n\n[STDOUT]\n\nout \n\n[STDERR]\n\nerr\n"
    );
    assert_eq!(result.error_code, "Error: Exit code 3");
    assert!(result.is_error);
    assert_eq!(
        result.observation,
        "Exit code: Error: Exit code 3\nExecution output of [execute_bash]:\nError executing command:\n\n[STDOUT]\n\nout \n\n[STDERR]\n\nerr\n"
    );
    let killed = bash(&mut ws, "kill -9 $$");
    assert_eq!(killed.error_code, "Error: Exit code 137");
}

#[test]
fn ansi_codes_and_carriage_returns_are_stripped() {
    let mut ws = Workspace::new();
    let result = bash(
        &mut ws,
        r"printf '\033[1;31mred\033[0m\r\nline\r\n'; printf '\033[32mwarn\033[0m' >&2",
    );
    assert_eq!(
        result.output,
        "[STDOUT]\n\nred\nline \n\n[STDERR]\n\nwarn\n"
    );
}

#[test]
fn blocked_and_missing_commands() {
    let mut ws = Workspace::new();
    for (cmd, word) in [
        ("cd /tmp", "cd"),
        ("  pip install x", "pip"),
        ("nohup sleep 1", "nohup"),
    ] {
        let result = bash(&mut ws, cmd);
        assert_eq!(
            result.output,
            format!(
                "Bash command '{word}' is not allowed. Please use a different command or tool.\n"
            )
        );
        assert_eq!(result.error_code, "Error: Exit code 1");
        assert!(result.is_error);
    }
    let result = ws.call("execute_bash", &[]);
    assert_eq!(
        result.output,
        "ERROR: Missing required parameter 'cmd' for 'execute_bash'.\n"
    );
    assert!(result.is_error);

    let mut custom = Workspace::with_config(ToolConfig {
        blocked_commands: vec!["git".into()],
        bash_param: "command".into(),
        ..ToolConfig::default()
    });
    assert!(
        bash(&mut custom, "git status")
            .output
            .starts_with("Bash command 'git' is not allowed.")
    );
    assert_eq!(
        bash(&mut custom, "cd . && echo ok").output,
        "[STDOUT]\n\nok \n\n[STDERR]\n\n\n"
    );
    assert_eq!(
        custom.call("execute_bash", &[("command", " ")]).output,
        "ERROR: Missing required parameter 'command' for 'execute_bash'.\n"
    );
}

#[test]
fn timeouts_kill_the_command() {
    let mut ws = Workspace::with_config(ToolConfig {
        bash_timeout_secs: 1,
        ..ToolConfig::default()
    });
    let started = Instant::now();
    let result = bash(&mut ws, "sleep 30 & sleep 30; echo never");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(result.output, "The command took too long to execute (>1s)");
    assert_eq!(result.error_code, "-1");
    assert!(result.is_error);
    assert_eq!(
        result.observation,
        "Exit code: -1\nExecution output of [execute_bash]:\nThe command took too long to execute (>1s)"
    );
}

#[test]
fn long_outputs_are_truncated_in_the_middle_of_the_observation() {
    let mut ws = Workspace::new();
    let result = bash(&mut ws, "seq 1 100");
    let mut lines = vec!["[STDOUT]".to_owned(), String::new()];
    lines.extend((1..100).map(|i| i.to_string()));
    lines.extend(["100 ", "", "[STDERR]", "", ""].map(String::from));
    assert_eq!(result.output, lines.join("\n") + "\n");
    let divider = "-".repeat(50);
    let expected = format!(
        "Exit code: 0\nExecution output of [execute_bash]:\n{}\n{divider}\n<Observation truncated in middle for saving context>\n{divider}\n{}",
        lines[..40].join("\n"),
        lines[lines.len() - 40..].join("\n")
    );
    assert_eq!(result.observation, expected);
    // 80 lines exactly are kept whole.
    let result = bash(&mut ws, "seq 1 74");
    assert!(!result.observation.contains("truncated"));
}

struct BrokenShell;

impl Shell for BrokenShell {
    fn run(&self, _command: &str, _timeout: Duration) -> std::io::Result<ExecOutcome> {
        Err(std::io::Error::other("sandbox is gone"))
    }
}

#[test]
fn shell_failures_become_error_observations() {
    let dir = tempfile::tempdir().unwrap();
    let mut toolbox = Toolbox::new(
        WorkspaceFs::new(dir.path()),
        Arc::new(BrokenShell),
        ToolConfig::default(),
    );
    let result = toolbox.call(&ToolCall::new("execute_bash").arg("cmd", "ls"));
    assert_eq!(result.output, "Error: sandbox is gone");
    assert_eq!(result.error_code, "-1");
    assert!(result.is_error);
}
