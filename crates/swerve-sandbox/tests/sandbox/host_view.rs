//! What a sandbox shows of its host: the same as a container on a cgroup-v2 host, whatever the
//! host runs (issue 26). Each test runs real code in a real sandbox on this machine, which may
//! be a cgroup-v1 host; docs/sandbox.md has the table these tests hold to.

use crate::common;

use std::time::Duration;

use common::{Fixture, isolated};
use swerve_core::Shell;
use swerve_sandbox::{Limits, SandboxConfig, Workspace};

/// Every way Python code counts CPUs, one per line as `name=count`:
/// - `pylint`: pylint's `_cpu_count()` (pylint/lint/run.py, 2.13 to 3.x): the v1 `cpu` controller's
///   CFS quota over its period, else its `cpu.shares` / 1024, at least 1; the smaller of that
///   and the affinity's size;
/// - `loky`: loky's `cpu_count()` (joblib's): the smallest of `os.cpu_count()`, the affinity's
///   size and the cgroup's CPU quota (v2 `cpu.max`, else v1 `cpu.cfs_quota_us` over
///   `cpu.cfs_period_us`), rounded up;
/// - `os_cpu_count`, `multiprocessing`, `affinity`, `nproc`.
const COUNT_CPUS: &str = r#"python3 - <<'EOF'
import math, multiprocessing, os, subprocess
from pathlib import Path

def pylint_query_cpu():
    quota, available = None, None
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").is_file():
        quota = int((v1 / "cpu.cfs_quota_us").read_text().strip())
    if quota and quota != -1 and (v1 / "cpu.cfs_period_us").is_file():
        available = int(quota / int((v1 / "cpu.cfs_period_us").read_text().strip()))
    elif (v1 / "cpu.shares").is_file():
        available = int(int((v1 / "cpu.shares").read_text().strip()) / 1024)
    if available == 0:
        available = 1
    return available

def pylint_cpu_count():
    share = pylint_query_cpu()
    count = len(os.sched_getaffinity(0))
    return min(share, count) if share is not None else count

def loky_cpu_count():
    quota = None
    v2, v1 = Path("/sys/fs/cgroup/cpu.max"), Path("/sys/fs/cgroup/cpu")
    if v2.is_file():
        limit, period = v2.read_text().split()
        if limit != "max":
            quota = math.ceil(int(limit) / int(period))
    elif (v1 / "cpu.cfs_quota_us").is_file():
        limit = int((v1 / "cpu.cfs_quota_us").read_text())
        if limit > 0:
            quota = math.ceil(limit / int((v1 / "cpu.cfs_period_us").read_text()))
    counts = [os.cpu_count(), len(os.sched_getaffinity(0))] + ([quota] if quota else [])
    return min(counts)

print(f"pylint={pylint_cpu_count()}")
print(f"loky={loky_cpu_count()}")
print(f"os_cpu_count={os.cpu_count()}")
print(f"multiprocessing={multiprocessing.cpu_count()}")
print(f"affinity={len(os.sched_getaffinity(0))}")
print(f"nproc={subprocess.run(['nproc'], capture_output=True, text=True).stdout.strip()}")
EOF"#;

fn run(workspace: &Workspace, command: &str) -> String {
    let outcome = workspace
        .sandbox()
        .run(command, Duration::from_secs(30))
        .unwrap();
    assert!(
        outcome.success(),
        "`{command}` failed: {}",
        outcome.stderr_text()
    );
    outcome.stdout_text()
}

/// Asserts every CPU count the sandbox's code computes is `expected`.
fn assert_counts(workspace: &Workspace, expected: usize) {
    let output = run(workspace, COUNT_CPUS);
    let counts: Vec<(&str, &str)> = output
        .lines()
        .filter_map(|line| line.split_once('='))
        .collect();
    assert_eq!(counts.len(), 6, "{output}");
    for (name, count) in counts {
        assert_eq!(
            count,
            expected.to_string(),
            "{name} counted {count}: {output}"
        );
    }
}

/// The CPUs this test process may use, which a sandbox without `limits.cpus` gets.
fn host_cpus() -> usize {
    nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
        .map(|set| {
            (0..nix::sched::CpuSet::count())
                .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
                .count()
        })
        .unwrap()
}

fn with_cpus(cpus: Option<u32>) -> SandboxConfig {
    SandboxConfig {
        limits: Limits {
            cpus,
            ..Limits::default()
        },
        ..isolated()
    }
}

/// On a cgroup-v1 host the host's `cpu.shares` (1024) made pylint count one CPU and skip its
/// multiprocessing tests; every count must be the CPUs the sandbox was given.
#[test]
fn every_cpu_count_is_the_cpus_the_sandbox_was_given() {
    let fixture = Fixture::new();
    assert_counts(&fixture.workspace(with_cpus(None)), host_cpus());
    assert_counts(&fixture.workspace(with_cpus(Some(1))), 1);
    let all = u32::try_from(host_cpus()).unwrap();
    assert_counts(&fixture.workspace(with_cpus(Some(all))), host_cpus());
}

#[test]
fn more_cpus_than_the_host_allows_is_an_error_naming_the_setting() {
    let fixture = Fixture::new();
    let too_many = u32::try_from(host_cpus()).unwrap() + 1;
    let error = swerve_sandbox::Workspace::create(
        &fixture.cache,
        &fixture.base(),
        &swerve_sandbox::WorkspaceOptions {
            sandbox: with_cpus(Some(too_many)),
            ..Default::default()
        },
    )
    .err()
    .expect("a sandbox with more CPUs than the host has");
    let message = error.to_string();
    assert!(
        message.contains(&format!("limits.cpus is {too_many}")),
        "{message}"
    );
}

/// `/sys/fs/cgroup` is the sandbox's own cgroup2 view, read-only: none of a v1 host's
/// controller directories, nothing of other cgroups, nothing a command can create.
#[test]
fn the_cgroup_tree_is_the_sandboxs_own_cgroup2_view() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let output = run(
        &workspace,
        "stat -f -c %T /sys/fs/cgroup; ls /sys/fs/cgroup; \
         mkdir /sys/fs/cgroup/escape 2>/dev/null && echo created || echo refused",
    );
    let mut lines = output.lines();
    assert_eq!(lines.next(), Some("cgroup2fs"), "{output}");
    let entries: Vec<&str> = lines.clone().collect();
    for controller in ["cpu", "cpuacct", "cpuset", "memory", "pids", "systemd"] {
        assert!(
            !entries.contains(&controller),
            "{controller} shown: {output}"
        );
    }
    assert!(entries.contains(&"cgroup.procs"), "{output}");
    assert!(!entries.contains(&"swerve"), "{output}");
    assert_eq!(entries.last(), Some(&"refused"), "{output}");
}

/// `/sys` is a sysfs of the sandbox's network namespace: its interfaces (`lo`), not the
/// host's, as in a container.
#[test]
fn sys_shows_the_sandboxs_network_interfaces_not_the_hosts() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    assert_eq!(run(&workspace, "ls /sys/class/net").trim(), "lo");
    let firmware = run(&workspace, "ls -A /sys/firmware | wc -l");
    assert_eq!(firmware.trim(), "0", "/sys/firmware is masked");
}

#[test]
fn pseudo_terminals_are_the_sandboxs_own_as_in_a_container() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    // What jq's tests/shtest does to fake a terminal (util-linux `script`); Python's `pty`
    // and expect-style tests need the same. The devpts instance is new: it lists only the
    // terminals opened inside, never the host's.
    let output = run(
        &workspace,
        "ls /dev/pts; readlink /dev/ptmx; \
         script -qec 'tty; ls -1 /dev/pts' /dev/null | tr -d '\\r'",
    );
    assert_eq!(output, "ptmx\npts/ptmx\n/dev/pts/0\n0\nptmx\n", "{output}");
}
