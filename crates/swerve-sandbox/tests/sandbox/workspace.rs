//! Base checkouts, workspace strategies and patches, over real git repositories.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{Fixture, isolated, sh};
use swerve_core::Shell;
use swerve_sandbox::{
    Isolation, PatchOptions, RepoSource, SandboxConfig, SandboxError, Strategy, Workspace,
};

#[test]
fn a_base_is_prepared_once_and_reused() {
    let fixture = Fixture::new();
    let first = fixture.base();
    let marker = first
        .path
        .join(".git")
        .metadata()
        .unwrap()
        .modified()
        .unwrap();
    let second = fixture.base();
    assert_eq!(first, second);
    assert_eq!(
        second
            .path
            .join(".git")
            .metadata()
            .unwrap()
            .modified()
            .unwrap(),
        marker
    );
    assert_eq!(first.commit, fixture.base_commit);
    assert_eq!(
        std::fs::read_to_string(first.path.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

#[test]
fn abbreviated_commits_resolve_to_the_full_id() {
    let fixture = Fixture::new();
    let base = fixture
        .cache
        .prepare_base(
            "test/repo",
            &RepoSource::Local(fixture.repo.clone()),
            &fixture.base_commit[..10],
        )
        .unwrap();
    assert_eq!(base.commit, fixture.base_commit);
}

#[test]
fn history_after_the_base_commit_is_unreachable() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let outcome = workspace
        .sandbox()
        .run(
            "git log --all --format=%s; git for-each-ref; git remote; git reflog",
            Duration::from_secs(5),
        )
        .unwrap();
    assert_eq!(
        outcome.stdout_text(),
        format!("base\n{} commit\trefs/heads/main\n", fixture.base_commit),
        "{}",
        outcome.stderr_text()
    );
    assert!(!workspace.host_root().join("future.txt").exists());
}

#[test]
fn a_missing_commit_is_a_clear_error() {
    let fixture = Fixture::new();
    let error = fixture
        .cache
        .prepare_base(
            "test/repo",
            &RepoSource::Local(fixture.repo.clone()),
            "0123456789abcdef0123456789abcdef01234567",
        )
        .unwrap_err();
    assert!(matches!(error, SandboxError::CommitMissing { .. }));
    let text = error.to_string();
    assert!(
        text.starts_with("commit 0123456789abcdef0123456789abcdef01234567 is not in repository "),
        "{text}"
    );
    assert!(text.contains("fetch it"), "{text}");
    let error = fixture
        .cache
        .prepare_base(
            "test/repo",
            &RepoSource::Local(fixture.repo.clone()),
            "not-a-commit",
        )
        .unwrap_err();
    assert!(matches!(error, SandboxError::CommitMissing { .. }));
}

#[test]
fn a_missing_repository_is_a_clear_error() {
    let fixture = Fixture::new();
    let missing = fixture.dir.path().join("nowhere");
    let error = fixture
        .cache
        .prepare_base(
            "test/nowhere",
            &RepoSource::Local(missing),
            &fixture.base_commit,
        )
        .unwrap_err();
    assert!(error.to_string().contains("not found"), "{error}");
}

#[test]
fn a_partial_clone_missing_blobs_is_a_clear_error() {
    let fixture = Fixture::new();
    sh(
        &fixture.repo,
        "git config uploadpack.allowFilter true && git config uploadpack.allowAnySHA1InWant true",
    );
    let partial = fixture.dir.path().join("partial");
    sh(
        fixture.dir.path(),
        &format!(
            "git clone -q --no-checkout --filter=blob:none file://{} {}",
            fixture.repo.display(),
            partial.display()
        ),
    );
    let error = fixture
        .cache
        .prepare_base(
            "test/partial",
            &RepoSource::Local(partial),
            &fixture.base_commit,
        )
        .unwrap_err();
    assert!(
        matches!(error, SandboxError::ObjectsMissing { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("partial or shallow clone"),
        "{error}"
    );
    assert!(
        !fixture
            .cache
            .root()
            .join("bases/test/partial")
            .join(&fixture.base_commit)
            .exists()
    );
}

#[test]
fn a_bundle_is_a_repository_source() {
    let fixture = Fixture::new();
    let bundle = fixture.dir.path().join("repo.bundle");
    sh(
        &fixture.repo,
        &format!("git bundle create -q {} --all", bundle.display()),
    );
    let base = fixture
        .cache
        .prepare_base(
            "test/bundled",
            &RepoSource::Local(bundle),
            &fixture.base_commit,
        )
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(base.path.join("pkg/mod.py")).unwrap(),
        "def f():\n    return 1\n"
    );
}

/// Makes every kind of change, computes the patch, applies it to a fresh clone and compares trees.
fn assert_patch_round_trips(workspace: &Workspace, fixture: &Fixture) {
    let changes = "echo four >> a.txt && git mv pkg/mod.py pkg/renamed.py && rm blob.bin && \
                   printf '\\000\\001new-binary' > new.bin && chmod +x a.txt && mkdir -p deep/er && \
                   echo nested > deep/er/file.txt && printf 'caf\\351\\n' > latin1.txt && \
                   mkdir ignored && echo x > ignored/skip.txt && echo 'with space' > 'spaced name.txt' && \
                   echo leftover > x.orig";
    let outcome = workspace
        .sandbox()
        .run(changes, Duration::from_secs(10))
        .unwrap();
    assert!(outcome.success(), "{}", outcome.stderr_text());
    let patch = workspace.patch(&PatchOptions::default()).unwrap();
    assert!(
        patch.diff.contains("rename from pkg/mod.py"),
        "{}",
        patch.diff
    );
    assert!(patch.diff.contains("GIT binary patch"));
    assert!(
        !patch
            .files
            .iter()
            .any(|file| file.starts_with("ignored/") || file.ends_with(".orig")),
        "{:?}",
        patch.files
    );
    // The agent's own index is untouched by computing the patch.
    let status = workspace
        .sandbox()
        .run(
            "git diff --cached --name-only --no-renames",
            Duration::from_secs(5),
        )
        .unwrap();
    assert_eq!(status.stdout_text(), "pkg/mod.py\npkg/renamed.py\n");

    let fresh = fixture
        .dir
        .path()
        .join(format!("fresh-{:?}", workspace.strategy()));
    sh(
        fixture.dir.path(),
        &format!(
            "git clone -q {} {} && git -C {} checkout -q {}",
            fixture.repo.display(),
            fresh.display(),
            fresh.display(),
            fixture.base_commit
        ),
    );
    std::fs::write(fresh.join("model.patch"), &patch.diff).unwrap();
    sh(&fresh, "git apply model.patch && rm model.patch");
    let tree_of = |dir: &Path, index: &str| {
        sh(
            dir,
            &format!(
                "GIT_INDEX_FILE={index} git read-tree HEAD && GIT_INDEX_FILE={index} git add -A -- . ':(exclude)*.orig' && GIT_INDEX_FILE={index} git write-tree"
            ),
        )
    };
    let expected = {
        let index = fixture.dir.path().join("expected-index");
        let host_copy = fixture
            .dir
            .path()
            .join(format!("copy-{:?}", workspace.strategy()));
        sh(
            fixture.dir.path(),
            &format!(
                "cp -a {} {}",
                workspace.host_root().display(),
                host_copy.display()
            ),
        );
        tree_of(&host_copy, &index.display().to_string())
    };
    let actual = tree_of(
        &fresh,
        &fixture
            .dir
            .path()
            .join("actual-index")
            .display()
            .to_string(),
    );
    assert_eq!(
        actual, expected,
        "git apply of the patch must reproduce the workspace tree"
    );
}

#[test]
fn the_patch_of_an_overlay_workspace_round_trips() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace_with(Strategy::Overlay, isolated());
    assert_eq!(workspace.strategy(), Strategy::Overlay);
    assert_patch_round_trips(&workspace, &fixture);
}

#[test]
fn the_patch_of_a_copy_workspace_round_trips() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace_with(Strategy::Copy, isolated());
    assert_eq!(workspace.strategy(), Strategy::Copy);
    assert_patch_round_trips(&workspace, &fixture);
}

#[test]
fn the_patch_of_an_unsandboxed_workspace_round_trips() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(SandboxConfig {
        isolation: Isolation::None,
        ..SandboxConfig::default()
    });
    assert_eq!(workspace.strategy(), Strategy::Copy);
    assert_patch_round_trips(&workspace, &fixture);
}

#[test]
fn an_unchanged_workspace_has_an_empty_patch() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let patch = workspace.patch(&PatchOptions::default()).unwrap();
    assert!(patch.is_empty() && patch.files.is_empty(), "{}", patch.diff);
}

#[test]
fn destroying_a_workspace_leaves_nothing_behind() {
    let fixture = Fixture::new();
    let workspaces = fixture.cache.root().join("workspaces");
    for strategy in [Strategy::Overlay, Strategy::Copy] {
        let workspace = fixture.workspace_with(strategy, isolated());
        workspace
            .sandbox()
            .run(
                "echo x > new.txt; mkdir -p a/b/c; touch a/b/c/d",
                Duration::from_secs(5),
            )
            .unwrap();
        assert_eq!(std::fs::read_dir(&workspaces).unwrap().count(), 1);
        workspace.destroy().unwrap();
        assert_eq!(
            std::fs::read_dir(&workspaces).unwrap().count(),
            0,
            "{strategy:?} left files behind"
        );
    }
}

#[test]
fn unsandboxed_commands_time_out_with_their_process_group() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(SandboxConfig {
        isolation: Isolation::None,
        ..SandboxConfig::default()
    });
    let outcome = workspace
        .sandbox()
        .run(
            "sleep 1000.6161 & sleep 1000.6262",
            Duration::from_millis(300),
        )
        .unwrap();
    assert!(outcome.timed_out);
    std::thread::sleep(Duration::from_millis(100));
    assert!(common::host_processes_with("1000.6").is_empty());
}

#[test]
fn stale_workspaces_of_dead_processes_are_pruned_when_the_cache_opens() {
    let fixture = Fixture::new();
    let stale = fixture.cache.root().join("workspaces/999999999-0-0");
    std::fs::create_dir_all(stale.join("upper/deep")).unwrap();
    std::fs::write(stale.join("owner"), "999999999").unwrap();
    let killed_while_created = fixture.cache.root().join("workspaces/999999998-1-0");
    std::fs::create_dir_all(&killed_while_created).unwrap();
    let being_created = fixture.cache.root().join("workspaces/1-0-0");
    std::fs::create_dir_all(&being_created).unwrap();
    let _reopened = swerve_sandbox::Cache::open(fixture.cache.root()).unwrap();
    assert!(!stale.exists());
    assert!(
        !killed_while_created.exists(),
        "a layer without its owner file yet belongs to the pid its name starts with"
    );
    assert!(
        being_created.exists(),
        "a layer of a live process (its name's pid) is kept"
    );
}

#[test]
fn extra_layers_are_mounted_copy_on_write_read_only_or_read_write() {
    use swerve_sandbox::{ExtraLayer, LayerAccess, WorkspaceOptions};
    let fixture = Fixture::new();
    let sources: Vec<std::path::PathBuf> = ["cow", "ro", "rw"]
        .iter()
        .map(|name| fixture.dir.path().join(name))
        .collect();
    for source in &sources {
        std::fs::create_dir(source).unwrap();
        std::fs::write(source.join("file.txt"), "original\n").unwrap();
    }
    let layer = |index: usize, access| ExtraLayer {
        source: sources[index].clone(),
        mount_point: format!("/swerve-layers/{index}").into(),
        access,
        layers: Vec::new(),
    };
    let options = WorkspaceOptions {
        sandbox: isolated(),
        extra_layers: vec![
            layer(0, LayerAccess::CopyOnWrite),
            layer(1, LayerAccess::ReadOnly),
            layer(2, LayerAccess::ReadWrite),
        ],
        ..WorkspaceOptions::default()
    };
    let workspace = Workspace::create(&fixture.cache, &fixture.base(), &options).unwrap();
    let outcome = workspace
        .sandbox()
        .run(
            "for n in 0 1 2; do echo changed > /swerve-layers/$n/file.txt 2>/dev/null && echo $n:written || echo $n:refused; done; cat /swerve-layers/0/file.txt",
            Duration::from_secs(5),
        )
        .unwrap();
    assert_eq!(
        outcome.stdout_text(),
        "0:written\n1:refused\n2:written\nchanged\n"
    );
    assert_eq!(
        std::fs::read_to_string(sources[0].join("file.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(sources[1].join("file.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(sources[2].join("file.txt")).unwrap(),
        "changed\n"
    );

    let plain = WorkspaceOptions {
        sandbox: SandboxConfig {
            isolation: Isolation::None,
            ..SandboxConfig::default()
        },
        extra_layers: vec![layer(1, LayerAccess::ReadOnly)],
        ..WorkspaceOptions::default()
    };
    let error = Workspace::create(&fixture.cache, &fixture.base(), &plain)
        .err()
        .unwrap();
    assert!(error.to_string().contains("needs namespaces"), "{error}");
    drop(workspace);
    let left: Vec<_> = std::fs::read_dir(fixture.cache.root().join("workspaces"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "a failed create left {left:?}");
}

#[test]
fn commands_longer_than_one_argument_allows_still_run() {
    let fixture = Fixture::new();
    let payload = "a".repeat(600 * 1024);
    let command = format!("x='{payload}'; echo ${{#x}}");
    for config in [
        isolated(),
        SandboxConfig {
            isolation: Isolation::None,
            ..SandboxConfig::default()
        },
    ] {
        let workspace = fixture.workspace(config);
        let outcome = workspace
            .sandbox()
            .run(&command, Duration::from_secs(20))
            .unwrap();
        assert!(outcome.success(), "{}", outcome.stderr_text());
        assert!(
            outcome
                .stdout_text()
                .starts_with(&format!("{}\n", payload.len())),
            "{}",
            outcome.stdout_text()
        );
    }
}

#[test]
fn kept_changes_stack_under_later_workspaces() {
    use swerve_sandbox::WorkspaceOptions;
    let fixture = Fixture::new();
    let builder = fixture.workspace_with(Strategy::Overlay, isolated());
    let outcome = builder
        .sandbox()
        .run(
            "mkdir -p build && echo artifact > build/lib.so && rm a.txt",
            Duration::from_secs(5),
        )
        .unwrap();
    assert!(outcome.success(), "{}", outcome.stderr_text());
    let saved = fixture.dir.path().join("saved-layer");
    builder.keep_changes(&saved).unwrap();
    assert!(saved.join("build/lib.so").exists());
    let options = WorkspaceOptions {
        sandbox: isolated(),
        repository_layers: vec![saved.clone()],
        ..WorkspaceOptions::default()
    };
    for _ in 0..2 {
        let workspace = Workspace::create(&fixture.cache, &fixture.base(), &options).unwrap();
        let seen = workspace
            .sandbox()
            .run(
                "cat build/lib.so; ls a.txt 2>&1; echo more >> build/lib.so",
                Duration::from_secs(5),
            )
            .unwrap();
        assert_eq!(
            seen.stdout_text(),
            "artifact\nls: cannot access 'a.txt': No such file or directory\n"
        );
    }
    assert_eq!(
        std::fs::read_to_string(saved.join("build/lib.so")).unwrap(),
        "artifact\n",
        "the saved layer must stay unchanged"
    );
    assert_eq!(
        std::fs::read_dir(fixture.cache.root().join("workspaces"))
            .unwrap()
            .count(),
        0
    );
}
