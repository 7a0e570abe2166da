//! PID 1 of a sandbox: sets up the filesystem, then starts and kills commands on request.
//!
//! Each command gets a "reaper": a child subreaper (`PR_SET_CHILD_SUBREAPER`) that spawns
//! `/bin/sh -c COMMAND`, reports the shell's wait status on the status pipe when the shell
//! exits, and keeps reaping until no process it started is left. Orphaned descendants are
//! re-parented to the reaper rather than to PID 1, so every process a command started stays
//! in the reaper's subtree, even after `setsid` or a double fork; killing a command kills that
//! subtree until it is empty. Background processes outlive their command but not the
//! sandbox. Commands share the sandbox's PID namespace, so `ps`, `kill` and `/proc/$$` behave
//! as in a container.

use std::collections::HashMap;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork};

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
    }
    let _ = nix::unistd::sethostname("swerve-sandbox");
    rootfs::build_and_pivot(spec, &sources)?;
    drop(sources);
    harden::harden()?;
    protocol::send(control, &Reply::Ready, &[])
        .map_err(|error| format!("cannot reach the host: {error}"))?;
    serve(control)
}

/// Answers requests until the control socket closes, then exits (killing the sandbox).
fn serve(control: &UnixStream) -> ! {
    let mut running: HashMap<u64, Pid> = HashMap::new();
    let mut spare = Spare::fork(control);
    loop {
        let readable = {
            let mut fds = [PollFd::new(control.as_fd(), PollFlags::POLLIN)];
            matches!(poll(&mut fds, PollTimeout::from(200u16)), Ok(n) if n > 0)
        };
        reap(&mut running);
        if !readable {
            continue;
        }
        match protocol::receive::<Request>(control) {
            Ok(Some((Request::Run(request), fds))) => {
                let reply = start(&request, fds, &mut running, spare.take());
                let _ = protocol::send(control, &reply, &[]);
                // Let the reaper just woken run first: forking the next spare can wait.
                let _ = nix::sched::sched_yield();
                spare = Spare::fork(control);
            }
            Ok(Some((Request::Kill { id }, _))) => {
                if let Some(pid) = running.get(&id) {
                    kill_tree(*pid);
                }
            }
            Ok(Some((Request::KillAll, _))) => {
                for pid in running.values() {
                    kill_tree(*pid);
                }
            }
            Ok(Some((Request::IdsMapped, _))) => {}
            Ok(None) | Err(_) => std::process::exit(0),
        }
    }
}

/// Collects exited children (reapers and orphans re-parented to PID 1).
fn reap(running: &mut HashMap<u64, Pid>) {
    while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
        match status.pid() {
            Some(pid) => running.retain(|_, running_pid| *running_pid != pid),
            None => break,
        }
    }
}

/// Kills every descendant of `reaper`, repeating until none is left, then the reaper itself.
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

/// All processes below `root` in the process tree, read from `/proc/*/stat`.
fn descendants_of(root: Pid) -> Vec<Pid> {
    let mut parents: Vec<(i32, i32)> = Vec::new();
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

/// A reaper forked ahead of its command, waiting for it on a socket: forking PID 1 (copying
/// its page tables, then faulting in what the child touches) costs more than the shell's own
/// start, so it happens between commands rather than on each command's critical path.
struct Spare {
    pid: Pid,
    channel: UnixStream,
}

impl Spare {
    /// Forks a spare reaper; `None` if that fails (the next command forks its own).
    fn fork(control: &UnixStream) -> Option<Self> {
        let (parent_end, child_end) = UnixStream::pair().ok()?;
        // SAFETY: PID 1 is single-threaded.
        match unsafe { fork() } {
            Ok(ForkResult::Child) => {
                drop(parent_end);
                // SAFETY: the control socket belongs to PID 1; this process never uses it.
                unsafe { libc::close(control.as_raw_fd()) };
                become_reaper();
                warm_up();
                match protocol::receive::<RunRequest>(&child_end) {
                    Ok(Some((request, fds))) => match (Prepared::new(&request), take_pipes(fds)) {
                        (Ok(program), Ok([stdout, stderr, status])) => {
                            run_command(&program, stdout, stderr, status)
                        }
                        _ => std::process::exit(1),
                    },
                    _ => std::process::exit(0),
                }
            }
            Ok(ForkResult::Parent { child }) => Some(Self {
                pid: child,
                channel: parent_end,
            }),
            Err(_) => None,
        }
    }
}

/// Touches, ahead of the command, the memory a reaper uses to start one (a fork's pages are
/// copied on first write), by preparing a command like the ones it will get.
fn warm_up() {
    let request = RunRequest {
        id: 0,
        command: "true".repeat(64),
        env: (0..16)
            .map(|index| (format!("VARIABLE_{index}"), "value".repeat(16)))
            .collect(),
        workdir: "/testbed".into(),
        file_size_limit: None,
        max_processes: None,
        address_space_limit: None,
    };
    if let Ok(json) = serde_json::to_vec(&request)
        && let Ok(request) = serde_json::from_slice::<RunRequest>(&json)
    {
        drop(Prepared::new(&request));
    }
}

/// The three pipe ends a run request carries: stdout, stderr and status.
fn take_pipes(fds: Vec<OwnedFd>) -> Result<[OwnedFd; 3], String> {
    fds.try_into()
        .map_err(|_| "a run request must carry exactly three descriptors".to_owned())
}

/// Starts one command: hands it to the spare reaper, or forks a reaper when there is none.
fn start(
    request: &RunRequest,
    fds: Vec<OwnedFd>,
    running: &mut HashMap<u64, Pid>,
    spare: Option<Spare>,
) -> Reply {
    let [stdout, stderr, status] = match take_pipes(fds) {
        Ok(fds) => fds,
        Err(message) => return Reply::Error { message },
    };
    let program = match Prepared::new(request) {
        Ok(program) => program,
        Err(message) => return Reply::Error { message },
    };
    if let Some(spare) = spare {
        let fds = protocol::raw_fds(&[stdout.as_fd(), stderr.as_fd(), status.as_fd()]);
        if protocol::send(&spare.channel, request, &fds).is_ok() {
            running.insert(request.id, spare.pid);
            return Reply::Started { id: request.id };
        }
        let _ = kill(spare.pid, Signal::SIGKILL);
    }
    // SAFETY: PID 1 is single-threaded.
    match unsafe { fork() } {
        Err(error) => Reply::Error {
            message: format!("cannot start command: {error}"),
        },
        Ok(ForkResult::Child) => {
            become_reaper();
            run_command(&program, stdout, stderr, status)
        }
        Ok(ForkResult::Parent { child }) => {
            running.insert(request.id, child);
            Reply::Started { id: request.id }
        }
    }
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

/// Makes this process a command's subreaper: orphans of the command are re-parented to it.
fn become_reaper() {
    let _ = prctl::set_child_subreaper(true);
    let _ = prctl::set_name(c"swerve-reaper");
}

/// One command's subreaper: runs the shell, reports its status, reaps until alone, exits.
fn run_command(program: &Prepared, stdout: OwnedFd, stderr: OwnedFd, status: OwnedFd) -> ! {
    // The limits are the reaper's own, inherited by the shell: the reaper forks nothing else
    // and writes four bytes.
    if let Some(bytes) = program.file_size_limit {
        let _ = setrlimit(Resource::RLIMIT_FSIZE, bytes, bytes);
    }
    if let Some(count) = program.max_processes {
        let _ = setrlimit(Resource::RLIMIT_NPROC, count, count);
    }
    if let Some(bytes) = program.address_space_limit {
        let _ = setrlimit(Resource::RLIMIT_AS, bytes, bytes);
    }
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    let shell = match spawn_shell(program, &stdout, &stderr) {
        Ok(shell) => shell,
        Err(message) => {
            let _ = std::fs::File::from(stderr)
                .write_all(format!("swerve sandbox: {message}\n").as_bytes());
            let _ = std::fs::File::from(status).write_all(&(127i32 << 8).to_le_bytes());
            std::process::exit(0);
        }
    };
    drop(stdout);
    drop(stderr);
    let mut status = std::fs::File::from(status);
    loop {
        match waitpid(None, None) {
            Ok(ended) if ended.pid() == Some(shell) => {
                let raw = match ended {
                    WaitStatus::Exited(_, code) => code << 8,
                    WaitStatus::Signaled(_, signal, _) => signal as i32,
                    _ => continue,
                };
                let _ = status.write_all(&raw.to_le_bytes());
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => std::process::exit(0),
        }
    }
}

/// Starts `/bin/sh -c COMMAND` in a new session, in the working directory, with standard
/// input on `/dev/null` and output on the command's pipes. `posix_spawn` (a `vfork`, not a
/// copy of this process's memory) keeps the start of every command cheap.
fn spawn_shell(program: &Prepared, stdout: &OwnedFd, stderr: &OwnedFd) -> Result<Pid, String> {
    use std::os::fd::AsRawFd;
    let null = std::fs::File::open("/dev/null")
        .map_err(|error| format!("cannot open /dev/null: {error}"))?;
    let mut argv: Vec<*mut libc::c_char> = program
        .argv
        .iter()
        .map(|arg| arg.as_ptr().cast_mut())
        .collect();
    argv.push(std::ptr::null_mut());
    let mut envp: Vec<*mut libc::c_char> = program
        .envp
        .iter()
        .map(|var| var.as_ptr().cast_mut())
        .collect();
    envp.push(std::ptr::null_mut());
    // SAFETY: the action and attribute objects are initialised before use and destroyed
    // after; every pointer passed (argv, envp, the working directory) lives in `program`, and
    // the argument and environment arrays are NULL-terminated.
    unsafe {
        let mut actions: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attributes: libc::posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut actions);
        libc::posix_spawnattr_init(&mut attributes);
        libc::posix_spawn_file_actions_adddup2(&mut actions, null.as_raw_fd(), 0);
        libc::posix_spawn_file_actions_adddup2(&mut actions, stdout.as_raw_fd(), 1);
        libc::posix_spawn_file_actions_adddup2(&mut actions, stderr.as_raw_fd(), 2);
        libc::posix_spawn_file_actions_addchdir_np(&mut actions, program.workdir.as_ptr());
        libc::posix_spawnattr_setflags(&mut attributes, libc::POSIX_SPAWN_SETSID);
        let mut pid: libc::pid_t = 0;
        let result = libc::posix_spawn(
            &mut pid,
            argv[0],
            &actions,
            &attributes,
            argv.as_ptr(),
            envp.as_ptr(),
        );
        libc::posix_spawn_file_actions_destroy(&mut actions);
        libc::posix_spawnattr_destroy(&mut attributes);
        match result {
            0 => Ok(Pid::from_raw(pid)),
            libc::ENOENT | libc::ENOTDIR => Err(format!(
                "cannot enter working directory {} or run /bin/sh: {}",
                program.workdir.to_string_lossy(),
                nix::errno::Errno::from_raw(result)
            )),
            error => Err(format!(
                "cannot run /bin/sh: {}",
                nix::errno::Errno::from_raw(error)
            )),
        }
    }
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
