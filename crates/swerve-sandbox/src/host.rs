//! The host's kernel and C library, and the kernel features sandboxes use with the release
//! each needs and what swerve does without it (`swerve doctor`, docs/install.md).

/// A kernel feature a sandbox uses.
#[derive(Debug, Clone)]
pub struct KernelFeature {
    /// What it is, e.g. `"pidfd_open"`.
    pub name: &'static str,
    /// The first kernel release (major, minor) that has it.
    pub since: (u32, u32),
    /// What it gives a sandbox.
    pub gives: &'static str,
    /// What happens on an older kernel.
    pub without: &'static str,
    /// Asks the kernel directly, where a harmless call can (distributions backport system
    /// calls: RHEL 8's 4.18 is not upstream's); `None`: judged by the release number.
    pub probe: Option<fn() -> bool>,
}

/// Whether the kernel knows system call `number`: a call with arguments it must refuse
/// (`EINVAL`, `EBADF`, `ESRCH`…) tells as well as one that works; only `ENOSYS` says no.
fn knows_syscall(number: libc::c_long, args: [libc::c_long; 3]) -> bool {
    // SAFETY: the callers pass arguments that make the call fail or do nothing.
    let result = unsafe { libc::syscall(number, args[0], args[1], args[2]) };
    result >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

/// Every kernel feature with a floor, oldest first.
pub const KERNEL_FEATURES: &[KernelFeature] = &[
    KernelFeature {
        name: "pidfd_open",
        since: (5, 3),
        gives: "sandboxed commands are watched and reaped by their process descriptors",
        without: "sandboxes cannot run commands: use isolation = \"none\" (no isolation)",
        // Process id 0 is never a process: ESRCH or EINVAL where the call exists.
        probe: Some(|| knows_syscall(libc::SYS_pidfd_open, [0, 0, 0])),
    },
    KernelFeature {
        name: "close_range",
        since: (5, 9),
        gives: "a sandbox's init closes inherited descriptors in one call",
        without: "closes each descriptor /proc/self/fd lists (same result)",
        // An empty range above every descriptor (first > last): EINVAL where the call exists.
        probe: Some(|| knows_syscall(libc::SYS_close_range, [2, 1, 0])),
    },
    KernelFeature {
        name: "overlay in userns",
        since: (5, 11),
        gives: "copy-on-write workspaces cost a few directory entries",
        without: "workspace.strategy = \"auto\" copies each workspace (reflink where the \
                  filesystem clones files); \"overlay\" fails",
        probe: None,
    },
];

/// The host's kernel release and C library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSystem {
    /// `uname -r`, e.g. `6.1.0-28-amd64`.
    pub kernel_release: String,
    /// The release's (major, minor), when it parses.
    pub kernel_version: Option<(u32, u32)>,
    /// glibc's version at run time (`gnu_get_libc_version`), e.g. `2.36`.
    pub glibc: String,
}

impl HostSystem {
    /// This host's.
    pub fn current() -> Self {
        // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
        let kernel_release = unsafe {
            let mut name: libc::utsname = std::mem::zeroed();
            if libc::uname(&mut name) == 0 {
                std::ffi::CStr::from_ptr(name.release.as_ptr())
                    .to_string_lossy()
                    .into_owned()
            } else {
                "unknown".to_owned()
            }
        };
        // SAFETY: gnu_get_libc_version returns a static NUL-terminated string.
        let glibc = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) }
            .to_string_lossy()
            .into_owned();
        HostSystem {
            kernel_version: kernel_version(&kernel_release),
            kernel_release,
            glibc,
        }
    }

    /// Each kernel feature with whether this kernel has it, by its release number
    /// (`None`: the release did not parse, so unknown).
    pub fn features_by_release(&self) -> Vec<(&'static KernelFeature, Option<bool>)> {
        KERNEL_FEATURES
            .iter()
            .map(|feature| (feature, self.kernel_version.map(|v| v >= feature.since)))
            .collect()
    }

    /// Each kernel feature with whether this kernel has it: asked of the kernel where a
    /// feature has a probe, else by the release number.
    pub fn features(&self) -> Vec<(&'static KernelFeature, Option<bool>)> {
        self.features_by_release()
            .into_iter()
            .map(|(feature, by_release)| {
                (feature, feature.probe.map(|probe| probe()).or(by_release))
            })
            .collect()
    }
}

unsafe extern "C" {
    fn gnu_get_libc_version() -> *const std::ffi::c_char;
}

/// (major, minor) of a kernel release string: `5.10.0-28-amd64` → (5, 10),
/// `4.18.0-513.el8.x86_64` → (4, 18).
pub fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases_of_common_distributions_parse() {
        assert_eq!(kernel_version("6.1.0-28-amd64"), Some((6, 1)));
        assert_eq!(kernel_version("5.10.0-28-cloud-amd64"), Some((5, 10)));
        assert_eq!(kernel_version("4.18.0-513.el8.x86_64"), Some((4, 18)));
        assert_eq!(kernel_version("5.4.0-150-generic"), Some((5, 4)));
        assert_eq!(
            kernel_version("4.14.336-257.562.amzn2.x86_64"),
            Some((4, 14))
        );
        assert_eq!(kernel_version("6.8"), Some((6, 8)));
        assert_eq!(kernel_version("weird"), None);
        assert_eq!(kernel_version(""), None);
    }

    #[test]
    fn features_follow_the_release() {
        let host = |release: &str| HostSystem {
            kernel_release: release.into(),
            kernel_version: kernel_version(release),
            glibc: "2.17".into(),
        };
        let have = |release: &str| -> Vec<Option<bool>> {
            host(release)
                .features_by_release()
                .into_iter()
                .map(|(_, has)| has)
                .collect()
        };
        assert_eq!(have("4.18.0-513.el8.x86_64"), [Some(false); 3]);
        assert_eq!(
            have("5.4.0-150-generic"),
            [Some(true), Some(false), Some(false)]
        );
        assert_eq!(
            have("5.10.0-28-amd64"),
            [Some(true), Some(true), Some(false)]
        );
        assert_eq!(have("6.1.0-28-amd64"), [Some(true); 3]);
        assert_eq!(have("unknown"), [None; 3]);
        let current = HostSystem::current();
        assert!(current.kernel_version.is_some(), "{current:?}");
        assert!(current.glibc.starts_with("2."), "{current:?}");
    }

    #[test]
    fn probes_agree_with_this_kernel() {
        // This machine's kernel is newer than every floor: each probe finds its call, and a
        // number no kernel has is refused.
        let current = HostSystem::current();
        assert!(current.kernel_version >= Some((5, 11)), "{current:?}");
        for (feature, has) in current.features() {
            assert_eq!(has, Some(true), "{}", feature.name);
        }
        assert!(!knows_syscall(100_000, [0, 0, 0]));
    }
}
