//! Base checkouts keep the branch and tags of SWE-bench's images and nothing after the base
//! commit; bases of the old format (no tags) are rebuilt. Real git repositories throughout.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{isolated, sh};
use swerve_core::Shell;
use swerve_sandbox::{BASE_FORMAT, BaseCheckout, Cache, RepoSource, Workspace, WorkspaceOptions};

/// Seconds since the epoch of the fixture's first commit.
const T0: i64 = 1_600_000_000;

/// A repository whose base commit has tags before and after it, on and off its history:
///
/// ```text
/// one (T0+1000)         v0.1 (annotated), v0.1-alias (annotated, of v0.1), old-light
/// ├─ side (T0+1500)     side-old (annotated); merged into main after the base
/// two (T0+2000)         v0.2 (annotated)
/// three (T0+3000 +0900) light-0.2.1: the base's time, a later wall-clock time
/// skewed (T0+9000)      skewed: an ancestor whose committer clock ran ahead
/// base (T0+3000)
/// merge side (T0+4000)
/// the fix (T0+5000)     v1.0 (annotated), new-light
/// ```
///
/// plus `blob-tag`, a tag of a blob that no commit contains.
struct History {
    dir: tempfile::TempDir,
    repo: PathBuf,
    cache: Cache,
    base_commit: String,
}

/// The tags a base of [`History`] keeps.
const KEPT: [&str; 5] = ["light-0.2.1", "old-light", "v0.1", "v0.1-alias", "v0.2"];

impl History {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        let git = |command: &str| sh(&repo, command);
        git("git init -q -b main && git config user.name t && git config user.email t@t");
        git("git config advice.nestedTag false");
        let commit = |message: &str, time: i64, zone: &str| {
            std::fs::write(
                repo.join(format!("{}.txt", message.replace(' ', "-"))),
                message,
            )
            .unwrap();
            sh(
                &repo,
                &format!(
                    "git add -A && GIT_AUTHOR_DATE='@{time} {zone}' GIT_COMMITTER_DATE='@{time} {zone}' git commit -qm '{message}'"
                ),
            );
        };
        let tag = |arguments: &str, time: i64| {
            sh(
                &repo,
                &format!("GIT_COMMITTER_DATE='@{time} +0000' git tag {arguments}"),
            );
        };
        commit("one", T0 + 1000, "+0000");
        tag("-a -m 'version 0.1' v0.1", T0 + 1000);
        tag("-a -m 'another name' v0.1-alias v0.1", T0 + 1000);
        tag("old-light", T0 + 1000);
        git("git checkout -q -b side");
        commit("side", T0 + 1500, "+0000");
        tag("-a -m 'on the side' side-old", T0 + 1500);
        git("git checkout -q main");
        commit("two", T0 + 2000, "+0000");
        tag("-a -m 'version 0.2' v0.2", T0 + 2000);
        commit("three", T0 + 3000, "+0900");
        tag("light-0.2.1", T0 + 3000);
        commit("skewed", T0 + 9000, "+0000");
        tag("skewed", T0 + 9000);
        commit("base", T0 + 3000, "+0000");
        let base_commit = git("git rev-parse HEAD");
        sh(
            &repo,
            &format!(
                "GIT_AUTHOR_DATE='@{t} +0000' GIT_COMMITTER_DATE='@{t} +0000' git merge -q --no-ff -m 'merge side' side",
                t = T0 + 4000
            ),
        );
        commit("the fix", T0 + 5000, "+0000");
        tag("-a -m 'version 1.0' v1.0", T0 + 5000);
        tag("new-light", T0 + 5000);
        git("git tag blob-tag $(echo 'in no commit' | git hash-object -w --stdin)");
        let cache = Cache::open(dir.path().join("cache")).unwrap();
        Self {
            dir,
            repo,
            cache,
            base_commit,
        }
    }

    fn base(&self) -> BaseCheckout {
        self.cache
            .prepare_base(
                "test/history",
                &RepoSource::Local(self.repo.clone()),
                &self.base_commit,
            )
            .unwrap()
    }

    /// The repository as SWE-bench's image builder leaves it: a clone of the default branch
    /// alone, reset to the base commit, without its remote, tags whose commit is newer than
    /// the base commit deleted, reflogs expired.
    fn as_swe_bench_images_have_it(&self) -> PathBuf {
        let official = self.dir.path().join("official");
        sh(
            self.dir.path(),
            &format!(
                "git clone -q --single-branch --branch main file://{} official",
                self.repo.display()
            ),
        );
        sh(
            &official,
            &format!(
                "git reset -q --hard {base} && git remote remove origin && \
                 limit=$(git log -1 --format=%ct {base}) && \
                 for tag in $(git tag -l); do \
                   commit=$(git rev-parse -q --verify \"$tag^{{commit}}\") || continue; \
                   [ $(git log -1 --format=%ct $commit) -le $limit ] || git tag -d $tag >/dev/null; \
                 done && git reflog expire --expire=now --all",
                base = self.base_commit
            ),
        );
        official
    }
}

fn lines(text: &str) -> BTreeSet<String> {
    text.lines().map(str::to_owned).collect()
}

#[test]
fn tags_at_or_before_the_base_on_its_history_are_kept() {
    let history = History::new();
    let base = history.base();
    let in_base = |command: &str| sh(&base.path, command);
    assert_eq!(
        lines(&in_base("git tag -l")),
        KEPT.iter().map(|tag| tag.to_string()).collect()
    );
    for annotated in ["v0.1", "v0.1-alias", "v0.2"] {
        assert_eq!(in_base(&format!("git cat-file -t {annotated}")), "tag");
    }
    assert_eq!(in_base("git cat-file -t v0.1-alias^{}"), "commit");
    assert_eq!(in_base("git cat-file -t old-light"), "commit");

    let short = in_base("git rev-parse --short HEAD");
    assert_eq!(
        in_base("git describe --tags"),
        format!("light-0.2.1-2-g{short}")
    );
    assert_eq!(in_base("git describe"), format!("v0.2-3-g{short}"));

    let official = history.as_swe_bench_images_have_it();
    let in_official = |command: &str| sh(&official, command);
    for command in [
        "git describe --tags",
        "git describe",
        "git rev-parse HEAD",
        "git symbolic-ref HEAD",
        "git branch --format='%(refname) %(upstream)'",
        "git status --porcelain",
    ] {
        assert_eq!(in_base(command), in_official(command), "{command}");
    }
    // SWE-bench also keeps an older tag its clone fetched off the base's history.
    let official_tags = lines(&in_official("git tag -l"));
    let base_tags = lines(&in_base("git tag -l"));
    assert_eq!(
        official_tags.difference(&base_tags).collect::<Vec<_>>(),
        ["side-old"]
    );
    assert!(base_tags.is_subset(&official_tags));
}

#[test]
fn the_base_is_on_the_source_branch_and_clean() {
    let history = History::new();
    let base = history.base();
    let in_base = |command: &str| sh(&base.path, command);
    assert_eq!(in_base("git rev-parse HEAD"), history.base_commit);
    assert_eq!(in_base("git symbolic-ref HEAD"), "refs/heads/main");
    assert_eq!(in_base("git status --porcelain --ignored"), "");
    assert_eq!(
        in_base("git status --branch --porcelain=v2 | grep '^# branch' | cut -d' ' -f2-"),
        format!("branch.oid {}\nbranch.head main", history.base_commit)
    );
}

#[test]
fn nothing_after_the_base_is_reachable() {
    let history = History::new();
    let base = history.base();
    let in_base = |command: &str| sh(&base.path, command);
    let commit = &history.base_commit;
    assert_eq!(in_base(&format!("git rev-list --all --not {commit}")), "");
    assert_eq!(
        lines(&in_base("git rev-list --all")),
        lines(&in_base(&format!("git rev-list {commit}")))
    );
    assert_eq!(
        in_base("git log --all --format=%s"),
        "base\nskewed\nthree\ntwo\none"
    );
    let mut refs: BTreeSet<String> = KEPT.iter().map(|tag| format!("refs/tags/{tag}")).collect();
    refs.insert("refs/heads/main".into());
    assert_eq!(
        lines(&in_base("git for-each-ref --format='%(refname)'")),
        refs
    );
    assert_eq!(in_base("git remote"), "");
    assert_eq!(in_base("git reflog show --all"), "");
    assert_eq!(
        in_base("git config --get-regexp '^(remote|branch)\\.' || true"),
        ""
    );
    // Whatever is kept is complete: the tag objects and the history they name.
    in_base("git fsck --no-dangling --no-progress");
    assert!(!base.path.join("the-fix.txt").exists());
}

#[test]
fn a_source_with_a_detached_head_gives_a_detached_base() {
    let history = History::new();
    // At a commit no branch ends at: else the clone guesses that branch.
    sh(&history.repo, "git checkout -q --detach HEAD~1");
    let base = history.base();
    let in_base = |command: &str| sh(&base.path, command);
    assert_eq!(
        in_base("git symbolic-ref -q HEAD || echo detached"),
        "detached"
    );
    assert_eq!(in_base("git rev-parse HEAD"), history.base_commit);
    assert_eq!(in_base("git for-each-ref refs/heads"), "");
    assert_eq!(lines(&in_base("git tag -l")).len(), KEPT.len());
}

/// Turns the base at `base` into what swerve made before tags were kept: detached, no ref at
/// all, only the `<commit>.ready` marker.
fn make_old_format(base: &BaseCheckout, markers: &Path) {
    sh(
        &base.path,
        "git checkout -q --detach && git for-each-ref --format='delete %(refname)' | git update-ref --stdin",
    );
    std::fs::remove_file(markers.join(format!("{}.v{BASE_FORMAT}.ready", base.commit))).unwrap();
    assert_eq!(sh(&base.path, "git tag -l"), "");
}

#[test]
fn a_base_of_the_old_format_is_rebuilt_without_disturbing_its_workspaces() {
    let history = History::new();
    let markers = history.cache.root().join("bases/test/history");
    let base = history.base();
    for marker in [
        format!("{}.ready", base.commit),
        format!("{}.v{BASE_FORMAT}.ready", base.commit),
    ] {
        assert_eq!(
            std::fs::read_to_string(markers.join(&marker)).unwrap(),
            base.commit,
            "{marker}"
        );
    }
    make_old_format(&base, &markers);
    // A workspace layered over the old base, still running while the base is rebuilt.
    let workspace = Workspace::create(
        &history.cache,
        &base,
        &WorkspaceOptions {
            sandbox: isolated(),
            ..Default::default()
        },
    )
    .unwrap();
    let run = |command: &str| {
        let outcome = workspace
            .sandbox()
            .run(command, Duration::from_secs(10))
            .unwrap();
        assert_eq!(outcome.exit_code, Some(0), "{}", outcome.stderr_text());
        outcome.stdout_text()
    };
    assert_eq!(run("git tag -l; cat base.txt"), "base");

    let rebuilt = history.base();
    assert_eq!(rebuilt, base);
    assert_eq!(
        lines(&sh(&rebuilt.path, "git tag -l")),
        KEPT.iter().map(|tag| tag.to_string()).collect()
    );
    assert!(
        markers
            .join(format!("{}.v{BASE_FORMAT}.ready", base.commit))
            .exists()
    );
    // The old base was moved aside, not deleted: the workspace still reads it.
    let retired = history.cache.root().join("retired");
    assert_eq!(std::fs::read_dir(&retired).unwrap().count(), 1);
    assert_eq!(
        run("cat base.txt && git rev-parse HEAD && git tag -l && git status --porcelain"),
        format!("base{}\n", history.base_commit)
    );
    // Opening the cache while the workspace lives keeps the retired base; afterwards it goes.
    Cache::open(history.cache.root()).unwrap();
    assert_eq!(std::fs::read_dir(&retired).unwrap().count(), 1);
    workspace.destroy().unwrap();
    Cache::open(history.cache.root()).unwrap();
    assert_eq!(std::fs::read_dir(&retired).unwrap().count(), 0);
    // A current base is reused as it is.
    let marker = rebuilt
        .path
        .join(".git")
        .metadata()
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(history.base(), rebuilt);
    assert_eq!(
        rebuilt
            .path
            .join(".git")
            .metadata()
            .unwrap()
            .modified()
            .unwrap(),
        marker
    );
}

/// Gives [`History`]'s source everything that could carry the future into a base besides its
/// branches and tags: a remote with a tracking ref, notes, a stash, reflogs naming the fix,
/// `ORIG_HEAD`, a dangling commit and blob, objects both loose and packed. Returns the blob of
/// the fix (`the-fix.txt`), which only later history has.
fn add_the_future(history: &History) -> String {
    let git = |command: &str| sh(&history.repo, command);
    git("git repack -q -d && git commit -q --allow-empty -m 'loose after the pack'");
    git("git remote add upstream https://example.com/history.git");
    git("git update-ref refs/remotes/upstream/main HEAD");
    git("git notes add -m 'fixes everything' HEAD");
    git("echo scratch > base.txt && git stash -q");
    git("git branch feature && git reset -q --hard HEAD~1 && git reset -q --hard ORIG_HEAD");
    git("echo 'dangling future' | git hash-object -w --stdin");
    git("git commit-tree -m dangling HEAD^{tree}");
    let fix = git("git rev-parse HEAD~1:the-fix.txt");
    assert_eq!(git(&format!("git cat-file -t {fix}")), "blob");
    fix
}

#[test]
fn a_rollout_finds_nothing_after_the_base_anywhere_in_git() {
    let history = History::new();
    let fix = add_the_future(&history);
    let base = history.base();
    let workspace = Workspace::create(
        &history.cache,
        &base,
        &WorkspaceOptions {
            sandbox: isolated(),
            ..Default::default()
        },
    )
    .unwrap();
    let run = |command: &str| {
        let outcome = workspace
            .sandbox()
            .run(command, Duration::from_secs(30))
            .unwrap();
        (outcome.exit_code, outcome.stdout_text())
    };
    let ok = |command: &str| {
        let (code, stdout) = run(command);
        assert_eq!(code, Some(0), "{command}: {stdout}");
        stdout
    };
    let history_of_base = lines(&ok("git rev-list HEAD"));
    assert_eq!(lines(&ok("git rev-list --all")), history_of_base);
    assert_eq!(
        ok("git log --all --format=%s"),
        "base\nskewed\nthree\ntwo\none\n"
    );
    let commits = ok(
        "git cat-file --batch-all-objects --batch-check='%(objecttype) %(objectname)' | sed -n 's/^commit //p'",
    );
    assert_eq!(lines(&commits), history_of_base);
    // Nothing unreachable: fsck finds no dangling object to recover.
    assert_eq!(ok("git fsck --unreachable --no-progress 2>&1"), "");
    assert_eq!(ok("git fsck --lost-found --no-progress 2>&1"), "");
    assert_eq!(ok("ls .git/lost-found 2>/dev/null | wc -l"), "0\n");
    // `git cat-file -e` answers 1 for a missing object, 0 for one that is there.
    assert_eq!(
        run("git cat-file -e $(git rev-parse HEAD:base.txt)").0,
        Some(0)
    );
    for blob in [
        fix.as_str(),
        "$(echo 'dangling future' | git hash-object --stdin)",
    ] {
        assert_eq!(run(&format!("git cat-file -e {blob}")).0, Some(1), "{blob}");
    }
    assert_eq!(
        ok("git stash list; git notes list; git reflog; git remote"),
        ""
    );
    assert_eq!(
        ok("ls .git | grep -E '_HEAD$|^logs$' || true; ls .git/objects/info"),
        ""
    );
    // One pack of its own: no alternates, nothing shared with the source.
    let packs = ok(
        "ls .git/objects/pack/*.pack | wc -l; find .git/objects -type f | grep -vc /pack/ || true",
    );
    assert_eq!(packs, "1\n0\n");
    for entry in std::fs::read_dir(base.path.join(".git/objects/pack")).unwrap() {
        let metadata = entry.unwrap().metadata().unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&metadata), 1);
    }
    // The checkout is unchanged: on its branch, tags kept, clean, complete.
    assert_eq!(ok("git symbolic-ref HEAD"), "refs/heads/main\n");
    assert_eq!(
        lines(&ok("git tag -l")),
        KEPT.iter().map(|tag| tag.to_string()).collect()
    );
    assert_eq!(ok("git status --porcelain && cat base.txt"), "base");
    ok("git fsck --no-dangling --no-progress");
    // The source still has all of it: the test would see a leak.
    assert_eq!(sh(&history.repo, &format!("git cat-file -t {fix}")), "blob");
}
