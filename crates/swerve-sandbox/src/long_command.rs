//! Commands too long for one program argument reach the shell through an in-memory file.
//!
//! Linux caps a single argument at 128 KiB (`MAX_ARG_STRLEN`), so `sh -c COMMAND` fails with
//! `E2BIG` for a command carrying, say, a large patch in a heredoc. Above
//! [`LONG_COMMAND_BYTES`] the command is written to a memfd and run as `sh /proc/self/fd/N`.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Commands longer than this are passed as a file.
pub(crate) const LONG_COMMAND_BYTES: usize = 64 * 1024;

/// A memfd holding `command`. With `inheritable` it stays open across `exec`.
///
/// `memfd_create` is called as a raw system call (Linux 3.17): glibc's wrapper is 2.27's, and
/// the release binary needs no glibc newer than 2.17 (docs/install.md).
pub(crate) fn script_file(command: &str, inheritable: bool) -> std::io::Result<OwnedFd> {
    let flags = if inheritable { 0 } else { libc::MFD_CLOEXEC };
    let name = c"swerve-command";
    // SAFETY: a NUL-terminated name and flags; the kernel returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_memfd_create, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and nothing else owns it.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd as i32) });
    file.write_all(command.as_bytes())?;
    Ok(OwnedFd::from(file))
}

/// The path a process that inherited `fd` uses to read it.
pub(crate) fn script_path(fd: &OwnedFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}
