//! The owner of files this process creates inside a sandbox.
//!
//! A sandbox run by root has its own user namespace whose root is an unprivileged host id
//! (see the sandbox crate). Filesystems mounted inside it (the workspace's overlay, its
//! `/tmp`) cannot hold a file owned by an id the namespace does not map, such as host root:
//! creating one fails with `EOVERFLOW`. Host-side code that creates files there (the native
//! tools, the patch's scratch space) does so as the sandbox's root, by switching the calling
//! thread's filesystem ids for the duration of the call. Reads and writes to existing files
//! need nothing.

/// A host user and group that files are created as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOwner {
    /// The host user id.
    pub uid: u32,
    /// The host group id.
    pub gid: u32,
}

impl FileOwner {
    /// Runs `create` with this thread's filesystem user and group set to this owner, then
    /// restores them. Only the calling thread is affected (`setfsuid(2)` is per thread), and
    /// it keeps its other privileges, such as reaching `/proc/PID/root`.
    pub fn create_as<T>(self, create: impl FnOnce() -> T) -> T {
        // SAFETY: setfsgid/setfsuid take plain ids and return the previous ones; they change
        // only this thread's credentials, which the guard restores even if `create` panics.
        let previous = unsafe {
            let gid = libc::setfsgid(self.gid) as u32;
            let uid = libc::setfsuid(self.uid) as u32;
            (uid, gid)
        };
        struct Restore((u32, u32));
        impl Drop for Restore {
            fn drop(&mut self) {
                // SAFETY: as above.
                unsafe {
                    libc::setfsuid(self.0.0);
                    libc::setfsgid(self.0.1);
                }
            }
        }
        let _restore = Restore(previous);
        create()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn files_are_created_as_the_owner_and_the_thread_is_restored() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let owner = FileOwner {
            uid: 4242,
            gid: 4343,
        };
        owner
            .create_as(|| std::fs::write(dir.path().join("owned"), "x"))
            .unwrap();
        std::fs::write(dir.path().join("mine"), "x").unwrap();
        let owned = std::fs::metadata(dir.path().join("owned")).unwrap();
        assert_eq!((owned.uid(), owned.gid()), (4242, 4343));
        let mine = std::fs::metadata(dir.path().join("mine")).unwrap();
        assert_eq!((mine.uid(), mine.gid()), (0, 0));
    }
}
