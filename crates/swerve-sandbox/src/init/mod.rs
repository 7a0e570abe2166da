//! The sandbox's init: the process that owns a sandbox's namespaces and starts its commands.
//!
//! The host re-executes its own binary with [`INIT_ENV`] set (see [`crate::sandbox`]); a
//! constructor that runs before `main` notices and calls [`run`] instead. The init then:
//!
//! 1. joins the sandbox's cgroups, drops host root's supplementary groups and unshares a
//!    user namespace, whose id maps the host writes ([`crate::identity`]) while the init
//!    waits on the control socket; then becomes the namespace's root;
//! 2. unshares mount, PID, IPC, UTS, cgroup and (unless network is allowed) network
//!    namespaces, all owned by that user namespace;
//! 3. forks the process that is PID 1 of the new PID namespace, which builds the root
//!    filesystem ([`rootfs`]), gives up what commands must not have ([`harden`]) and serves
//!    the host's requests ([`serve`]).
//!
//! When the host closes the control socket or dies, PID 1 exits and the kernel kills
//! every process left in the sandbox.

mod harden;
mod rootfs;
mod serve;

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use nix::sched::{CloneFlags, unshare};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Pid, Uid, fork};
use serde::{Deserialize, Serialize};

use crate::protocol::{self, Reply, Request};

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
    /// Entries appended to the sandbox's `/etc/hosts` (`SandboxConfig::hosts`).
    #[serde(default)]
    pub hosts: Vec<(String, std::net::IpAddr)>,
    /// Route IPv4 off the sandbox into `lo`, where it is dropped (`SandboxConfig::drop_outbound`).
    #[serde(default)]
    pub drop_outbound: bool,
    /// Size of `/tmp`, in bytes.
    pub tmp_bytes: u64,
    /// Host paths to cover with empty read-only directories.
    pub hide_paths: Vec<PathBuf>,
    /// `cgroup.procs` files to join before anything else.
    pub cgroup_procs: Vec<PathBuf>,
    /// The sandbox's `HOME`: (host directory, path inside), mounted writable.
    pub home: (PathBuf, PathBuf),
    /// Host paths shown at the same path inside, each with whether it is writable.
    pub exposures: Vec<(PathBuf, bool)>,
    /// Files inside exposures covered by an empty file (credentials).
    pub masked_files: Vec<PathBuf>,
    /// An image's root: the sandbox's `/` is this overlay (the image's layers below, the
    /// workspace's writable layer above) instead of the host's system directories and
    /// curated `/etc`; the repository is where the image has it, and `HOME` is the image's.
    #[serde(default)]
    pub image_root: Option<LayerSpec>,
    /// The CPUs the sandbox runs on (its affinity) and shows as online.
    pub cpus: Vec<usize>,
    /// A base root (`sandbox.userland = "base"`): its `/usr`, `/bin`, `/sbin`, `/lib*` and
    /// `/etc` instead of the host's system directories and curated `/etc`. Ignored with an
    /// image.
    #[serde(default)]
    pub system_root: Option<PathBuf>,
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
            // This process is the sandbox's init, started before the host's `main` and with
            // no way back to the host yet: its inherited stderr is the only place the reason
            // can go (the host then reports the init as dead).
            #[allow(clippy::print_stderr)]
            {
                eprintln!("swerve sandbox: cannot take the control socket: {error}");
            }
            std::process::exit(1)
        }
    };
    let spec: InitSpec = match serde_json::from_str(spec_json) {
        Ok(spec) => spec,
        Err(error) => fail(&control, format!("bad sandbox spec: {error}")),
    };
    let sources = match enter_namespaces(&spec, &control) {
        Ok(sources) => sources,
        Err(message) => fail(&control, message),
    };
    // SAFETY: this process is single-threaded (a fresh exec that started no threads).
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            if let Err(message) = serve::become_pid1(&spec, sources, &control) {
                fail(&control, message);
            }
            unreachable!("serve returns only by exiting")
        }
        Ok(ForkResult::Parent { child }) => {
            // This process stays outside the sandbox's PID namespace (no command can name
            // it) and is the one whose `/proc/PID/root` and namespace files the host uses:
            // it keeps nothing of the sandbox's but its namespaces, not the channel to the
            // host nor the host paths PID 1 mounts from.
            drop(sources);
            drop(control);
            wait_for_pid1(child)
        }
        Err(error) => fail(
            &control,
            format!("fork of the sandbox's PID 1 failed: {error}"),
        ),
    }
}

/// The host paths the init mounts from, each opened as an `O_PATH` descriptor while the init
/// still has the host's user id, and reached afterwards through `/proc/self/fd/N`. Dropped once the root filesystem is built, so no command can reach them.
pub(crate) struct HostSources {
    opened: Vec<(PathBuf, OwnedFd)>,
}

impl HostSources {
    fn open(spec: &InitSpec) -> Result<Self, String> {
        let mut paths: Vec<&std::path::Path> = vec![&spec.home.0];
        for layer in spec
            .layers
            .iter()
            .map(|(_, layer)| layer)
            .chain(spec.image_root.as_ref())
        {
            match layer {
                LayerSpec::Overlay {
                    lowers,
                    upper,
                    work,
                } => paths.extend(lowers.iter().chain([upper, work]).map(PathBuf::as_path)),
                LayerSpec::Bind { source } | LayerSpec::ReadOnly { source } => paths.push(source),
            }
        }
        paths.extend(spec.exposures.iter().map(|(path, _)| path.as_path()));
        paths.extend(spec.system_root.as_deref());
        let mut opened = Vec::with_capacity(paths.len());
        for path in paths {
            let fd = nix::fcntl::open(
                path,
                nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            )
            .map_err(|error| format!("cannot open {}: {error}", path.display()))?;
            opened.push((path.to_path_buf(), fd));
        }
        Ok(Self { opened })
    }

    /// The path through which the init reaches the host path `path` (which must be one it
    /// opened).
    pub(crate) fn get(&self, path: &std::path::Path) -> PathBuf {
        use std::os::fd::AsRawFd;
        self.opened
            .iter()
            .find(|(opened, _)| opened == path)
            .map(|(_, fd)| PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())))
            .unwrap_or_else(|| path.to_path_buf())
    }
}

/// Closes every descriptor the init inherited beyond standard input, output and error (the
/// host's process may hold descriptors its own parent leaked to it; none may reach the
/// sandbox), moves the control socket, which the host passes as standard input, to a
/// descriptor that commands do not inherit (close-on-exec), and puts `/dev/null` on standard
/// input.
fn take_control_socket() -> nix::Result<UnixStream> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
    close_inherited_descriptors()?;
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

/// Closes every descriptor above standard error. `close_range(2)` where the kernel has it
/// (Linux 5.9), called as a raw system call so that the binary needs no glibc newer than 2.17
/// (glibc's wrapper is 2.34's); below 5.9, every descriptor `/proc/self/fd` lists.
fn close_inherited_descriptors() -> nix::Result<()> {
    // SAFETY: nothing in this fresh process owns a descriptor above 2 yet; the call takes no
    // pointers.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, 3, libc::c_uint::MAX, 0) };
    if closed == 0 {
        return Ok(());
    }
    match nix::errno::Errno::last() {
        nix::errno::Errno::ENOSYS => {}
        other => return Err(other),
    }
    // Listed first, closed after: the listing's own descriptor is among those listed.
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|error| nix::errno::Errno::from_raw(error.raw_os_error().unwrap_or(libc::EIO)))?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    for fd in listed {
        // SAFETY: as above; a descriptor already closed (the listing's) gives EBADF, ignored.
        unsafe { libc::close(fd) };
    }
    Ok(())
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

/// A closure turning an error into a message that says what was being done.
pub(crate) fn fail_text<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> String + '_ {
    move |error| format!("{what}: {error}")
}

/// Enters the sandbox's namespaces and returns the host paths it mounts, opened in its new
/// mount namespace while this process still has the host's user id: the sandbox's root
/// may not be able to search the directories that lead to them (a cache under a `0700`
/// home, say).
fn enter_namespaces(spec: &InitSpec, control: &UnixStream) -> Result<HostSources, String> {
    let pid = std::process::id().to_string();
    for procs in &spec.cgroup_procs {
        std::fs::write(procs, &pid)
            .map_err(|error| format!("cannot join cgroup {}: {error}", procs.display()))?;
    }
    if Uid::effective().is_root() {
        // Host root's supplementary groups would still open group-readable host files.
        nix::unistd::setgroups(&[]).map_err(fail_text("dropping supplementary groups"))?;
    }
    unshare(CloneFlags::CLONE_NEWUSER).map_err(fail_text("cannot create a user namespace"))?;
    protocol::send(control, &Reply::AwaitingIdMap, &[])
        .map_err(fail_text("cannot reach the host"))?;
    match protocol::receive::<Request>(control) {
        Ok(Some((Request::IdsMapped, _))) => {}
        other => return Err(format!("the host did not map the sandbox's ids: {other:?}")),
    }
    let mut flags = CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC
        | CloneFlags::CLONE_NEWUTS
        | CloneFlags::CLONE_NEWCGROUP;
    if !spec.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|error| format!("cannot create namespaces ({flags:?}): {error}"))?;
    let sources = HostSources::open(spec)?;
    let root = Gid::from_raw(0);
    nix::unistd::setresgid(root, root, root)
        .map_err(fail_text("becoming the user namespace's root group"))?;
    let root = Uid::from_raw(0);
    nix::unistd::setresuid(root, root, root)
        .map_err(fail_text("becoming the user namespace's root"))?;
    Ok(sources)
}
