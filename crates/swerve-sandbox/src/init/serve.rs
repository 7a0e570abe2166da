//! PID 1 of a sandbox: sets up the filesystem, then starts and kills commands on request.
//!
//! Each command is `/bin/sh -c COMMAND`, started by PID 1 with a `vfork`-style clone (no copy
//! of PID 1's memory) in a new session, as a child subreaper (`PR_SET_CHILD_SUBREAPER`, which
//! survives `execve`): while the shell runs, every orphan among its descendants is
//! re-parented to it rather than to PID 1, so every process the command started stays in the
//! shell's subtree, even after `setsid` or a double fork, and killing the command (a timeout)
//! kills that subtree until it is empty. PID 1 watches each shell through a pidfd, reaps it
//! and writes its wait status on the command's status pipe. Processes a command left in the
//! background outlive it (re-parented to PID 1 once its shell exits) but not the sandbox;
//! stopping everything (the disk quota) kills every process but PID 1. Commands share the
//! sandbox's PID namespace, so `ps`, `kill` and `/proc/$$` behave as in a container.

use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::{HostSources, InitSpec};
use super::{harden, rootfs};
use crate::long_command::{LONG_COMMAND_BYTES, script_file, script_path};
use crate::protocol::{self, Reply, Request, RunRequest};

/// Sets up the sandbox as PID 1 and serves until the host goes away; never returns on success.
pub(crate) fn become_pid1(
    spec: &InitSpec,
    sources: HostSources,
    control: &UnixStream,
) -> Result<(), String> {
    prctl::set_pdeathsig(Signal::SIGKILL).map_err(|error| format!("prctl failed: {error}"))?;
    let _ = prctl::set_name(c"swerve-init");
    if !spec.network {
        bring_loopback_up()?;
        if spec.drop_outbound {
            route_outbound_into_loopback()?;
        }
    }
    let _ = nix::unistd::sethostname("swerve-sandbox");
    crate::cpus::pin(&spec.cpus)?;
    rootfs::build_and_pivot(spec, &sources)?;
    drop(sources);
    harden::harden()?;
    protocol::send(control, &Reply::Ready, &[])
        .map_err(|error| format!("cannot reach the host: {error}"))?;
    serve(control)
}

/// A command whose shell is running.
struct Running {
    /// The shell's process id.
    pid: Pid,
    /// Becomes readable when the shell exits.
    pidfd: OwnedFd,
    /// Where its wait status goes.
    status: std::fs::File,
}

/// Answers requests until the control socket closes, then exits (killing the sandbox).
fn serve(control: &UnixStream) -> ! {
    let mut running: HashMap<u64, Running> = HashMap::new();
    loop {
        let readable = {
            let mut fds: Vec<PollFd> = std::iter::once(control.as_fd())
                .chain(running.values().map(|command| command.pidfd.as_fd()))
                .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
                .collect();
            matches!(poll(&mut fds, PollTimeout::from(200u16)), Ok(n) if n > 0)
                && fds[0].any().unwrap_or(false)
        };
        reap(&mut running);
        if !readable {
            continue;
        }
        match protocol::receive::<Request>(control) {
            Ok(Some((Request::Run(request), fds))) => {
                let reply = start(&request, fds, &mut running);
                let _ = protocol::send(control, &reply, &[]);
            }
            Ok(Some((Request::Kill { id }, _))) => {
                if let Some(command) = running.get(&id) {
                    kill_tree(command.pid);
                }
            }
            Ok(Some((Request::KillAll, _))) => kill_all(),
            Ok(Some((Request::IdsMapped, _))) => {}
            Ok(None) | Err(_) => std::process::exit(0),
        }
    }
}

/// Collects exited children: shells (whose status goes to their command's status pipe) and
/// orphans re-parented to PID 1.
fn reap(running: &mut HashMap<u64, Running>) {
    while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        let Some(pid) = status.pid() else {
            break;
        };
        let raw = match status {
            WaitStatus::Exited(_, code) => code << 8,
            WaitStatus::Signaled(_, signal, _) => signal as i32,
            _ => continue,
        };
        if let Some(id) = running
            .iter()
            .find_map(|(id, command)| (command.pid == pid).then_some(*id))
            && let Some(mut command) = running.remove(&id)
        {
            let _ = command.status.write_all(&raw.to_le_bytes());
        }
    }
}

/// Kills every process of the sandbox but PID 1, repeating until none is left.
fn kill_all() {
    let me = nix::unistd::getpid();
    for _ in 0..1000 {
        let others: Vec<Pid> = processes()
            .into_iter()
            .map(|(pid, _)| Pid::from_raw(pid))
            .filter(|pid| *pid != me)
            .collect();
        if others.is_empty() {
            break;
        }
        for pid in others {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
}

/// Kills every descendant of `reaper` (a command's shell), repeating until none is left, then
/// the reaper itself.
///
/// Descendants whose parent dies are re-parented to the reaper (a subreaper), so each pass
/// finds what the previous one orphaned; a fork bomb converges because killed processes
/// cannot fork and the cgroup caps how many exist.
fn kill_tree(reaper: Pid) {
    for _ in 0..1000 {
        let descendants = descendants_of(reaper);
        if descendants.is_empty() {
            break;
        }
        for pid in descendants {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
    let _ = kill(reaper, Signal::SIGKILL);
}

/// Every process of the sandbox with its parent, read from `/proc/*/stat`.
fn processes() -> Vec<(i32, i32)> {
    let mut parents = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // The command name (field 2) is in parentheses and may hold spaces: parse after it.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|field| field.parse::<i32>().ok());
            if let Some(ppid) = ppid {
                parents.push((pid, ppid));
            }
        }
    }
    parents
}

/// All processes below `root` in the process tree.
fn descendants_of(root: Pid) -> Vec<Pid> {
    let parents = processes();
    let mut found = vec![root.as_raw()];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    found.into_iter().skip(1).map(Pid::from_raw).collect()
}

/// The three pipe ends a run request carries: stdout, stderr and status.
fn take_pipes(fds: Vec<OwnedFd>) -> Result<[OwnedFd; 3], String> {
    fds.try_into()
        .map_err(|_| "a run request must carry exactly three descriptors".to_owned())
}

/// Starts one command's shell and watches it.
fn start(request: &RunRequest, fds: Vec<OwnedFd>, running: &mut HashMap<u64, Running>) -> Reply {
    let [stdout, stderr, status] = match take_pipes(fds) {
        Ok(fds) => fds,
        Err(message) => return Reply::Error { message },
    };
    let program = match Prepared::new(request) {
        Ok(program) => program,
        Err(message) => return Reply::Error { message },
    };
    let pid = match spawn_shell(&program, &stdout, &stderr) {
        Ok(pid) => pid,
        Err(message) => return Reply::Error { message },
    };
    // SAFETY: pidfd_open takes a process id and flags; the shell is our unreaped child.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if pidfd < 0 {
        let error = nix::errno::Errno::last();
        kill_tree(pid);
        return Reply::Error {
            message: format!("cannot watch the command: {error}"),
        };
    }
    // SAFETY: pidfd_open returned a new descriptor that nothing else owns.
    let pidfd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(pidfd as i32) };
    running.insert(
        request.id,
        Running {
            pid,
            pidfd,
            status: std::fs::File::from(status),
        },
    );
    Reply::Started { id: request.id }
}

/// A command made ready for `execve` before forking.
struct Prepared {
    argv: Vec<CString>,
    /// Holds a long command's text for the shell to read (see [`crate::long_command`]).
    _script: Option<OwnedFd>,
    envp: Vec<CString>,
    workdir: CString,
    file_size_limit: Option<u64>,
    max_processes: Option<u64>,
    address_space_limit: Option<u64>,
}

impl Prepared {
    fn new(request: &RunRequest) -> Result<Self, String> {
        let cstring = |text: &[u8], what: &str| {
            CString::new(text).map_err(|_| format!("the {what} contains a NUL byte"))
        };
        let (argv, script) = if request.command.len() > LONG_COMMAND_BYTES {
            let script = script_file(&request.command, true)
                .map_err(|error| format!("cannot hold the command in memory: {error}"))?;
            let argv = vec![
                cstring(b"/bin/sh", "shell")?,
                cstring(script_path(&script).as_bytes(), "shell")?,
            ];
            (argv, Some(script))
        } else {
            let argv = vec![
                cstring(b"/bin/sh", "shell")?,
                cstring(b"-c", "shell")?,
                cstring(request.command.as_bytes(), "command")?,
            ];
            (argv, None)
        };
        let envp = request
            .env
            .iter()
            .map(|(name, value)| cstring(format!("{name}={value}").as_bytes(), "environment"))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            argv,
            _script: script,
            envp,
            workdir: cstring(request.workdir.as_os_str().as_bytes(), "working directory")?,
            file_size_limit: request.file_size_limit,
            max_processes: request.max_processes,
            address_space_limit: request.address_space_limit,
        })
    }
}

/// What the cloned child needs, all prepared before the clone: it shares PID 1's memory
/// until it calls `execve`, so it may only make system calls.
struct ChildArgs {
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    workdir: *const libc::c_char,
    null: libc::c_int,
    stdout: libc::c_int,
    stderr: libc::c_int,
    limits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    cannot_enter: Vec<u8>,
    cannot_run: &'static [u8],
}

/// The cloned child: becomes a subreaper in a new session, takes its standard streams and
/// limits, enters the working directory and executes the shell; exits 127 if it cannot.
extern "C" fn exec_shell(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the `ChildArgs` of `spawn_shell`, alive until this child calls
    // execve or exits (the parent is suspended until then); only system calls are made.
    unsafe {
        let args = &*(arg as *const ChildArgs);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::setsid();
        libc::dup2(args.null, 0);
        libc::dup2(args.stdout, 1);
        libc::dup2(args.stderr, 2);
        for (resource, limit) in &args.limits {
            libc::setrlimit(*resource, limit);
        }
        if libc::chdir(args.workdir) != 0 {
            libc::write(
                2,
                args.cannot_enter.as_ptr().cast(),
                args.cannot_enter.len(),
            );
            libc::_exit(127);
        }
        libc::execve(args.argv[0], args.argv.as_ptr(), args.envp.as_ptr());
        libc::write(2, args.cannot_run.as_ptr().cast(), args.cannot_run.len());
        libc::_exit(127)
    }
}

/// Starts `/bin/sh -c COMMAND` (see [`exec_shell`]) with a clone that shares PID 1's memory
/// and suspends PID 1 until the child executes (`CLONE_VM | CLONE_VFORK`, as `posix_spawn`
/// does): no copy of PID 1's page tables, so starting a command costs little more than the
/// shell's own start.
fn spawn_shell(program: &Prepared, stdout: &OwnedFd, stderr: &OwnedFd) -> Result<Pid, String> {
    use std::os::fd::AsRawFd;
    let null = std::fs::File::open("/dev/null")
        .map_err(|error| format!("cannot open /dev/null: {error}"))?;
    let mut limits = vec![(
        libc::RLIMIT_CORE,
        libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        },
    )];
    for (resource, value) in [
        (libc::RLIMIT_FSIZE, program.file_size_limit),
        (libc::RLIMIT_NPROC, program.max_processes),
        (libc::RLIMIT_AS, program.address_space_limit),
    ] {
        if let Some(value) = value {
            limits.push((
                resource,
                libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                },
            ));
        }
    }
    let args = ChildArgs {
        argv: program
            .argv
            .iter()
            .map(|arg| arg.as_ptr())
            .chain([std::ptr::null()])
            .collect(),
        envp: program
            .envp
            .iter()
            .map(|var| var.as_ptr())
            .chain([std::ptr::null()])
            .collect(),
        workdir: program.workdir.as_ptr(),
        null: null.as_raw_fd(),
        stdout: stdout.as_raw_fd(),
        stderr: stderr.as_raw_fd(),
        limits,
        cannot_enter: format!(
            "swerve sandbox: cannot enter working directory {}\n",
            program.workdir.to_string_lossy()
        )
        .into_bytes(),
        cannot_run: b"swerve sandbox: cannot run /bin/sh\n",
    };
    // The child's stack: it runs a handful of system calls before execve.
    let mut stack = vec![0u8; 64 * 1024];
    let top = (stack.as_mut_ptr() as usize + stack.len()) & !15;
    // SAFETY: `exec_shell` only makes system calls; `args` and `stack` outlive the child's use
    // of them because CLONE_VFORK suspends this process until the child executes or exits.
    let pid = unsafe {
        libc::clone(
            exec_shell,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &args as *const ChildArgs as *mut libc::c_void,
        )
    };
    if pid < 0 {
        return Err(format!(
            "cannot start command: {}",
            nix::errno::Errno::last()
        ));
    }
    Ok(Pid::from_raw(pid))
}

/// Sets the `lo` interface up in a fresh network namespace, so loopback servers inside work.
fn bring_loopback_up() -> Result<(), String> {
    let socket = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Inet,
        nix::sys::socket::SockType::Datagram,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|error| format!("cannot open a socket to configure lo: {error}"))?;
    // SAFETY: ifreq is plain data; zeroed is a valid starting value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: valid socket and ifreq for SIOCGIFFLAGS / SIOCSIFFLAGS.
    unsafe {
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) < 0 {
            return Err(format!(
                "cannot read lo flags: {}",
                nix::errno::Errno::last()
            ));
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request) < 0 {
            return Err(format!("cannot bring lo up: {}", nix::errno::Errno::last()));
        }
    }
    Ok(())
}

/// Adds an IPv4 default route through `lo` (`ip route add default dev lo`): a packet to an
/// address outside the sandbox leaves on `lo`, comes back in, is not for a local address and
/// is dropped (the namespace does not forward), so a connection to it times out as on a
/// network where nothing answers, instead of failing at once with `ENETUNREACH`.
fn route_outbound_into_loopback() -> Result<(), String> {
    let socket = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Inet,
        nix::sys::socket::SockType::Datagram,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|error| format!("cannot open a socket to add a route: {error}"))?;
    let any = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr { s_addr: 0 },
        sin_zero: [0; 8],
    };
    // SAFETY: rtentry is plain data; zeroed is a valid starting value, and sockaddr_in fits
    // in the sockaddr fields (both are 16 bytes).
    let mut route: libc::rtentry = unsafe { std::mem::zeroed() };
    unsafe {
        std::ptr::write(
            std::ptr::addr_of_mut!(route.rt_dst).cast::<libc::sockaddr_in>(),
            any,
        );
        std::ptr::write(
            std::ptr::addr_of_mut!(route.rt_genmask).cast::<libc::sockaddr_in>(),
            any,
        );
    }
    route.rt_flags = libc::RTF_UP;
    let mut device = *b"lo\0";
    route.rt_dev = device.as_mut_ptr().cast::<libc::c_char>();
    // SAFETY: valid socket and rtentry for SIOCADDRT; `device` outlives the call.
    if unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCADDRT, &route) } < 0 {
        return Err(format!(
            "cannot route outbound packets into lo: {}",
            nix::errno::Errno::last()
        ));
    }
    Ok(())
}
