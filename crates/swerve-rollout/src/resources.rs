//! What this process has used so far: CPU time and peak memory, for the run summary (and the
//! rollout benchmark, which reads them from there).
//!
//! The figures cover swerve's own process, all threads, and not its children: sandbox inits
//! and the commands they run are separate processes with their own accounting.

use serde::Serialize;

/// CPU and memory used by this process.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ResourceUsage {
    /// User-mode CPU seconds.
    pub cpu_user_seconds: f64,
    /// Kernel-mode CPU seconds.
    pub cpu_system_seconds: f64,
    /// Largest resident set size so far, in bytes.
    pub peak_rss_bytes: u64,
}

impl ResourceUsage {
    /// The usage of this process now.
    pub fn of_this_process() -> Self {
        let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
            .map(|usage| {
                let seconds = |time: nix::sys::time::TimeVal| {
                    time.tv_sec() as f64 + time.tv_usec() as f64 / 1e6
                };
                (
                    seconds(usage.user_time()),
                    seconds(usage.system_time()),
                    // Linux reports the peak in KiB.
                    (usage.max_rss().max(0) as u64) * 1024,
                )
            })
            .unwrap_or_default();
        Self {
            cpu_user_seconds: usage.0,
            cpu_system_seconds: usage.1,
            peak_rss_bytes: usage.2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_grows_with_work() {
        let before = ResourceUsage::of_this_process();
        let mut sum = 0u64;
        for i in 0..20_000_000u64 {
            sum = sum.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(sum);
        let after = ResourceUsage::of_this_process();
        assert!(after.cpu_user_seconds + after.cpu_system_seconds > before.cpu_user_seconds);
        assert!(after.peak_rss_bytes > 1 << 20);
    }
}
