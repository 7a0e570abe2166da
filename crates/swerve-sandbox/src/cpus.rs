//! Which CPUs a sandbox runs on, and the CPU count its commands compute.
//!
//! A test's verdict must not depend on the host: code that sizes a worker pool (pylint's
//! `--jobs=0`, loky, `multiprocessing.cpu_count()`, `nproc`) has to find the same number
//! whatever the host's core count or cgroup layout. The host picks the sandbox's CPUs
//! ([`choose`]): `limits.cpus` of the CPUs swerve itself may use, or all of them. The init
//! pins itself to them (every command inherits the affinity) and shows the same list as
//! `/sys/devices/system/cpu/online`, which glibc's `sysconf(_SC_NPROCESSORS_ONLN)` (and so
//! Python's `os.cpu_count()`) counts; `sched_getaffinity` (`nproc`, `os.sched_getaffinity`)
//! agrees by construction.

use std::sync::atomic::{AtomicUsize, Ordering};

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

use crate::error::SandboxError;

/// The CPUs a new sandbox runs on: all the CPUs this process may use when `wanted` is
/// `None`, else `wanted` of them, each sandbox starting one CPU further than the previous,
/// so sandboxes with fewer CPUs than the host spread over it.
pub(crate) fn choose(wanted: Option<u32>) -> Result<Vec<usize>, SandboxError> {
    let allowed = allowed()?;
    let Some(wanted) = wanted else {
        return Ok(allowed);
    };
    let wanted = wanted as usize;
    if wanted == 0 || wanted > allowed.len() {
        return Err(SandboxError::Setup(format!(
            "limits.cpus is {wanted}, but swerve may use {} CPU(s) here ({}): set limits.cpus \
             between 1 and {}, or leave it unset to give sandboxes every CPU",
            allowed.len(),
            cpu_list(&allowed),
            allowed.len()
        )));
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let start = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut chosen: Vec<usize> = (0..wanted)
        .map(|offset| allowed[(start + offset) % allowed.len()])
        .collect();
    chosen.sort_unstable();
    Ok(chosen)
}

/// The CPUs this process may run on.
fn allowed() -> Result<Vec<usize>, SandboxError> {
    let set = sched_getaffinity(Pid::from_raw(0))
        .map_err(|error| SandboxError::Setup(format!("cannot read the CPU affinity: {error}")))?;
    Ok((0..CpuSet::count())
        .filter(|&cpu| set.is_set(cpu).unwrap_or(false))
        .collect())
}

/// Pins the calling process (and so every process it starts) to `cpus`.
pub(crate) fn pin(cpus: &[usize]) -> Result<(), String> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu)
            .map_err(|error| format!("CPU {cpu} cannot be pinned: {error}"))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set)
        .map_err(|error| format!("cannot pin the sandbox to CPUs {}: {error}", cpu_list(cpus)))
}

/// `cpus` (ascending) in the kernel's list format, as `/sys/devices/system/cpu/online` shows
/// it: `0-3,6`.
pub(crate) fn cpu_list(cpus: &[usize]) -> String {
    let mut ranges: Vec<String> = Vec::new();
    let mut index = 0;
    while index < cpus.len() {
        let first = cpus[index];
        let mut last = first;
        while index + 1 < cpus.len() && cpus[index + 1] == last + 1 {
            index += 1;
            last = cpus[index];
        }
        ranges.push(match first == last {
            true => first.to_string(),
            false => format!("{first}-{last}"),
        });
        index += 1;
    }
    ranges.join(",")
}

#[cfg(test)]
mod tests {
    use super::cpu_list;

    #[test]
    fn lists_cpus_as_the_kernel_does() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[0, 2, 4, 5]), "0,2,4-5");
    }
}
