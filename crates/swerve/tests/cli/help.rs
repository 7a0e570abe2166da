//! The `--help` of every command, nested ones included, pinned as snapshots (exit code,
//! stdout and stderr): the command tree is walked from `swerve --help` down, each help's
//! `Commands:` section naming the next level, so a new command gets its snapshot without a
//! list to keep. Updating a snapshot: see docs/development.md.

use std::process::{Command, Output};

use swerve_testing::assert_cmd_snapshot;

use crate::common::{root, stdout};

/// `swerve PATH... --help` with no `SWERVE_*` variables (clap prints an option's `[env: ]`
/// value when it is set) and a fixed home.
fn help(path: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(path)
        .arg("--help")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", "/nonexistent/home")
        .current_dir(root())
        .output()
        .unwrap()
}

/// The subcommands a help's `Commands:` section lists, `help` left out.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_help_of_every_command_is_pinned() {
    let mut pending = vec![Vec::<String>::new()];
    let mut pinned = Vec::new();
    while let Some(path) = pending.pop() {
        let output = help(&path);
        assert!(output.status.success(), "swerve {path:?} --help failed");
        let name = std::iter::once("swerve")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join("_");
        assert_cmd_snapshot!(name.clone(), output);
        for subcommand in subcommands(&stdout(&output)) {
            let mut next = path.clone();
            next.push(subcommand);
            pending.push(next);
        }
        pinned.push(name);
    }
    // The walk reached the nested commands (e.g. `swerve data backfill`), not only the top.
    assert!(
        pinned.iter().any(|name| name.matches('_').count() >= 2),
        "{pinned:?}"
    );
    assert!(
        pinned.len() >= 40,
        "only {} commands: {pinned:?}",
        pinned.len()
    );
}

#[test]
fn usage_errors_are_pinned() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_swerve"))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", "/nonexistent/home")
            .current_dir(root())
            .output()
            .unwrap()
    };
    assert_cmd_snapshot!("usage_no_command", run(&[]));
    assert_cmd_snapshot!("usage_unknown_command", run(&["rnu"]));
    assert_cmd_snapshot!("usage_unknown_option", run(&["run", "--modle", "x"]));
    assert_cmd_snapshot!("usage_missing_value", run(&["run", "--tasks"]));
}
