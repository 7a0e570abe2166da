//! Runs the `git` command line with a configuration that does not depend on the user's.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::SandboxError;

/// A `git` command in `dir`, isolated from global and system configuration, never prompting
/// and never fetching missing objects behind the user's back.
pub(crate) fn command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir);
    configure(&mut command);
    command
}

/// Adds swerve's fixed git configuration and environment to a `git` command. A repository's
/// own configuration may name programs to run (hooks, a file system monitor); those two are
/// switched off, and git over a sandbox's repository runs confined (see
/// `Sandbox::host_command`).
pub(crate) fn configure(command: &mut Command) -> &mut Command {
    command
        .args([
            "-c",
            "safe.directory=*",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.quotePath=false",
            "-c",
            "diff.renames=true",
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_AUTHOR_NAME", "swerve")
        .env("GIT_AUTHOR_EMAIL", "swerve@localhost")
        .env("GIT_COMMITTER_NAME", "swerve")
        .env("GIT_COMMITTER_EMAIL", "swerve@localhost")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
}

/// Runs `git ARGS` in `dir` and returns its output, or an error carrying its stderr.
pub(crate) fn run<I, S>(dir: &Path, args: I) -> Result<Output, SandboxError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args
        .into_iter()
        .map(|arg| arg.as_ref().to_owned())
        .collect();
    let mut command = command(dir);
    command.args(&args);
    checked(command, dir, &args)
}

/// Runs a prepared git command (`args` are its arguments, for messages) with `input` on its
/// standard input, written from another thread so that a large output cannot stall it;
/// returns its output, or an error carrying its stderr.
pub(crate) fn output_with_input(
    mut command: Command,
    dir: &Path,
    args: &[std::ffi::OsString],
    input: &[u8],
) -> Result<Output, SandboxError> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(SandboxError::io("running git (is git installed?)"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let (written, output) = std::thread::scope(|scope| {
        // Dropping `stdin` at the end of the writer closes the pipe: git sees the end of its input.
        let writer = scope.spawn(move || stdin.write_all(input));
        let output = child.wait_with_output();
        (
            writer.join().expect("writing a pipe does not panic"),
            output,
        )
    });
    let output = check(
        output.map_err(SandboxError::io("waiting for git"))?,
        dir,
        args,
    )?;
    written.map_err(SandboxError::io(format!(
        "writing to the input of git {}",
        joined(args)
    )))?;
    Ok(output)
}

/// Runs a prepared git command; non-zero exit becomes [`SandboxError::Git`].
pub(crate) fn checked(
    mut command: Command,
    dir: &Path,
    args: &[std::ffi::OsString],
) -> Result<Output, SandboxError> {
    let output = command
        .output()
        .map_err(SandboxError::io("running git (is git installed?)"))?;
    check(output, dir, args)
}

/// `output` if its command succeeded, else [`SandboxError::Git`] with its stderr.
pub(crate) fn check(
    output: Output,
    dir: &Path,
    args: &[std::ffi::OsString],
) -> Result<Output, SandboxError> {
    if output.status.success() {
        Ok(output)
    } else {
        Err(SandboxError::Git {
            args: joined(args),
            dir: dir.to_path_buf(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        })
    }
}

/// The arguments of a git command as one line, for messages.
fn joined(args: &[std::ffi::OsString]) -> String {
    args.iter()
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The commit `HEAD` names in `sandbox`'s repository, read by git run inside the sandbox
/// (for an image, the image's own git).
pub(crate) fn head_commit(sandbox: &crate::Sandbox) -> Result<String, SandboxError> {
    let mut command = sandbox
        .host_command("git")
        .map_err(SandboxError::io("preparing git"))?;
    configure(&mut command).args(["rev-parse", "--verify", "HEAD^{commit}"]);
    let args: Vec<std::ffi::OsString> = vec!["rev-parse".into(), "HEAD".into()];
    let output = checked(command, sandbox.host_root(), &args)?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
