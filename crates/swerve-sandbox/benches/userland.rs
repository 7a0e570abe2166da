//! The base userland's cost: building the default base root cold, and a sandbox over it
//! beside one over the host's system directories (the anchor), measured in the same run.
//!
//! Run with `cargo bench -p swerve-sandbox --bench userland` as root, with `debootstrap`
//! and Debian's mirror reachable. The build goes into a fresh cache, unless
//! `SWERVE_BENCH_USERLAND_CACHE` names a cache (kept between runs): when its base root is
//! already built only the sandboxes are measured. `SWERVE_BENCH_QUICK=1` takes fewer samples.
//! Prints a Markdown table for `BENCHMARKS.md`.

use std::time::{Duration, Instant};

use swerve_sandbox::{
    BaseUserland, Cache, Isolation, RepoSource, SandboxConfig, Strategy, Userland, Workspace,
    WorkspaceOptions,
};
use swerve_testing::bench::{Report, Samples};
use swerve_testing::{repo, sh};

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let scratch = tempfile::tempdir().unwrap();
    let cache_dir = std::env::var_os("SWERVE_BENCH_USERLAND_CACHE")
        .map(Into::into)
        .unwrap_or_else(|| scratch.path().join("cache"));
    let cache = Cache::open(cache_dir).unwrap();
    let mut report = Report::default();
    let definition = BaseUserland::default();

    let already_built = cache.built_base_root(&definition).is_some();
    let started = Instant::now();
    let root = cache.base_root(&definition).unwrap();
    if !already_built {
        report.row(
            "build the default base root, cold (SWE-bench's 13 packages)",
            "`debootstrap --variant=minbase --include=…` from deb.debian.org, then cleanup",
            &Samples::single(started.elapsed()),
            None,
        );
    }
    let size = sh(scratch.path(), &format!("du -sh {}", root.path.display()));
    report.note(format!(
        "base root {} (key {}, glibc {}): {}",
        root.path.display(),
        definition.key(),
        root.glibc,
        size.split_whitespace().next().unwrap_or("?")
    ));

    let repository = scratch.path().join("repo");
    repo::init(&repository);
    repo::write(&repository, &[("a.txt", "one\n")]);
    let commit = repo::commit_all(&repository, "base");
    let base = cache
        .prepare_base("bench/userland", &RepoSource::Local(repository), &commit)
        .unwrap();
    let options = |userland| WorkspaceOptions {
        strategy: Strategy::Overlay,
        sandbox: SandboxConfig {
            isolation: Isolation::Namespaces,
            userland,
            ..SandboxConfig::default()
        },
        ..WorkspaceOptions::default()
    };
    let (host_options, base_options) = (options(Userland::Host), options(Userland::Base));
    let once = |options: &WorkspaceOptions| {
        let started = Instant::now();
        let workspace = Workspace::create(&cache, &base, options).unwrap();
        let outcome = workspace
            .shell()
            .run("true", Duration::from_secs(30))
            .unwrap();
        assert!(outcome.success());
        workspace.destroy().unwrap();
        started.elapsed()
    };
    let n = if quick { 10 } else { 50 };
    let (mut on_host, mut on_base) = (Vec::new(), Vec::new());
    for _ in 0..n {
        on_base.push(once(&base_options));
        on_host.push(once(&host_options));
    }
    let (on_host, on_base) = (Samples::from(on_host), Samples::from(on_base));
    let what = "create workspace + sandbox, `true`, destroy";
    report.row(
        what,
        "over the base root (`userland = \"base\"`)",
        &on_base,
        None,
    );
    report.row(
        what,
        "over the host's system directories (anchor)",
        &on_host,
        Some(&on_base),
    );
    report.print();
}
