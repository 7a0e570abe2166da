//! The disk quota of a workspace: how much its commands may write before they are stopped.
//!
//! A workspace's writes land in host directories: the repository's overlay layer (or its
//! copy), the layers of copy-on-write environments, and its `HOME`. swerve measures them: one
//! watchdog thread per process walks every live sandbox's directories every 100 ms, every
//! 20 ms once half the quota is used (less often when a walk takes long, so it never spends
//! more than a tenth of its time walking). When a sandbox is over its quota and still growing,
//! the watchdog kills every command running in it; commands that read, or delete files to make
//! room, are left alone. A command that the watchdog stopped, or that ends (after running at
//! least a few milliseconds) with the workspace over its quota, is reported with
//! `disk_limit`. Each single file is also capped at the quota by `RLIMIT_FSIZE`, so one write
//! cannot run past it. What can still be written beyond the quota is what a command writes
//! between two checks (tens of milliseconds of disk bandwidth); the host's disk is never
//! filled by a sandbox. `docs/sandbox.md` says what applies on each filesystem.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The pause between two checks of a sandbox that has used less than half its quota.
const INTERVAL: Duration = Duration::from_millis(100);

/// The pause between two checks of a sandbox past half its quota.
const CLOSE_INTERVAL: Duration = Duration::from_millis(20);

/// One sandbox's quota and the state the watchdog shares with it.
pub(crate) struct DiskQuota {
    /// Bytes the workspace's commands may add.
    pub limit: u64,
    /// The directories its writes land in.
    dirs: Vec<PathBuf>,
    /// What those directories held when the workspace was created (a copy of the base).
    baseline: u64,
    /// Set by the watchdog when the sandbox went over its quota; cleared by the next command.
    exceeded: AtomicBool,
    /// What the watchdog measured last, in bytes.
    last_used: AtomicU64,
    /// Called by the watchdog to stop every command of the sandbox.
    stop_all: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
}

impl DiskQuota {
    /// A quota of `limit` bytes over `dirs`, counting from what they hold now.
    pub fn new(limit: u64, dirs: Vec<PathBuf>) -> Self {
        let baseline = dirs.iter().map(|dir| usage(dir)).sum();
        Self {
            limit,
            dirs,
            baseline,
            exceeded: AtomicBool::new(false),
            last_used: AtomicU64::new(0),
            stop_all: Mutex::new(None),
        }
    }

    /// Bytes written beyond the baseline.
    pub fn used(&self) -> u64 {
        self.dirs
            .iter()
            .map(|dir| usage(dir))
            .sum::<u64>()
            .saturating_sub(self.baseline)
    }

    /// Whether the workspace has used up its quota (a write at the limit failed, or one past
    /// it went through).
    pub fn is_over(&self) -> bool {
        self.used() >= self.limit
    }

    /// Whether the watchdog found the sandbox over its quota since the last call.
    pub fn take_exceeded(&self) -> bool {
        self.exceeded.swap(false, Ordering::Relaxed)
    }

    /// Takes in what the watchdog measured, `used` bytes; whether to stop the sandbox's
    /// commands. Over the quota and still growing means something is writing: stop it.
    /// Commands that read or delete (to make room) are left alone. The next command to end
    /// hears of the stop ([`Self::take_exceeded`]) if the workspace is still over its quota
    /// then (`sandbox.rs`).
    fn observe(&self, used: u64) -> bool {
        let grew = used > self.last_used.swap(used, Ordering::Relaxed);
        let stop = used >= self.limit && grew;
        if stop {
            self.exceeded.store(true, Ordering::Relaxed);
        }
        stop
    }

    /// Starts watching `quota`; `stop_all` ends every command of its sandbox. Watching ends
    /// when the last `Arc` of the quota is dropped.
    pub fn watch(quota: &Arc<Self>, stop_all: Box<dyn Fn() + Send + Sync>) {
        *quota
            .stop_all
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(stop_all);
        let watchdog = WATCHDOG.get_or_init(|| {
            std::thread::Builder::new()
                .name("swerve-disk-quota".into())
                .spawn(run_watchdog)
                .expect("starting the disk quota watchdog");
            Mutex::new(Vec::new())
        });
        watchdog
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(Watched {
                quota: Arc::downgrade(quota),
                next: Instant::now() + INTERVAL,
            });
    }
}

/// A quota the watchdog checks, and when it checks it next.
struct Watched {
    quota: Weak<DiskQuota>,
    next: Instant,
}

static WATCHDOG: std::sync::OnceLock<Mutex<Vec<Watched>>> = std::sync::OnceLock::new();

fn run_watchdog() {
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let Some(watchdog) = WATCHDOG.get() else {
            continue;
        };
        let due: Vec<Arc<DiskQuota>> = {
            let mut watched = watchdog
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            watched.retain(|entry| entry.quota.strong_count() > 0);
            let now = Instant::now();
            watched
                .iter()
                .filter(|entry| entry.next <= now)
                .filter_map(|entry| entry.quota.upgrade())
                .collect()
        };
        for quota in due {
            let started = Instant::now();
            let used = quota.used();
            let spent = started.elapsed();
            if quota.observe(used)
                && let Some(stop_all) = quota
                    .stop_all
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .as_ref()
            {
                stop_all();
            }
            let interval = if used.saturating_mul(2) >= quota.limit {
                CLOSE_INTERVAL
            } else {
                INTERVAL
            };
            let next = Instant::now() + interval.max(spent * 10);
            let mut watched = watchdog
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(entry) = watched
                .iter_mut()
                .find(|entry| std::ptr::eq(entry.quota.as_ptr(), Arc::as_ptr(&quota)))
            {
                entry.next = next;
            }
        }
    }
}

/// Disk space a directory tree occupies (allocated blocks; hard links counted once).
pub(crate) fn usage(dir: &Path) -> u64 {
    let mut total = 0;
    let mut seen = HashSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if metadata.nlink() > 1
            && !metadata.is_dir()
            && !seen.insert((metadata.dev(), metadata.ino()))
        {
            continue;
        }
        total += metadata.blocks() * 512;
        if metadata.is_dir()
            && let Ok(entries) = std::fs::read_dir(&path)
        {
            pending.extend(entries.flatten().map(|entry| entry.path()));
        }
    }
    total
}

/// Bytes in a form people read: `10 GiB`, `512 MiB`, `1.5 GiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: &[&str] = &["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_counts_allocated_blocks_and_hard_links_once() {
        let dir = tempfile::tempdir().unwrap();
        let empty = usage(dir.path());
        std::fs::write(dir.path().join("a"), vec![1u8; 1 << 20]).unwrap();
        std::fs::hard_link(dir.path().join("a"), dir.path().join("b")).unwrap();
        let used = usage(dir.path()) - empty;
        assert!((1 << 20..(1 << 20) + 65536).contains(&used), "{used}");
    }

    #[test]
    fn a_quota_counts_from_what_its_directories_held_at_the_start() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("base"), vec![1u8; 1 << 20]).unwrap();
        let quota = DiskQuota::new(512 << 10, vec![dir.path().to_path_buf()]);
        assert!(!quota.is_over());
        std::fs::write(dir.path().join("new"), vec![1u8; 1 << 20]).unwrap();
        assert!(quota.is_over());
    }

    #[test]
    fn writers_over_the_quota_are_stopped_and_readers_are_not() {
        let quota = DiskQuota::new(100, Vec::new());
        assert!(!quota.observe(50));
        assert!(!quota.take_exceeded());
        // Over and growing: stopped, and the next command hears of it once.
        assert!(quota.observe(120));
        assert!(quota.take_exceeded());
        assert!(!quota.take_exceeded());
        // Over but not growing (reading, or deleting to make room): left alone.
        assert!(!quota.observe(120));
        assert!(!quota.observe(110));
        assert!(!quota.take_exceeded());
        // Growing again: stopped again.
        assert!(quota.observe(115));
        assert!(quota.take_exceeded());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(10 << 30), "10 GiB");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(human_bytes(12), "12 bytes");
    }
}
