//! The cost of scrubbing later history out of base checkouts (issue 26), beside its anchors
//! measured in the same run on the same repository.
//!
//! ```sh
//! SWERVE_BENCH_REPO=/path/to/sympy.git SWERVE_BENCH_COMMIT=2dfa7457f20ee187fbb09b5b6a1631da4458388c \
//!   cargo bench -p swerve-sandbox --bench scrub
//! ```
//!
//! Cold: preparing a base in an empty cache (`Cache::prepare_base`: clone, check out, keep
//! tags, scrub) against the same steps without the scrub's new pack (what base format 2 did:
//! the clone's store, hard-linked to the source's, kept whole), and against SWE-bench's own
//! procedure (`git reflog expire --expire=now --all && git gc --prune=now --aggressive`) and
//! a plain `git gc --prune=now` run after those steps (SWE-bench's aggressive one only with
//! `SWERVE_BENCH_GC_AGGRESSIVE=1`: it takes minutes). Warm: a prepared base is only read
//! back, and a workspace over a scrubbed base is created and destroyed beside one over an
//! unscrubbed base. `SWERVE_BENCH_SAMPLES` (default 3) sets the cold runs; the gc anchors run
//! once. Prints a Markdown table for `BENCHMARKS.md`; without `SWERVE_BENCH_REPO` it says so
//! and measures nothing.

use std::path::Path;
use std::time::Instant;

use swerve_core::Shell;
use swerve_sandbox::{
    BaseCheckout, Cache, Isolation, RepoSource, SandboxConfig, Strategy, Workspace,
    WorkspaceOptions,
};
use swerve_testing::bench::{Report, Samples, time_n};
use swerve_testing::sh;

#[allow(clippy::print_stderr)]
fn main() {
    let (Some(repo), Some(commit)) = (
        std::env::var_os("SWERVE_BENCH_REPO"),
        std::env::var("SWERVE_BENCH_COMMIT").ok(),
    ) else {
        eprintln!(
            "scrub bench: set SWERVE_BENCH_REPO (a repository, e.g. a sympy clone) and \
             SWERVE_BENCH_COMMIT (a commit in it)"
        );
        return;
    };
    let repo = std::fs::canonicalize(repo).unwrap();
    let samples: usize = std::env::var("SWERVE_BENCH_SAMPLES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(3);
    let scratch = tempfile::tempdir().unwrap();
    let mut report = Report::default();

    // Cold: a fresh cache each run.
    let mut run = 0;
    let mut fresh_cache = || {
        run += 1;
        Cache::open(scratch.path().join(format!("cache-{run}"))).unwrap()
    };
    let source = RepoSource::Local(repo.clone());
    let scrubbed = time_n(samples, || {
        fresh_cache()
            .prepare_base("bench/repo", &source, &commit)
            .unwrap();
    });
    let mut made = 0;
    let unscrubbed = time_n(samples, || {
        made += 1;
        unscrubbed_base(
            &repo,
            &commit,
            &scratch.path().join(format!("plain-{made}")),
        );
    });
    report.row(
        "base, cold",
        "swerve: clone, tags, scrub (one fresh pack)",
        &scrubbed,
        None,
    );
    report.row(
        "base, cold",
        "anchor: the same without the scrub's pack (format 2)",
        &unscrubbed,
        Some(&scrubbed),
    );
    let mut gcs = vec![(
        "anchor: + `git gc --prune=now`",
        "git gc --quiet --prune=now",
    )];
    if std::env::var_os("SWERVE_BENCH_GC_AGGRESSIVE").is_some() {
        gcs.push((
            "anchor: + SWE-bench's `git gc --prune=now --aggressive`",
            "git gc --quiet --prune=now --aggressive",
        ));
    }
    for (how, command) in gcs {
        let dir = scratch.path().join(format!("gc-{}", command.len()));
        let started = Instant::now();
        unscrubbed_base(&repo, &commit, &dir);
        sh(&dir, command);
        report.row(
            "base, cold",
            how,
            &Samples::single(started.elapsed()),
            Some(&scrubbed),
        );
        report.note(format!("{how}: {}", store_summary(&dir)));
    }
    let cache = Cache::open(scratch.path().join("warm")).unwrap();
    let base = cache.prepare_base("bench/repo", &source, &commit).unwrap();
    report.note(format!(
        "swerve's base: {}; the anchor's (format 2): {}",
        store_summary(&base.path),
        store_summary(&scratch.path().join("plain-1"))
    ));

    // Warm: the base is read back; a workspace over it costs what it did.
    let reuse = time_n(20, || {
        cache.prepare_base("bench/repo", &source, &commit).unwrap();
    });
    report.row("base, warm", "swerve: the cached base", &reuse, None);
    let options = WorkspaceOptions {
        strategy: Strategy::Overlay,
        sandbox: SandboxConfig {
            isolation: Isolation::Namespaces,
            ..SandboxConfig::default()
        },
        ..WorkspaceOptions::default()
    };
    let over = |base: &BaseCheckout| {
        time_n(10, || {
            let workspace = Workspace::create(&cache, base, &options).unwrap();
            let outcome = workspace
                .sandbox()
                .run("git status --porcelain", std::time::Duration::from_secs(60))
                .unwrap();
            assert_eq!(outcome.exit_code, Some(0));
            workspace.destroy().unwrap();
        })
    };
    let over_scrubbed = over(&base);
    let plain = BaseCheckout {
        path: scratch.path().join("plain-1"),
        commit: base.commit.clone(),
    };
    let over_unscrubbed = over(&plain);
    report.row(
        "workspace create + `git status` + destroy",
        "swerve: over the scrubbed base",
        &over_scrubbed,
        None,
    );
    report.row(
        "workspace create + `git status` + destroy",
        "anchor: over an unscrubbed base",
        &over_unscrubbed,
        Some(&over_scrubbed),
    );
    report.print();
}

/// A base of `commit` made as format 2 made it: a clone without checkout, the commit checked
/// out on the clone's branch, the remote, every other branch and the reflogs gone; the object
/// store is the clone's (hard links to the source's packs), later history included.
fn unscrubbed_base(repo: &Path, commit: &str, dir: &Path) {
    let parent = dir.parent().unwrap();
    sh(
        parent,
        &format!(
            "git clone -q --no-checkout {} {}",
            repo.display(),
            dir.display()
        ),
    );
    sh(
        dir,
        &format!(
            "branch=$(git symbolic-ref --short HEAD) && \
             git -c advice.detachedHead=false checkout -q -B \"$branch\" {commit} && \
             git remote remove origin && \
             {{ echo \"refs/heads/$branch\"; git tag --merged {commit} --format='%(refname)'; }} >.git/kept && \
             git for-each-ref --format='%(refname)' | grep -v -x -F -f .git/kept | \
               sed 's/^/delete /' | git update-ref --no-deref --stdin && \
             rm .git/kept && git reflog expire --expire=now --all"
        ),
    );
}

/// Objects and pack bytes in the store of the repository at `dir`.
fn store_summary(dir: &Path) -> String {
    let objects = sh(
        dir,
        "git cat-file --batch-all-objects --batch-check='%(objecttype)' | sort | uniq -c | tr -s ' ' | paste -sd, -",
    );
    let size = sh(dir, "du -sh --apparent-size .git/objects | cut -f1");
    format!("{objects} ({size} in .git/objects)")
}
