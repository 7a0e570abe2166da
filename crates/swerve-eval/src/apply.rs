//! Applying a model's patch to a workspace the way SWE-bench's harness does.
//!
//! The cascade (SWE-bench 5.x): `git apply --verbose`, then `git apply --verbose --3way`,
//! then `git apply --verbose --reject`, then `patch --batch --forward --fuzz=5 -p1`. The first
//! attempt runs on the tree as given (a fresh workspace at the base commit; plain `git apply`
//! is all or nothing, so a failure leaves it untouched). Before each later attempt the tree
//! is put back as it was — tracked files reset to `HEAD`, files the failed attempt created
//! removed, files that were untracked before the cascade (an editable install's metadata,
//! for example) kept — so a half-applied attempt never leaks into the next. A patch whose
//! changes are already present (`git apply --check --reverse`) counts as applied. Every
//! attempt's output goes into the log.
//!
//! Not resetting before the first attempt matters for speed: in a fresh copy-on-write
//! workspace `git reset --hard` re-checks every file (0.5–1.5 s on a mid-sized repository),
//! and SWE-bench's harness does not reset either.

use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use swerve_core::Shell;

/// Where the patch is written inside the sandbox before applying it.
const PATCH_PATH: &str = "/tmp/swerve-model.patch";

/// Where the untracked files present before the cascade are listed (NUL-separated, sorted).
const UNTRACKED_BEFORE: &str = "/tmp/swerve-untracked-before";

/// Records the untracked files of the untouched tree (run after the first attempt failed,
/// which changed nothing).
fn record_untracked() -> String {
    format!("git ls-files --others --exclude-standard -z | LC_ALL=C sort -z > {UNTRACKED_BEFORE}")
}

/// Puts the tree back as it was before the cascade: tracked files to `HEAD`, and every
/// untracked file not in [`UNTRACKED_BEFORE`] removed.
fn undo_attempt() -> String {
    format!(
        "git reset --hard --quiet HEAD && git ls-files --others --exclude-standard -z \
         | LC_ALL=C sort -z | LC_ALL=C comm -z -23 - {UNTRACKED_BEFORE} | xargs -0 -r rm -f --"
    )
}

/// The attempt that applied a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApplyMethod {
    /// `git apply --verbose`: the patch applied cleanly.
    GitApply,
    /// `git apply --verbose --3way`: applied with a three-way merge.
    GitApply3way,
    /// `git apply --verbose --reject`: applied, hunks that did not fit left as `.rej` files.
    GitApplyReject,
    /// `patch --batch --forward --fuzz=5 -p1`: applied with GNU patch's fuzzy matching.
    PatchFuzz,
    /// Every attempt failed but the patch applies in reverse: the tree already holds it.
    AlreadyApplied,
}

/// The result of the cascade.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The attempt that worked, or `None` if every attempt failed.
    pub method: Option<ApplyMethod>,
    /// The commands run and what they printed.
    pub log: String,
}

const ATTEMPTS: [(ApplyMethod, &str); 4] = [
    (ApplyMethod::GitApply, "git apply --verbose"),
    (ApplyMethod::GitApply3way, "git apply --verbose --3way"),
    (ApplyMethod::GitApplyReject, "git apply --verbose --reject"),
    (
        ApplyMethod::PatchFuzz,
        "patch --batch --forward --fuzz=5 -p1 -i",
    ),
];

/// Applies `patch` in the repository behind `shell` (whose tree must be at the base commit).
pub fn apply_patch(shell: &dyn Shell, patch: &str, timeout: Duration) -> std::io::Result<Applied> {
    let mut log = String::new();
    write_file(shell, PATCH_PATH, patch, timeout)?;
    for (attempt, (method, command)) in ATTEMPTS.into_iter().enumerate() {
        if attempt == 1 {
            run_checked(
                shell,
                &record_untracked(),
                "list the untracked files",
                timeout,
            )?;
        }
        if attempt > 0 {
            run_checked(shell, &undo_attempt(), "reset the workspace", timeout)?;
        }
        let outcome = shell.run(&format!("{command} {PATCH_PATH}"), timeout)?;
        let _ = writeln!(
            log,
            "$ {command} {PATCH_PATH}\n{}{}",
            outcome.stdout_text(),
            outcome.stderr_text()
        );
        if outcome.success() {
            let _ = writeln!(log, ">>>>> Applied Patch ({command})");
            return Ok(Applied {
                method: Some(method),
                log,
            });
        }
    }
    run_checked(shell, &undo_attempt(), "reset the workspace", timeout)?;
    let reverse = shell.run(
        &format!("git apply --check --reverse {PATCH_PATH}"),
        timeout,
    )?;
    if reverse.success() {
        let _ = writeln!(log, ">>>>> Applied Patch (already present)");
        return Ok(Applied {
            method: Some(ApplyMethod::AlreadyApplied),
            log,
        });
    }
    let _ = writeln!(log, ">>>>> Patch Apply Failed");
    Ok(Applied { method: None, log })
}

/// Runs `command`, an error naming `what` (and the command's stderr) if it fails.
fn run_checked(
    shell: &dyn Shell,
    command: &str,
    what: &str,
    timeout: Duration,
) -> std::io::Result<()> {
    let outcome = shell.run(command, timeout)?;
    if outcome.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "cannot {what}: {}",
            outcome.stderr_text()
        )))
    }
}

/// Writes `content` to `path` inside the sandbox with a quoted heredoc whose delimiter does
/// not occur in the content.
pub fn write_file(
    shell: &dyn Shell,
    path: &str,
    content: &str,
    timeout: Duration,
) -> std::io::Result<()> {
    let delimiter = (0u32..)
        .map(|n| format!("SWERVE_EOF_{n}"))
        .find(|candidate| !content.contains(candidate.as_str()))
        .expect("some delimiter is free");
    // The heredoc adds a final newline; keep the content's own instead.
    let (body, newline) = match content.strip_suffix('\n') {
        Some(body) => (body, ""),
        None => (content, " && truncate -s -1 {path}"),
    };
    let newline = newline.replace("{path}", path);
    let command = if content.is_empty() {
        format!("mkdir -p \"$(dirname {path})\" && : > {path}")
    } else {
        format!(
            "mkdir -p \"$(dirname {path})\" && cat > {path} <<'{delimiter}'{newline}\n{body}\n{delimiter}"
        )
    };
    let outcome = shell.run(&command, timeout)?;
    if outcome.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "cannot write {path} in the sandbox: {}",
            outcome.stderr_text()
        )))
    }
}
