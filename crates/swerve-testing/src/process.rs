//! Running shell commands on the host and reading what a command printed.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `command` with `sh -c` in `dir`, panicking (with its stderr) unless it succeeds;
/// returns its stdout trimmed (a commit, a count, a file list). [`sh_exact`] keeps it whole.
///
/// Its git trusts every directory: as root, bases and workspaces belong to the sandboxes'
/// unprivileged root.
pub fn sh(dir: &Path, command: &str) -> String {
    sh_exact(dir, command).trim().to_owned()
}

/// Like [`sh`], returning stdout exactly as printed (a `git diff` keeps its last newline,
/// so it still applies as a patch).
pub fn sh_exact(dir: &Path, command: &str) -> String {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "safe.directory")
        .env("GIT_CONFIG_VALUE_0", "*")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a command printed on stdout, as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a command printed on stderr, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Panics with the command's stdout unless it failed; its stderr.
pub fn failed(output: &Output) -> String {
    assert!(!output.status.success(), "succeeded: {}", stdout(output));
    stderr(output)
}

/// Panics with the command's stderr unless it succeeded; its stdout.
pub fn succeeded(output: &Output) -> String {
    assert!(output.status.success(), "{}", stderr(output));
    stdout(output)
}
