//! The sandbox's init: the process that owns a sandbox's namespaces and starts its commands.
//!
//! The host re-executes its own binary with [`INIT_ENV`] set (see [`crate::sandbox`]); a
//! constructor that runs before `main` notices and calls [`run`] instead. The init then:
//!
//! 1. joins the sandbox's cgroups and unshares user (when not root), mount, PID, IPC, UTS
//!    and (unless network is allowed) network namespaces;
//! 2. forks the process that is PID 1 of the new PID namespace, which builds the root
//!    filesystem ([`rootfs`]) and serves the host's requests ([`serve`]).
//!
//! When the host closes the control socket or dies, PID 1 exits and the kernel kills
//! every process left in the sandbox.

mod rootfs;
mod serve;

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use nix::sched::{CloneFlags, unshare};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, Uid, fork};
use serde::{Deserialize, Serialize};

use crate::protocol::{self, Reply};

/// Environment variable that turns a process into a sandbox init; its value is the JSON [`InitSpec`].
pub(crate) const INIT_ENV: &str = "__SWERVE_SANDBOX_INIT";

/// Everything the init needs to build the sandbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct InitSpec {
    /// The layers to mount, each at its absolute path inside the sandbox: the repository
    /// (e.g. at `/testbed`) first, then any extra layers (e.g. an environment).
    pub layers: Vec<(PathBuf, LayerSpec)>,
    /// Keep the host's network namespace.
    pub network: bool,
    /// An empty host directory used as the mount point of the new root.
    pub root_mount_dir: PathBuf,
    /// Size of `/tmp`, in bytes.
    pub tmp_bytes: u64,
    /// Host paths to cover with empty read-only directories.
    pub hide_paths: Vec<PathBuf>,
    /// `cgroup.procs` files to join before anything else.
    pub cgroup_procs: Vec<PathBuf>,
    /// The host user and group the sandbox's root maps to (user namespaces only).
    pub host_uid: u32,
    pub host_gid: u32,
}

/// How a directory at a mount point is made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum LayerSpec {
    /// An overlay: read-only lower directories (topmost first) below, the rollout's writable
    /// layer above.
    Overlay {
        lowers: Vec<PathBuf>,
        upper: PathBuf,
        work: PathBuf,
    },
    /// A writable bind mount (a private copy, or an environment being built).
    Bind { source: PathBuf },
    /// A read-only bind mount.
    ReadOnly { source: PathBuf },
}

/// Runs the init; never returns.
pub(crate) fn run(spec_json: &str) -> ! {
    let control = match take_control_socket() {
        Ok(control) => control,
        Err(error) => {
            eprintln!("swerve sandbox: cannot take the control socket: {error}");
            std::process::exit(1)
        }
    };
    let spec: InitSpec = match serde_json::from_str(spec_json) {
        Ok(spec) => spec,
        Err(error) => fail(&control, format!("bad sandbox spec: {error}")),
    };
    if let Err(message) = enter_namespaces(&spec) {
        fail(&control, message);
    }
    // SAFETY: this process is single-threaded (a fresh exec that started no threads).
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            if let Err(message) = serve::become_pid1(&spec, &control) {
                fail(&control, message);
            }
            unreachable!("serve returns only by exiting")
        }
        Ok(ForkResult::Parent { child }) => wait_for_pid1(child),
        Err(error) => fail(
            &control,
            format!("fork of the sandbox's PID 1 failed: {error}"),
        ),
    }
}

/// Closes every descriptor the init inherited beyond standard input, output and error (the
/// host's process may hold descriptors its own parent leaked to it; none may reach the
/// sandbox), moves the control socket, which the host passes as standard input, to a
/// descriptor that commands do not inherit (close-on-exec), and puts `/dev/null` on standard
/// input.
fn take_control_socket() -> nix::Result<UnixStream> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
    // SAFETY: nothing in this fresh process owns a descriptor above 2 yet.
    if unsafe { libc::close_range(3, libc::c_uint::MAX, 0) } != 0 {
        return Err(nix::errno::Errno::last());
    }
    let control = fcntl(std::io::stdin(), FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: fcntl returned a new descriptor that nothing else owns.
    let control = unsafe { OwnedFd::from_raw_fd(control) };
    let null = open(
        "/dev/null",
        OFlag::O_RDWR | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    nix::unistd::dup2_stdin(null)?;
    Ok(UnixStream::from(control))
}

/// Waits for PID 1 of the sandbox and exits with its status.
fn wait_for_pid1(child: Pid) -> ! {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => std::process::exit(code),
            Ok(WaitStatus::Signaled(..)) => std::process::exit(137),
            Err(nix::errno::Errno::EINTR) | Ok(_) => continue,
            Err(_) => std::process::exit(1),
        }
    }
}

/// Reports a setup failure to the host and exits.
pub(crate) fn fail(control: &UnixStream, message: String) -> ! {
    let _ = protocol::send(control, &Reply::SetupFailed { message }, &[]);
    std::process::exit(1)
}

fn enter_namespaces(spec: &InitSpec) -> Result<(), String> {
    let pid = std::process::id().to_string();
    for procs in &spec.cgroup_procs {
        std::fs::write(procs, &pid)
            .map_err(|error| format!("cannot join cgroup {}: {error}", procs.display()))?;
    }
    let mut flags = CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS;
    if !spec.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    if !Uid::effective().is_root() {
        unshare(CloneFlags::CLONE_NEWUSER)
            .map_err(|error| format!("cannot create a user namespace: {error}"))?;
        map_root(spec.host_uid, spec.host_gid)?;
    }
    unshare(flags).map_err(|error| format!("cannot create namespaces ({flags:?}): {error}"))
}

/// Maps root inside a fresh user namespace to the host user.
fn map_root(uid: u32, gid: u32) -> Result<(), String> {
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|error| format!("cannot write {file}: {error}"))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("0 {uid} 1"))?;
    write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    Ok(())
}
