//! Submodules of a task's repository, checked out at the recorded commits from the
//! repositories directory (astropy's `astropy_helpers`, issue 26): real git, a real sandbox
//! without network running `git submodule update --init` as astropy's `setup.py` does.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{isolated, sh};
use swerve_core::{Shell, Task};
use swerve_sandbox::{Cache, RepoMap, Submodules, Workspace, WorkspaceOptions};
use swerve_testing::repo;

/// `repos/astro/helpers` (a commit recorded by the superproject, then a later one) and
/// `repos/astro/main`, whose tree records the first at `astropy_helpers` and whose
/// `.gitmodules` names it by a GitHub URL nothing may fetch. Returns (the superproject's
/// commit, the recorded submodule commit, the submodule's later commit).
fn repositories(repos: &Path) -> (String, String, String) {
    let helpers = repos.join("astro/helpers");
    repo::init(&helpers);
    repo::write(&helpers, &[("ah_bootstrap.py", "VERSION = 'recorded'\n")]);
    let recorded = repo::commit_all(&helpers, "recorded helpers");
    sh(&helpers, "git tag v1.0");
    repo::write(&helpers, &[("ah_bootstrap.py", "VERSION = 'future'\n")]);
    let future = repo::commit_all(&helpers, "helpers from the future");
    sh(&helpers, "git tag v2.0");

    let main = repos.join("astro/main");
    repo::init(&main);
    repo::write(
        &main,
        &[
            ("setup.py", "print('setup')\n"),
            (
                ".gitmodules",
                "[submodule \"astropy_helpers\"]\n\tpath = astropy_helpers\n\turl = https://github.com/astro/helpers.git\n",
            ),
        ],
    );
    // A gitlink without a checkout: `git add -A` would drop it, so it is committed as is.
    sh(
        &main,
        &format!(
            "git add -A && git update-index --add --cacheinfo 160000,{recorded},astropy_helpers \
             && git commit -qm 'main with a submodule'"
        ),
    );
    (sh(&main, "git rev-parse HEAD"), recorded, future)
}

/// A cache under `dir` and a map finding repositories under `repos`.
fn cache_and_repos(dir: &Path, repos: &Path) -> (Cache, RepoMap) {
    let cache = Cache::open(dir.join("cache")).unwrap();
    let map = RepoMap {
        repos_dirs: vec![repos.to_path_buf()],
        ..RepoMap::default()
    };
    (cache, map)
}

/// The base of `commit` with its submodules checked out from the repositories directory.
fn checked_out(cache: &Cache, map: &RepoMap, commit: &str) -> swerve_sandbox::BaseCheckout {
    cache
        .prepare_task_base(map, &task(commit), Submodules::CheckOut { network: false })
        .unwrap()
}

fn task(commit: &str) -> Task {
    Task::new("astro__main-1", "astro/main", commit, "a task")
}

#[test]
fn submodules_are_checked_out_at_the_recorded_commit_from_the_repositories_directory() {
    let dir = tempfile::tempdir().unwrap();
    let repos = dir.path().join("repos");
    let (commit, recorded, future) = repositories(&repos);
    let (cache, map) = cache_and_repos(dir.path(), &repos);
    let base = checked_out(&cache, &map, &commit);
    let helpers = base.path.join("astropy_helpers");
    assert_eq!(sh(&helpers, "git rev-parse HEAD"), recorded);
    assert_eq!(
        std::fs::read_to_string(helpers.join("ah_bootstrap.py")).unwrap(),
        "VERSION = 'recorded'\n"
    );
    // Its later history is unreachable: no ref, tag or reflog names the future commit.
    let reachable = sh(&helpers, "git rev-list --all --reflog");
    assert_eq!(reachable, recorded, "only the recorded commit's history");
    assert!(!reachable.contains(&future));
    assert_eq!(sh(&helpers, "git tag"), "v1.0");
    assert_eq!(sh(&helpers, "git remote"), "");

    // In a sandbox without network, astropy's step finds the submodule in place.
    let workspace = Workspace::create(
        &cache,
        &base,
        &WorkspaceOptions {
            sandbox: isolated(),
            ..Default::default()
        },
    )
    .unwrap();
    let outcome = workspace
        .sandbox()
        .run(
            "git submodule update --init -- astropy_helpers && git submodule status \
             && cat astropy_helpers/ah_bootstrap.py && git status --porcelain",
            Duration::from_secs(30),
        )
        .unwrap();
    assert!(
        outcome.success(),
        "{}{}",
        outcome.stdout_text(),
        outcome.stderr_text()
    );
    assert_eq!(
        outcome.stdout_text(),
        format!(" {recorded} astropy_helpers (v1.0)\nVERSION = 'recorded'\n")
    );

    // Prepared once: a second call finds it done.
    let again = checked_out(&cache, &map, &commit);
    assert_eq!(again, base);
}

#[test]
fn a_submodule_missing_from_the_repositories_directory_is_an_error_naming_it_unless_the_images_hold_none()
 {
    let dir = tempfile::tempdir().unwrap();
    let repos = dir.path().join("repos");
    let (commit, recorded, _) = repositories(&repos);
    std::fs::remove_dir_all(repos.join("astro/helpers")).unwrap();
    let (cache, map) = cache_and_repos(dir.path(), &repos);
    let error = cache
        .prepare_task_base(
            &map,
            &task(&commit),
            Submodules::CheckOut { network: false },
        )
        .unwrap_err()
        .to_string();
    for part in [
        "submodule astropy_helpers",
        "https://github.com/astro/helpers.git",
        &recorded,
        &format!("no {}", repos.join("astro/helpers").display()),
        "lay its repository out as DIR/astro/helpers",
    ] {
        assert!(error.contains(part), "{part:?} not in: {error}");
    }

    // Unless the dataset's images hold none (SWE-Gym's moto images hold no
    // terraform-provider-aws): then it is left uninitialized, as a clone leaves it.
    let base = cache
        .prepare_task_base(&map, &task(&commit), Submodules::Leave)
        .unwrap();
    let helpers = base.path.join("astropy_helpers");
    assert!(!helpers.join(".git").exists());
    assert_eq!(std::fs::read_dir(&helpers).unwrap().count(), 0, "empty");
    assert_eq!(
        sh(&base.path, "git submodule status"),
        format!(
            "-{} astropy_helpers",
            sh(&base.path, "git rev-parse HEAD:astropy_helpers")
        )
    );
}

#[test]
fn an_empty_gitmodules_declares_no_submodules() {
    let dir = tempfile::tempdir().unwrap();
    let repos = dir.path().join("repos");
    let main = repos.join("astro/main");
    repo::init(&main);
    // getmoto/moto's `.gitmodules` is empty at some commits: `git config --get-regexp`
    // then exits 1, which is not an error.
    repo::write(
        &main,
        &[("setup.py", "print('setup')\n"), (".gitmodules", "")],
    );
    let commit = repo::commit_all(&main, "an empty .gitmodules");
    let (cache, map) = cache_and_repos(dir.path(), &repos);
    let base = checked_out(&cache, &map, &commit);
    assert_eq!(sh(&base.path, "git status --porcelain"), "");
}
