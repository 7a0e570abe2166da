//! The patch apply cascade in a real sandboxed workspace over a real git checkout: which
//! attempt applies a patch, that a failed attempt's leftovers never reach the next one, and
//! that files untracked before the cascade (an editable install's metadata) survive it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use swerve_eval::apply::{ApplyMethod, apply_patch};
use swerve_eval::workspaces::{self, Origin};
use swerve_sandbox::{Cache, Isolation, RepoSource, SandboxConfig, Workspace, WorkspaceOptions};
use swerve_testing::sh;

const TIMEOUT: Duration = Duration::from_secs(60);

/// Twenty numbered lines, so hunks have context to fuzz against.
fn lines(changed: &[(usize, &str)]) -> String {
    (1..=20)
        .map(|n| {
            changed
                .iter()
                .find(|(line, _)| *line == n)
                .map_or_else(|| format!("line {n}\n"), |(_, text)| format!("{text}\n"))
        })
        .collect()
}

/// A workspace over a fresh repository holding `mod.py`, with an untracked
/// `demo.egg-info/PKG-INFO` as an editable install leaves it.
fn workspace(scratch: &Path) -> Workspace {
    let repo = scratch.join("repo");
    std::fs::create_dir(&repo).unwrap();
    std::fs::write(repo.join("mod.py"), lines(&[])).unwrap();
    let commit = sh(
        &repo,
        "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base && git rev-parse HEAD",
    );
    let cache = Cache::open(scratch.join("cache")).unwrap();
    let base = cache
        .prepare_base("t/demo", &RepoSource::Local(repo), &commit)
        .unwrap();
    let options = WorkspaceOptions {
        sandbox: SandboxConfig {
            isolation: Isolation::Namespaces,
            ..SandboxConfig::default()
        },
        ..WorkspaceOptions::default()
    };
    let workspace = workspaces::create(&cache, Origin::Checkout(&base), &options).unwrap();
    let made = workspace
        .shell()
        .run(
            "mkdir demo.egg-info && echo 'Name: demo' > demo.egg-info/PKG-INFO",
            TIMEOUT,
        )
        .unwrap();
    assert!(made.success(), "{}", made.stderr_text());
    workspace
}

fn run(workspace: &Workspace, command: &str) -> String {
    let outcome = workspace.shell().run(command, TIMEOUT).unwrap();
    assert!(outcome.success(), "{command}: {}", outcome.stderr_text());
    outcome.stdout_text().trim().to_owned()
}

/// A patch of `mod.py` from `before` to `after`.
fn patch(before: &str, after: &str) -> String {
    let scratch = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(scratch.path().join("a")).unwrap();
    std::fs::create_dir_all(scratch.path().join("b")).unwrap();
    std::fs::write(scratch.path().join("a/mod.py"), before).unwrap();
    std::fs::write(scratch.path().join("b/mod.py"), after).unwrap();
    let output = Command::new("git")
        .args(["diff", "--no-index", "--no-prefix", "a/mod.py", "b/mod.py"])
        .current_dir(scratch.path())
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_clean_patch_applies_first_time_and_keeps_untracked_files() {
    let scratch = tempfile::tempdir().unwrap();
    let workspace = workspace(scratch.path());
    let applied = apply_patch(
        workspace.shell().as_ref(),
        &patch(&lines(&[]), &lines(&[(10, "line ten")])),
        TIMEOUT,
    )
    .unwrap();
    assert_eq!(
        applied.method,
        Some(ApplyMethod::GitApply),
        "{}",
        applied.log
    );
    assert_eq!(run(&workspace, "sed -n 10p mod.py"), "line ten");
    assert_eq!(run(&workspace, "cat demo.egg-info/PKG-INFO"), "Name: demo");
}

#[test]
fn a_patch_needing_fuzz_falls_through_without_leftovers() {
    let scratch = tempfile::tempdir().unwrap();
    let workspace = workspace(scratch.path());
    // Written against a file whose context lines 8 and 12 differ: git apply (plain, 3-way:
    // no such blob, and --reject: the hunk fails) cannot apply it; patch --fuzz can.
    let drifted = lines(&[(8, "line 8 (old)"), (12, "line 12 (old)")]);
    let wanted = lines(&[(8, "line 8 (old)"), (10, "line ten"), (12, "line 12 (old)")]);
    let applied = apply_patch(
        workspace.shell().as_ref(),
        &patch(&drifted, &wanted),
        TIMEOUT,
    )
    .unwrap();
    assert_eq!(
        applied.method,
        Some(ApplyMethod::PatchFuzz),
        "{}",
        applied.log
    );
    assert!(
        applied.log.contains("$ git apply --verbose --reject"),
        "{}",
        applied.log
    );
    assert_eq!(run(&workspace, "sed -n 10p mod.py"), "line ten");
    // --reject's mod.py.rej is gone before patch runs; the install's metadata survived.
    let untracked = run(&workspace, "git ls-files --others --exclude-standard");
    assert!(!untracked.contains(".rej"), "{untracked}");
    assert_eq!(run(&workspace, "cat demo.egg-info/PKG-INFO"), "Name: demo");
}

#[test]
fn a_patch_already_present_counts_as_applied_and_a_foreign_one_fails_cleanly() {
    let scratch = tempfile::tempdir().unwrap();
    let workspace = workspace(scratch.path());
    // Without its `index` line, --3way has no blobs to merge with, so only the reverse
    // check can tell the change is already there.
    let change: String = patch(&lines(&[]), &lines(&[(10, "line ten")]))
        .lines()
        .filter(|line| !line.starts_with("index "))
        .map(|line| format!("{line}\n"))
        .collect();
    run(
        &workspace,
        "sed -i 's/^line 10$/line ten/' mod.py && git add -A demo.egg-info mod.py && git -c user.name=t -c user.email=t@t commit -qm applied",
    );
    let again = apply_patch(workspace.shell().as_ref(), &change, TIMEOUT).unwrap();
    assert_eq!(
        again.method,
        Some(ApplyMethod::AlreadyApplied),
        "{}",
        again.log
    );

    let foreign = "diff --git a/other.py b/other.py\n--- a/other.py\n+++ b/other.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n";
    let failed = apply_patch(workspace.shell().as_ref(), foreign, TIMEOUT).unwrap();
    assert_eq!(failed.method, None, "{}", failed.log);
    assert!(
        failed.log.ends_with(">>>>> Patch Apply Failed\n"),
        "{}",
        failed.log
    );
    assert_eq!(run(&workspace, "git status --porcelain"), "");
}
