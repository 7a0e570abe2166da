//! The `--help` of every command, nested ones included, pinned as snapshots (exit code,
//! stdout and stderr): the command tree is walked from `swerve --help` down, each help's
//! `Commands:` section naming the next level, so a new command gets its snapshot without a
//! list to keep. Updating a snapshot: see docs/development.md.

use std::process::{Command, Output};

use swerve_core::registry::Registry;
use swerve_rollout::config::EvaluatorKind;
use swerve_testing::assert_cmd_snapshot;
use swerve_train::export::exporter::Format;

use crate::common::{root, stderr, stdout, swerve};

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

/// The entry of `option` (as its line starts, e.g. `--format `) in `swerve PATH... --help`:
/// its line up to the next option's.
fn option_entry(path: &[&str], option: &str) -> String {
    let path: Vec<String> = path.iter().map(|word| word.to_string()).collect();
    let text = stdout(&help(&path));
    let mut lines = text
        .lines()
        .skip_while(|line| !line.trim_start().starts_with(option));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no {option} in {text}"));
    std::iter::once(first)
        .chain(lines.take_while(|line| !is_option_line(line)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a help line starts an option's entry (`  -h, --help`, `      --format <FORMAT>`),
/// not one of its possible values (`          - tests: …`).
fn is_option_line(line: &str) -> bool {
    let text = line.trim_start();
    text.starts_with('-') && line.len() - text.len() <= 6
}

/// `--format`'s help is written by hand: it must name every format the option takes
/// (`swerve_tools::formats::FORMAT_NAMES`, the list the configuration checks against).
#[test]
fn the_run_help_names_every_tool_call_format() {
    let entry = option_entry(&["run"], "--format ");
    for name in swerve_tools::formats::FORMAT_NAMES {
        assert!(
            entry.contains(name),
            "--format's help lacks {name}: {entry}"
        );
    }
}

/// Options taking a registry's names list each with its description, from the registry
/// itself: a name added to the list is in the help without more.
#[test]
fn options_taking_a_registry_list_every_member_with_its_description() {
    fn lists_every<T: Registry>(path: &[&str], option: &str) {
        let entry = option_entry(path, option);
        for member in T::ALL {
            let line = format!("- {}:", member.name());
            assert!(
                entry.contains(&line) && entry.contains(member.description()),
                "swerve {path:?} {option} lacks {}: {entry}",
                member.name()
            );
        }
    }
    lists_every::<Format>(&["data", "export"], "--format ");
    lists_every::<EvaluatorKind>(&["eval"], "--evaluator ");
    lists_every::<EvaluatorKind>(&["run"], "--eval ");
}

/// A name no registry member has is refused with the valid names, given on the command
/// line (clap's error) or in a configuration file (the configuration's error, naming the
/// file).
#[test]
fn unknown_names_are_refused_with_the_valid_ones() {
    let cache = tempfile::tempdir().unwrap();
    let out = cache.path().join("rows.jsonl");
    let export = swerve(
        cache.path(),
        &[
            "data",
            "export",
            "--format",
            "nonesuch",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(!export.status.success());
    for name in Format::names() {
        assert!(stderr(&export).contains(name), "{}", stderr(&export));
    }
    let file = cache.path().join("swerve.toml");
    std::fs::write(&file, "[run]\nevaluator = \"nonesuch\"\n").unwrap();
    let config = swerve(
        cache.path(),
        &["--config", file.to_str().unwrap(), "config", "show"],
    );
    assert!(!config.status.success());
    let expected = format!(
        "unknown evaluator \"nonesuch\": choose one of {}",
        EvaluatorKind::names().join(", ")
    );
    assert!(
        stderr(&config).contains("swerve.toml") && stderr(&config).contains(&expected),
        "{}",
        stderr(&config)
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

/// Every command the help walk reaches, as its words after `swerve` (the top is empty).
fn every_command() -> Vec<Vec<String>> {
    let mut pending = vec![Vec::<String>::new()];
    let mut found = Vec::new();
    while let Some(path) = pending.pop() {
        for subcommand in subcommands(&stdout(&help(&path))) {
            let mut next = path.clone();
            next.push(subcommand);
            pending.push(next);
        }
        found.push(path);
    }
    found
}

#[test]
fn man_pages_cover_every_command_and_completions_every_shell() {
    let commands = every_command();
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(["man", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let mut pages: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    pages.sort();
    let mut expected: Vec<String> = commands
        .iter()
        .map(|path| {
            let words: Vec<&str> = std::iter::once("swerve")
                .chain(path.iter().map(String::as_str))
                .collect();
            format!("{}.1", words.join("-"))
        })
        .collect();
    expected.sort();
    assert_eq!(pages, expected);
    let page = std::fs::read_to_string(dir.path().join("swerve-data-export.1")).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH swerve-data-export 1"),
        "{page}"
    );
    assert!(
        page.contains("swerve data export"),
        "the synopsis names the command: {page}"
    );

    // Each shell's script names every top-level command; a broken configuration file does not
    // keep a shell from getting it.
    let config = dir.path().join("broken.toml");
    std::fs::write(&config, "x = [").unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let output = Command::new(env!("CARGO_BIN_EXE_swerve"))
            .arg("--config")
            .arg(&config)
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(output.status.success(), "{shell}: {output:?}");
        let script = stdout(&output);
        for path in commands.iter().filter(|path| path.len() == 1) {
            assert!(
                script.contains(&path[0]),
                "{shell} completions lack {}",
                path[0]
            );
        }
    }
    // A bash that sources the script completes `swerve ed` to `edit-bench`.
    let bash = Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let script = dir.path().join("swerve.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    let completed = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=(swerve ed); COMP_CWORD=1; _swerve swerve ed swerve; echo \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .unwrap();
    assert_eq!(stdout(&completed).trim(), "edit-bench", "{completed:?}");
}

#[test]
fn the_version_names_the_package_version() {
    let output = Command::new(env!("CARGO_BIN_EXE_swerve"))
        .arg("--version")
        .output()
        .unwrap();
    let text = stdout(&output);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        text.starts_with(&format!("swerve {version}")),
        "{text:?} should start with swerve {version}"
    );
}
