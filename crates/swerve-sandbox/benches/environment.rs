//! Environment benchmarks, each beside its anchor measured in the same run.
//!
//! Run with `cargo bench -p swerve-sandbox --bench environment` (install `bubblewrap` first
//! to get the bwrap anchor). Prints a Markdown table for `BENCHMARKS.md`. Sizes can be
//! reduced for a quick look with `SWERVE_BENCH_QUICK=1`. `scripts/bench-sandbox-before-after.sh
//! REV` runs it over this tree and over an earlier revision, one after the other.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use swerve_core::Shell;
use swerve_sandbox::{
    BaseCheckout, Cache, Isolation, SandboxConfig, Strategy, Workspace, WorkspaceOptions,
};
use swerve_testing::bench::{Report, Samples, time_n};
use swerve_testing::sh;

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let scratch = tempfile::tempdir().unwrap();
    let cache = Cache::open(scratch.path().join("cache")).unwrap();
    let mut report = Report::default();
    let base_mb = if quick { 20 } else { 200 };
    let base = big_base(scratch.path(), base_mb);
    let options = WorkspaceOptions {
        strategy: Strategy::Overlay,
        sandbox: SandboxConfig {
            isolation: Isolation::Namespaces,
            ..SandboxConfig::default()
        },
        ..WorkspaceOptions::default()
    };

    round_trips(
        &mut report,
        &cache,
        &base,
        &options,
        if quick { 50 } else { 300 },
    );
    create_destroy(
        &mut report,
        scratch.path(),
        &cache,
        &base,
        &options,
        if quick { 3 } else { 5 },
        base_mb,
    );
    concurrent(&mut report, &cache, &base, &options, 64);
    report.print();
}

/// A git repository of about `megabytes` MB (source-like files) plus an untracked Python venv.
fn big_base(dir: &Path, megabytes: usize) -> BaseCheckout {
    let repo = dir.join("big");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let line = "def function_with_a_reasonably_long_name(argument_one, argument_two):  # comment\n";
    let file_bytes = 40 * 1024;
    let content: String = line.repeat(file_bytes / line.len());
    for index in 0..(megabytes * 1024 * 1024 / file_bytes) {
        let sub = repo.join("src").join(format!("pkg{}", index / 100));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            sub.join(format!("module_{index}.py")),
            format!("# {index}\n{content}"),
        )
        .unwrap();
    }
    std::fs::write(repo.join(".gitignore"), ".venv/\n").unwrap();
    sh(
        &repo,
        "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm base",
    );
    sh(&repo, "python3 -m venv .venv");
    let commit = sh(&repo, "git rev-parse HEAD");
    eprintln!(
        "base: {} ({})",
        repo.display(),
        sh(&repo, "du -sh . | cut -f1")
    );
    BaseCheckout { path: repo, commit }
}

fn round_trips(
    report: &mut Report,
    cache: &Cache,
    base: &BaseCheckout,
    options: &WorkspaceOptions,
    n: usize,
) {
    let workspace = Workspace::create(cache, base, options).unwrap();
    let sandboxed = time_n(n, || {
        let outcome = workspace
            .sandbox()
            .run("true", Duration::from_secs(10))
            .unwrap();
        assert!(outcome.success());
    });
    let plain = time_n(n, || {
        assert!(
            Command::new("/bin/sh")
                .arg("-c")
                .arg("true")
                .status()
                .unwrap()
                .success()
        );
    });
    report.row(
        "`true` round trip",
        "swerve sandbox (namespaces, cgroups)",
        &sandboxed,
        None,
    );
    report.row(
        "`true` round trip",
        "plain subprocess `sh -c true` (anchor)",
        &plain,
        Some(&sandboxed),
    );
    if Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let bwrap = time_n(n, || {
            let status = Command::new("bwrap")
                .args([
                    "--ro-bind",
                    "/",
                    "/",
                    "--dev",
                    "/dev",
                    "--proc",
                    "/proc",
                    "--unshare-all",
                    "--die-with-parent",
                    "/bin/sh",
                    "-c",
                    "true",
                ])
                .status()
                .unwrap();
            assert!(status.success());
        });
        report.row(
            "`true` round trip",
            "`bwrap --unshare-all sh -c true` (anchor)",
            &bwrap,
            Some(&sandboxed),
        );
    } else {
        eprintln!("bwrap not installed: apt-get install bubblewrap for that anchor");
    }
}

fn create_destroy(
    report: &mut Report,
    dir: &Path,
    cache: &Cache,
    base: &BaseCheckout,
    options: &WorkspaceOptions,
    n: usize,
    base_mb: usize,
) {
    let title = format!("create + destroy workspace ({base_mb} MB base + venv)");
    let overlay = time_n(n * 10, || {
        let workspace = Workspace::create(cache, base, options).unwrap();
        workspace.destroy().unwrap();
    });
    let copy_target = dir.join("cp-copy");
    let cp = time_n(n, || {
        sh(
            dir,
            &format!("cp -a {} {}", base.path.display(), copy_target.display()),
        );
        sh(dir, &format!("rm -rf {}", copy_target.display()));
    });
    let worktree = dir.join("worktree");
    let git = time_n(n, || {
        sh(
            &base.path,
            &format!("git worktree add -q --detach {} HEAD", worktree.display()),
        );
        sh(
            &base.path,
            &format!("git worktree remove --force {}", worktree.display()),
        );
    });
    report.row(
        &title,
        "swerve overlay workspace (+ its sandbox)",
        &overlay,
        None,
    );
    report.row(&title, "`cp -a` + `rm -rf` (anchor)", &cp, Some(&overlay));
    report.row(
        &title,
        "`git worktree add` + `remove` (anchor)",
        &git,
        Some(&overlay),
    );
}

fn concurrent(
    report: &mut Report,
    cache: &Cache,
    base: &BaseCheckout,
    options: &WorkspaceOptions,
    count: usize,
) {
    let command = |index: usize| {
        format!(
            "echo {index} > out-{index}.txt && cat src/pkg0/module_0.py | wc -l && python3 -c 'print(1)'"
        )
    };
    let swerve = measure_concurrent(count, |index| {
        let workspace = Workspace::create(cache, base, options).unwrap();
        let outcome = workspace
            .sandbox()
            .run(&command(index), Duration::from_secs(60))
            .unwrap();
        assert!(outcome.success(), "{}", outcome.stderr_text());
        workspace.destroy().unwrap();
    });
    let plain = measure_concurrent(count, |index| {
        let status = Command::new("/bin/sh")
            .arg("-c")
            .arg(command(index))
            .current_dir(&base.path)
            .output()
            .unwrap();
        assert!(status.status.success());
        std::fs::remove_file(base.path.join(format!("out-{index}.txt"))).unwrap();
    });
    let title =
        format!("{count} at once: create workspace, run `echo > file; wc; python3 -c`, destroy");
    report.row(
        &title,
        "swerve workspaces (wall time of all)",
        &swerve.0,
        None,
    );
    report.row(
        &title,
        "plain subprocesses in the base, no isolation (anchor)",
        &plain.0,
        Some(&swerve.0),
    );
    report.note(format!(
        "{count} concurrent: peak extra host memory {:.0} MiB with swerve workspaces, {:.0} MiB with plain subprocesses",
        swerve.1 as f64 / (1024.0 * 1024.0),
        plain.1 as f64 / (1024.0 * 1024.0)
    ));
}

/// Runs `body(0..count)` on `count` threads at once; returns the wall time and the peak drop
/// of the host's available memory (sampled every 2 ms).
fn measure_concurrent(count: usize, body: impl Fn(usize) + Sync) -> (Samples, u64) {
    let available = || -> u64 {
        let info = std::fs::read_to_string("/proc/meminfo").unwrap();
        let line = info
            .lines()
            .find(|line| line.starts_with("MemAvailable:"))
            .unwrap();
        line.split_whitespace()
            .nth(1)
            .unwrap()
            .parse::<u64>()
            .unwrap()
            * 1024
    };
    let before = available();
    let lowest = Arc::new(std::sync::atomic::AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let monitor = {
        let (lowest, done) = (lowest.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                lowest.fetch_min(available(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let started = Instant::now();
    std::thread::scope(|scope| {
        for index in 0..count {
            let body = &body;
            scope.spawn(move || body(index));
        }
    });
    let wall = started.elapsed();
    done.store(true, Ordering::Relaxed);
    monitor.join().unwrap();
    (
        Samples::single(wall),
        before.saturating_sub(lowest.load(Ordering::Relaxed)),
    )
}
