//! Small git fixture repositories, built with the real git.

use std::path::Path;

use crate::process::sh;

/// Creates `dir` (and its parents) and makes it a git repository on branch `main` with a
/// committer set, so commits work on a machine without a global git identity.
pub fn init(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    sh(
        dir,
        "git init -q -b main && git config user.name swerve-test && git config user.email test@swerve.invalid",
    );
}

/// Writes `files` (relative path, content) under `dir`, creating parent directories.
pub fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

/// Commits everything in the repository at `dir` with `message`; the new commit's hash.
pub fn commit_all(dir: &Path, message: &str) -> String {
    sh(dir, &format!("git add -A && git commit -qm '{message}'"));
    sh(dir, "git rev-parse HEAD")
}
