//! Every bundled example task, end to end through the real tools, sandbox and evaluator:
//! - replaying its demonstration yields a patch that `git apply` on a fresh checkout turns into
//!   exactly the workspace's tree (same git tree id);
//! - without the patch its FAIL_TO_PASS tests fail; with it, FAIL_TO_PASS and PASS_TO_PASS
//!   pass (graded by the evaluation harness).

use crate::common;

use std::path::Path;
use std::time::Duration;

use swerve_core::Shell;
use swerve_rollout::config::Config;
use swerve_rollout::demo;
use swerve_rollout::open;

use common::{root, sh};

fn config(cache: &Path) -> Config {
    Config {
        cache_dir: Some(cache.to_path_buf()),
        ..Config::default()
    }
}

/// The git tree id of the working tree behind `shell` (tracked and untracked, not ignored).
fn tree_in_sandbox(shell: &dyn Shell) -> String {
    let outcome = shell
        .run("export GIT_INDEX_FILE=/tmp/tree-index; git read-tree HEAD && git add -A && git write-tree", Duration::from_secs(30))
        .unwrap();
    assert!(outcome.success(), "{}", outcome.stderr_text());
    outcome.stdout_text().trim().to_owned()
}

#[test]
fn every_demonstration_solves_its_task_and_its_patch_round_trips() {
    let cache = tempfile::tempdir().unwrap();
    let config = config(cache.path());
    let task_file = root().join("examples").join("tasks/tasks.jsonl");
    let tasks = open::tasks(&task_file).unwrap();
    assert!(tasks.len() >= 6);
    assert!(
        tasks
            .iter()
            .any(|task| task.extra.get("language").and_then(|l| l.as_str()) == Some("rust"))
    );
    for task in &tasks {
        let demonstration = swerve_core::demonstration::Demonstration::load(
            &root()
                .join("examples")
                .join(format!("demos/{}.json", task.instance_id)),
        )
        .unwrap();

        // Replay, keeping the workspace to compare trees.
        let workspace =
            open::workspace(&config, &config.cache().unwrap(), &task_file, task).unwrap();
        let mut toolbox = open::toolbox(&config, &workspace);
        for call in &demonstration.calls {
            let result = toolbox.call(call);
            assert!(
                !result.observation.contains("ERROR: No occurrences"),
                "{}: {}",
                task.instance_id,
                result.observation
            );
        }
        let patch = workspace.patch(&config.patch).unwrap();
        assert!(
            !patch.is_empty(),
            "{}: the demonstration changed nothing",
            task.instance_id
        );
        let expected_tree = tree_in_sandbox(workspace.shell().as_ref());
        workspace.destroy().unwrap();

        let fresh = cache.path().join(format!("fresh-{}", task.instance_id));
        let bundle = root()
            .join("examples")
            .join(format!("repos/{}.bundle", task.repo));
        sh(
            cache.path(),
            &format!("git clone -q {} {}", bundle.display(), fresh.display()),
        );
        sh(&fresh, &format!("git checkout -q {}", task.base_commit));
        std::fs::write(cache.path().join("model.patch"), &patch.diff).unwrap();
        sh(
            &fresh,
            &format!("git apply {}", cache.path().join("model.patch").display()),
        );
        let actual_tree = sh(
            &fresh,
            "export GIT_INDEX_FILE=$(mktemp -u); git read-tree HEAD && git add -A && git write-tree",
        )
        .trim()
        .to_owned();
        assert_eq!(
            actual_tree, expected_tree,
            "{}: the patch does not reproduce the workspace",
            task.instance_id
        );

        let unpatched = demo::check(&config, &task_file, task, "").unwrap();
        let status = unpatched.tests_status.as_ref().unwrap();
        assert!(
            status.fail_to_pass.success.is_empty(),
            "{}: FAIL_TO_PASS passes without the fix",
            task.instance_id
        );
        assert!(
            status.pass_to_pass.failure.is_empty(),
            "{}",
            task.instance_id
        );
        let patched = demo::check(&config, &task_file, task, &patch.diff).unwrap();
        assert!(
            patched.resolved,
            "{}: {:?}",
            task.instance_id, patched.tests_status
        );
    }
}

#[test]
fn an_unresolved_run_lists_the_tests_that_did_not_pass() {
    let cache = tempfile::tempdir().unwrap();
    let config = config(cache.path());
    let task_file = root().join("examples").join("tasks/tasks.jsonl");
    let task = open::task(&task_file, "swerve-examples__calc-1").unwrap();
    let report = demo::check(&config, &task_file, &task, "").unwrap();
    assert!(!report.resolved);
    let (passed, total, failing) = demo::tally(
        report
            .tests_status
            .as_ref()
            .map(|status| &status.fail_to_pass),
    );
    assert_eq!((passed, total), (0, task.fail_to_pass.len()));
    assert_eq!(failing, task.fail_to_pass);
}
