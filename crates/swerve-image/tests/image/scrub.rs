//! An image's repository is scrubbed before any agent sees it: the `swe` test image (built by
//! `scripts/test-images.sh`) keeps, as SWE-bench's images did before their fix of #465, the
//! fix of `subtract` in later commits, a tag, a branch, a remote, notes, a stash, a reflog
//! and dangling objects. In a workspace of the image none of it is left, the base's history
//! and older tag are, and the scrub is done once per image, not per workspace. A task that
//! starts from the image's code with a patch applied (SWE-smith's bug) gets that code as the
//! repository's one commit: nothing of the code before the patch, its solution, is left, in
//! git or outside it (a byte-compiled cache, a copy installed without `-e`: the `swe-cached`
//! image).

use std::time::Duration;

use swerve_core::Shell;
use swerve_eval::workspaces::{self, Origin};
use swerve_image::{IdMapping, ImagesConfig, Store};
use swerve_sandbox::{
    Cache, ImageRoot, Isolation, SandboxConfig, SandboxError, Workspace, WorkspaceOptions,
};

use crate::support::layout;

/// Runs `command` in `workspace`'s sandbox; its exit code and standard output.
fn run(workspace: &Workspace, command: &str) -> (Option<i32>, String) {
    let outcome = workspace
        .sandbox()
        .run(command, Duration::from_secs(60))
        .unwrap();
    (outcome.exit_code, outcome.stdout_text())
}

/// Like [`run`], asserting success.
fn ok(workspace: &Workspace, command: &str) -> String {
    let (code, stdout) = run(workspace, command);
    assert_eq!(code, Some(0), "{command}: {stdout}");
    stdout
}

#[test]
fn an_image_repository_holds_nothing_after_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let Some((root, options, cache)) = swe_image(dir.path()) else {
        return;
    };

    // The image itself has the future: read its unscrubbed repository from its layers.
    let image_repo = image_repository(&root);
    let in_image = |command: &str| swerve_testing::sh(&image_repo, command);
    let fix = in_image("git rev-parse feature:calc/__init__.py");
    assert_eq!(in_image(&format!("git cat-file -t {fix}")), "blob");
    assert!(
        in_image("git rev-list --all --count")
            .parse::<u32>()
            .unwrap()
            > 3
    );

    let workspace = workspaces::create(&cache, image(&root, None), &options).unwrap();
    let head = ok(&workspace, "git rev-parse HEAD");
    assert_eq!(workspace.base().commit, head.trim());
    assert_eq!(
        ok(&workspace, "git log --format=%s"),
        "subtract, tests\nadd\n"
    );
    let history: Vec<&str> = vec!["subtract, tests", "add"];
    assert_eq!(
        ok(&workspace, "git log --all --format=%s")
            .lines()
            .collect::<Vec<_>>(),
        history
    );
    assert_eq!(
        ok(&workspace, "git rev-list --all"),
        ok(&workspace, "git rev-list HEAD")
    );
    let mut commits: Vec<String> = ok(
        &workspace,
        "git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' | sed -n 's/^commit //p'",
    )
    .lines()
    .map(str::to_owned)
    .collect();
    commits.sort();
    let mut reachable: Vec<String> = ok(&workspace, "git rev-list HEAD")
        .lines()
        .map(str::to_owned)
        .collect();
    reachable.sort();
    assert_eq!(commits, reachable);
    assert_eq!(
        ok(&workspace, "git fsck --unreachable --no-progress 2>&1"),
        ""
    );
    assert_eq!(
        ok(&workspace, "git fsck --lost-found --no-progress 2>&1"),
        ""
    );
    // `git cat-file -e` answers 1 for a missing object, 0 for one that is there.
    assert_eq!(
        run(
            &workspace,
            "git cat-file -e $(git rev-parse HEAD:calc/__init__.py)"
        )
        .0,
        Some(0)
    );
    for blob in [
        fix.as_str(),
        "$(echo 'dangling future' | git hash-object --stdin)",
    ] {
        assert_eq!(
            run(&workspace, &format!("git cat-file -e {blob}")).0,
            Some(1),
            "{blob}"
        );
    }
    assert_eq!(
        ok(
            &workspace,
            "git stash list; git notes list; git reflog; git remote; git branch --format='%(refname)'"
        ),
        "refs/heads/main\n"
    );
    assert_eq!(ok(&workspace, "git tag -l"), "v0.9\n");
    assert_eq!(
        ok(&workspace, "git describe --tags"),
        format!("v0.9-1-g{}\n", &head.trim()[..7])
    );
    assert_eq!(
        ok(&workspace, "ls .git | grep -E '_HEAD$|^logs$' || true"),
        ""
    );
    // The working tree is the image's: the bug is there, the whited-out build product not.
    assert!(ok(&workspace, "cat calc/__init__.py").contains("return a + b\n"));
    assert_eq!(ok(&workspace, "git status --porcelain --ignored"), "");
    workspace.destroy().unwrap();

    // Once per image: the second workspace reuses the cached layer.
    let scrubbed: Vec<_> = std::fs::read_dir(cache.root().join("scrubbed"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.path())
        .collect();
    assert_eq!(scrubbed.len(), 1, "{scrubbed:?}");
    let made = scrubbed[0].metadata().unwrap().modified().unwrap();
    let again = workspaces::create(&cache, image(&root, None), &options).unwrap();
    assert_eq!(ok(&again, "git rev-list --all --count"), "2\n");
    assert_eq!(scrubbed[0].metadata().unwrap().modified().unwrap(), made);
    // The layer holds the repository's git directory and nothing else.
    let top: Vec<_> = std::fs::read_dir(&scrubbed[0])
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name())
        .collect();
    assert_eq!(top, ["testbed"]);
}

/// The factory's origin for `root`, from `starting_patch` when given.
fn image<'a>(root: &'a ImageRoot, starting_patch: Option<&'a str>) -> Origin<'a> {
    Origin::Image {
        root,
        starting_patch,
    }
}

/// The repository in `root`'s layers, as the image has it (not scrubbed).
fn image_repository(root: &ImageRoot) -> std::path::PathBuf {
    root.layers
        .iter()
        .map(|layer| layer.join("testbed"))
        .find(|repo| repo.join(".git").is_dir())
        .unwrap()
}

/// The `swe` test image unpacked in `dir`, options for a workspace of it, and a cache.
fn swe_image(dir: &std::path::Path) -> Option<(ImageRoot, WorkspaceOptions, Cache)> {
    test_image(dir, "swe")
}

/// The test image `tag` unpacked in `dir`, options for a workspace of it, and a cache.
fn test_image(dir: &std::path::Path, tag: &str) -> Option<(ImageRoot, WorkspaceOptions, Cache)> {
    let layout = layout()?;
    let store = Store::open(&dir.join("store"), &ImagesConfig::default()).unwrap();
    let record = store
        .import(&layout, Some(tag), &format!("localhost/swerve/{tag}"))
        .unwrap();
    let sandbox = SandboxConfig {
        isolation: Isolation::Namespaces,
        ..SandboxConfig::default()
    };
    let root = store
        .root_for(&record, IdMapping::for_sandbox(&sandbox).unwrap())
        .unwrap();
    let options = WorkspaceOptions {
        sandbox,
        ..Default::default()
    };
    Some((root, options, Cache::open(dir.join("cache")).unwrap()))
}

/// A SWE-smith-style bug for the `swe` image's repository at `image_repo`: `add` multiplies.
/// The image's code is the solution.
fn bug_for(dir: &std::path::Path, image_repo: &std::path::Path) -> String {
    let clone = dir.join("clone");
    std::fs::create_dir_all(clone.join("calc")).unwrap();
    let solution = swerve_testing::sh_exact(image_repo, "git show HEAD:calc/__init__.py");
    std::fs::write(clone.join("calc/__init__.py"), solution).unwrap();
    swerve_testing::sh(&clone, "git init -q && git add -A");
    let bug = swerve_testing::sh_exact(
        &clone,
        "sed -i 's/return a + b/return a * b/' calc/__init__.py && git diff --full-index",
    );
    assert!(bug.contains("return a * b"), "{bug}");
    bug
}

#[test]
fn a_starting_patch_is_the_only_commit_and_the_code_before_it_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let Some((root, options, cache)) = swe_image(dir.path()) else {
        return;
    };
    let image_repo = image_repository(&root);
    let bug = bug_for(dir.path(), &image_repo);
    let solution_blob = swerve_testing::sh(&image_repo, "git rev-parse HEAD:calc/__init__.py");

    let workspace = workspaces::create(&cache, image(&root, Some(&bug)), &options).unwrap();
    assert!(ok(&workspace, "cat calc/__init__.py").contains("return a * b\n"));
    assert_eq!(ok(&workspace, "git status --porcelain"), "");
    let head = ok(&workspace, "git rev-parse HEAD");
    assert_eq!(workspace.base().commit, head.trim());
    assert_eq!(ok(&workspace, "git rev-list --all"), head);
    assert_eq!(
        ok(&workspace, "git log --format=%s"),
        "The task's starting state\n"
    );
    assert_eq!(
        ok(
            &workspace,
            "git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' | sed -n 's/^commit //p'"
        ),
        head
    );
    // `git cat-file -e` answers 1 for a missing object: the solution's blob is gone.
    assert_eq!(
        run(&workspace, &format!("git cat-file -e {solution_blob}")).0,
        Some(1)
    );
    assert_eq!(
        ok(
            &workspace,
            "git tag -l; git stash list; git reflog; git remote"
        ),
        ""
    );
    // The solution, the patch reversed, applies to the starting state.
    ok(
        &workspace,
        &format!("cat >/tmp/bug.diff <<'EOF'\n{bug}EOF\ngit apply -R /tmp/bug.diff"),
    );
    assert!(ok(&workspace, "cat calc/__init__.py").contains("return a + b\n"));
    workspace.destroy().unwrap();

    // Made once per image and patch, and the same commit every time.
    let again = workspaces::create(&cache, image(&root, Some(&bug)), &options).unwrap();
    assert_eq!(ok(&again, "git rev-parse HEAD"), head);
    let layers = std::fs::read_dir(cache.root().join("scrubbed"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .count();
    assert_eq!(layers, 1);
    // The image without the patch is another layer, with the image's history.
    let plain = workspaces::create(&cache, image(&root, None), &options).unwrap();
    assert_eq!(ok(&plain, "git rev-list --all --count"), "2\n");

    // A patch made for other code leaves no starting state to test in.
    let foreign = bug.replace("return a + b", "return a ** b");
    match workspaces::create(&cache, image(&root, Some(&foreign)), &options) {
        Err(SandboxError::StartingPatch { image, detail }) => {
            assert_eq!(image, root.reference);
            assert!(detail.contains("calc/__init__.py"), "{detail}");
        }
        other => panic!(
            "expected a starting patch error, got {:?}",
            other.map(|_| ())
        ),
    }
}

#[test]
fn the_code_before_a_starting_patch_is_not_left_outside_git() {
    let dir = tempfile::tempdir().unwrap();
    let Some((root, options, cache)) = test_image(dir.path(), "swe-cached") else {
        return;
    };
    let image_repo = image_repository(&root);
    let bug = bug_for(dir.path(), &image_repo);
    let solution_blob = swerve_testing::sh(&image_repo, "git rev-parse HEAD:calc/__init__.py");
    let site = "/opt/miniconda3/envs/testbed/lib/python3.11/site-packages/calc";
    // The image holds the solution outside git: compiled in the work tree, and installed.
    let in_layers = |path: &str| {
        root.layers
            .iter()
            .any(|layer| layer.join(path.trim_start_matches('/')).exists())
    };
    assert!(in_layers("/testbed/calc/__pycache__"));
    assert!(in_layers(&format!("{site}/__init__.py")));
    assert!(in_layers(&format!("{site}/__pycache__")));

    let workspace = workspaces::create(&cache, image(&root, Some(&bug)), &options).unwrap();
    // No byte-compiled cache of the code before the bug in the work tree, none committed.
    assert_eq!(
        ok(
            &workspace,
            "find . -name .git -prune -o -name '*.py[co]' -print"
        ),
        ""
    );
    assert_eq!(ok(&workspace, "git ls-files | grep -c pyc || true"), "0\n");
    // The installed copy is the starting state's code, without its old cache.
    assert!(ok(&workspace, &format!("cat {site}/__init__.py")).contains("return a * b\n"));
    assert_eq!(
        ok(
            &workspace,
            &format!("ls {site}/__pycache__ 2>/dev/null || true")
        ),
        ""
    );
    // No file anywhere holds the solution's content.
    let holders = ok(
        &workspace,
        &format!(
            "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -name '__init__.py' \
             -exec git hash-object {{}} + | grep -c {solution_blob} || true"
        ),
    );
    assert_eq!(holders, "0\n");
    // The repository itself is as without the caches: one commit, the bug in it.
    assert_eq!(ok(&workspace, "git status --porcelain"), "");
    assert!(ok(&workspace, "cat calc/__init__.py").contains("return a * b\n"));
    workspace.destroy().unwrap();

    // The same layer serves the next workspace.
    let again = workspaces::create(&cache, image(&root, Some(&bug)), &options).unwrap();
    assert!(ok(&again, &format!("cat {site}/__init__.py")).contains("return a * b\n"));
    assert_eq!(
        ok(
            &again,
            "find . -name .git -prune -o -name '*.py[co]' -print"
        ),
        ""
    );
}
