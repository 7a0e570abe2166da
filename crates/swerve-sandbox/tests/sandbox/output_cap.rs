//! 100 MB of output keeps the host's memory bounded (its own binary, so the peak RSS
//! measured is this test's alone).

use crate::common;

use std::time::Duration;

use common::{Fixture, isolated};
use swerve_core::Shell;

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn hundred_megabytes_of_output_keep_memory_bounded() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let before = peak_rss_kib();
    let outcome = workspace
        .sandbox()
        .run(
            "head -c 100000000 /dev/zero; head -c 100000000 /dev/zero >&2; echo done >&2",
            Duration::from_secs(60),
        )
        .unwrap();
    let grown_mib = (peak_rss_kib() - before) / 1024;
    assert!(outcome.success());
    assert_eq!(
        outcome.stdout.len(),
        workspace.sandbox().config().output_cap_bytes
    );
    assert!(outcome.stdout_truncated && outcome.stderr_truncated);
    assert!(
        grown_mib < 16,
        "peak memory grew by {grown_mib} MiB for 200 MB of output"
    );
}
