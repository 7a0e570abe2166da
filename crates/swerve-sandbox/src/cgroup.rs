//! Per-sandbox cgroups for the memory and process-count limits.
//!
//! Uses the unified hierarchy (cgroup v2) when `/sys/fs/cgroup` is one (enabling the memory
//! and pids controllers for the root's children when no init did), else the v1 `memory` and
//! `pids` controllers. Creating cgroups needs write access to the hierarchy (root, or a
//! delegated subtree); without it the limits fall back to rlimits, and `swerve doctor` says
//! so.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::Limits;

const ROOT: &str = "/sys/fs/cgroup";
const GROUP: &str = "swerve";

/// The cgroup directories of one sandbox; removed on drop.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dirs: Vec<PathBuf>,
}

/// Which cgroup layout this host offers to swerve, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupSupport {
    /// Unified hierarchy with the memory and pids controllers available.
    V2,
    /// Legacy hierarchy with writable memory and pids controllers.
    V1,
    /// No writable cgroup hierarchy: limits come from rlimits only.
    Unavailable,
}

impl CgroupSupport {
    /// Probes the host once per process: this process must be able to create (and remove) a
    /// cgroup in swerve's group of each controller it needs.
    pub fn detect() -> Self {
        static DETECTED: std::sync::OnceLock<CgroupSupport> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(Self::probe)
    }

    fn probe() -> Self {
        let root = Path::new(ROOT);
        if root.join("cgroup.controllers").exists() {
            let controllers =
                std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
            let group = root.join(GROUP);
            if controllers.contains("memory")
                && controllers.contains("pids")
                && enable_at_root(root)
                && can_create_in(&group)
                && std::fs::write(group.join("cgroup.subtree_control"), "+memory +pids").is_ok()
            {
                return Self::V2;
            }
        } else if ["memory", "pids"]
            .iter()
            .all(|controller| can_create_in(&root.join(controller).join(GROUP)))
        {
            return Self::V1;
        }
        Self::Unavailable
    }
}

/// Whether the root cgroup hands the memory and pids controllers down to its children,
/// enabling them if it does not: without an init that enables them (systemd does), a
/// cgroup-v2 host's root has an empty `cgroup.subtree_control`, and no child could limit
/// memory or processes. The root is exempt from the rule that a cgroup with processes cannot
/// enable controllers for its children, so this works while processes live in it, as the
/// container runtimes' cgroupfs drivers do it.
fn enable_at_root(root: &Path) -> bool {
    let delegated = || {
        let enabled =
            std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
        let words: Vec<&str> = enabled.split_whitespace().collect();
        words.contains(&"memory") && words.contains(&"pids")
    };
    delegated()
        || (std::fs::write(root.join("cgroup.subtree_control"), "+memory +pids").is_ok()
            && delegated())
}

/// Whether a child cgroup can be created (and removed again) under `group`.
fn can_create_in(group: &Path) -> bool {
    static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let number = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = group.join(format!("probe-{}-{number}", std::process::id()));
    let created = std::fs::create_dir_all(group).is_ok() && std::fs::create_dir(&probe).is_ok();
    let _ = std::fs::remove_dir(&probe);
    created
}

impl Cgroup {
    /// Creates the cgroups for sandbox `name` with `limits`. `Ok(None)` when cgroups are unavailable.
    pub fn create(
        support: CgroupSupport,
        name: &str,
        limits: &Limits,
    ) -> std::io::Result<Option<Self>> {
        let root = Path::new(ROOT);
        let dirs = match support {
            CgroupSupport::Unavailable => return Ok(None),
            CgroupSupport::V2 => vec![root.join(GROUP).join(name)],
            CgroupSupport::V1 => vec![
                root.join("memory").join(GROUP).join(name),
                root.join("pids").join(GROUP).join(name),
            ],
        };
        let cgroup = Self { dirs };
        for dir in &cgroup.dirs {
            std::fs::create_dir_all(dir)?;
        }
        let (memory_file, pids_file, memory_dir, pids_dir) = match support {
            CgroupSupport::V2 => ("memory.max", "pids.max", &cgroup.dirs[0], &cgroup.dirs[0]),
            _ => (
                "memory.limit_in_bytes",
                "pids.max",
                &cgroup.dirs[0],
                &cgroup.dirs[1],
            ),
        };
        if let Some(bytes) = limits.memory_bytes {
            std::fs::write(memory_dir.join(memory_file), bytes.to_string())?;
            if support == CgroupSupport::V2 {
                let _ = std::fs::write(memory_dir.join("memory.swap.max"), "0");
            }
        }
        if let Some(count) = limits.max_processes {
            std::fs::write(pids_dir.join(pids_file), count.to_string())?;
        }
        Ok(Some(cgroup))
    }

    /// The `cgroup.procs` files a process writes its PID to, to join.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .map(|dir| dir.join("cgroup.procs"))
            .collect()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The kernel refuses to remove a cgroup until its last process has been reaped.
        let deadline = Instant::now() + Duration::from_secs(2);
        for dir in &self.dirs {
            while std::fs::remove_dir(dir).is_err() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}
