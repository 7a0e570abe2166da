//! The system-call corpus: each system call Docker's default seccomp profile refuses (and
//! the few more swerve refuses), made with raw `syscall(2)` in a sandbox, one named test per
//! call.
//!
//! Every call of the table runs in one Python process in one sandbox (made once, on the first
//! case that needs it), so the whole table costs one sandbox; each case then checks its own
//! call's `errno`. The same table, with the same arguments, also runs on the host (outside any
//! sandbox): that is each case's positive control. The arguments are chosen so the host's
//! kernel answers with something other than the sandbox's verdict (and harmlessly: a path that
//! does not exist, a bad descriptor, a bad flag, a null pointer), so the sandbox's `EPERM` is
//! shown to be the filter's and not the arguments'. As root the control must differ for every
//! case but those marked `None`; unprivileged (`nobody`), the host's own capability checks
//! answer `EPERM` for the privileged calls, so only the cases marked `Any` are compared.
//!
//! The numbers are x86_64's (`libc::SYS_*`, or the number where the `libc` crate has no
//! name): on aarch64 this module is not built, and the first tests in `security.rs` cover
//! the calls both architectures share.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::common::{Fixture, isolated};

/// When the host's answer to the same call must differ from the sandbox's.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Control {
    /// In every mode: the call needs no privilege to fail differently (or to succeed).
    Any,
    /// When the tests run as root: unprivileged, the host's kernel refuses it with `EPERM`
    /// too (a capability check), which shows nothing.
    Root,
    /// Never run on the host: even with harmless arguments the call would touch the host
    /// (the calling terminal, a module load). The case still checks its specific `errno`.
    None,
}

/// One case: the call, its arguments (a Python tuple for [`super::syscall_script`];
/// `HOSTPID` stands for a host process's id), the `errno` the sandbox must answer.
struct Case {
    name: &'static str,
    number: i64,
    args: &'static str,
    errno: i32,
    control: Control,
}

macro_rules! corpus {
    ($(
        $test:ident: $name:literal $number:expr, $args:literal => $errno:ident, $control:ident;
        threat $threat:literal; anchor $anchor:literal;
    )*) => {
        /// Every case, in the order the calls are made (the namespace calls last: made on the
        /// host as root they would move the control's process into new namespaces).
        fn table() -> Vec<Case> {
            vec![$(Case {
                name: $name,
                number: $number as i64,
                args: $args,
                errno: libc::$errno,
                control: Control::$control,
            }),*]
        }
        $(
            #[doc = concat!("Threat: ", $threat, ". Anchor: ", $anchor, ". Verdict: `", stringify!($errno), "`.")]
            #[test]
            fn $test() {
                check($name);
            }
        )*
    };
}

corpus! {
    acct_is_refused: "acct" libc::SYS_acct, "(b'/nonexistent-swerve/acct',)" => EPERM, Root;
        threat "process accounting written to a file of the model's choosing"; anchor "seccomp allowlist";
    add_key_is_refused: "add_key" libc::SYS_add_key, "(None, None, None, 0, 0)" => EPERM, Any;
        threat "the kernel keyring (shared by every process of a user; keys of the host)"; anchor "seccomp allowlist";
    request_key_is_refused: "request_key" libc::SYS_request_key, "(None, None, None, 0)" => EPERM, Any;
        threat "the kernel keyring, and its upcall to a host helper"; anchor "seccomp allowlist";
    keyctl_is_refused: "keyctl" libc::SYS_keyctl, "(-1, 0, 0, 0, 0)" => EPERM, Any;
        threat "reading or linking keys of the host's keyrings"; anchor "seccomp allowlist";
    bpf_is_refused: "bpf" libc::SYS_bpf, "(-1, None, 0)" => EPERM, Root;
        threat "eBPF programs: verifier bugs, kernel memory reads"; anchor "seccomp allowlist";
    clock_adjtime_is_refused: "clock_adjtime" libc::SYS_clock_adjtime, "(0xdead, None)" => EPERM, Any;
        threat "tuning the host's clock"; anchor "seccomp allowlist";
    clock_settime_is_refused: "clock_settime" libc::SYS_clock_settime, "(0xdead, None)" => EPERM, Any;
        threat "setting the host's clock"; anchor "seccomp allowlist";
    settimeofday_is_refused: "settimeofday" libc::SYS_settimeofday, "(None, None)" => EPERM, Root;
        threat "setting the host's clock"; anchor "seccomp allowlist";
    adjtimex_is_refused: "adjtimex" libc::SYS_adjtimex, "(None,)" => EPERM, Any;
        threat "tuning the host's clock"; anchor "seccomp allowlist (Docker allows it; swerve does not)";
    create_module_is_refused: "create_module" 174, "(None, 0)" => EPERM, Any;
        threat "loading kernel code (a removed call, refused before the kernel sees it)"; anchor "seccomp allowlist";
    delete_module_is_refused: "delete_module" libc::SYS_delete_module, "(b'swerve_no_such_module', 0)" => EPERM, Root;
        threat "unloading the host's kernel modules"; anchor "seccomp allowlist";
    init_module_is_refused: "init_module" libc::SYS_init_module, "(None, 0, None)" => EPERM, Root;
        threat "loading kernel code"; anchor "seccomp allowlist";
    finit_module_is_refused: "finit_module" libc::SYS_finit_module, "(-1, b'', 0)" => EPERM, Root;
        threat "loading kernel code from a file"; anchor "seccomp allowlist";
    kexec_load_is_refused: "kexec_load" libc::SYS_kexec_load, "(0, 0, None, 0xdead0000)" => EPERM, Root;
        threat "replacing the running kernel"; anchor "seccomp allowlist";
    kexec_file_load_is_refused: "kexec_file_load" libc::SYS_kexec_file_load, "(-1, -1, 0, None, 0xffff0000)" => EPERM, Root;
        threat "replacing the running kernel"; anchor "seccomp allowlist";
    lookup_dcookie_is_refused: "lookup_dcookie" libc::SYS_lookup_dcookie, "(0, None, 0)" => EPERM, Any;
        threat "reading kernel paths by cookie (profiling interface)"; anchor "seccomp allowlist";
    mount_is_refused: "mount" libc::SYS_mount, "(b'none', b'/nonexistent-swerve', b'tmpfs', 0, None)" => EPERM, Root;
        threat "mounting over the sandbox's read-only view, or mounting cgroupfs/procfs afresh"; anchor "seccomp allowlist";
    umount2_is_refused: "umount2" libc::SYS_umount2, "(b'/nonexistent-swerve', 0)" => EPERM, Root;
        threat "unmounting a mask (`/proc/kcore`'s cover) to reveal what is under it"; anchor "seccomp allowlist";
    move_mount_is_refused: "move_mount" 429, "(FDCWD, b'/nonexistent-swerve', FDCWD, b'/nonexistent-swerve', 0)" => EPERM, Root;
        threat "the new mount API: moving a mount over the view"; anchor "seccomp allowlist";
    open_tree_is_refused: "open_tree" 428, "(FDCWD, b'/nonexistent-swerve', 0)" => EPERM, Any;
        threat "the new mount API: cloning a mount tree to carry it elsewhere"; anchor "seccomp allowlist";
    fsopen_is_refused: "fsopen" 430, "(None, 0)" => EPERM, Root;
        threat "the new mount API: a fresh filesystem context (cgroupfs, procfs)"; anchor "seccomp allowlist";
    fsconfig_is_refused: "fsconfig" 431, "(-1, 0, None, None, 0)" => EPERM, Any;
        threat "the new mount API: configuring a filesystem context"; anchor "seccomp allowlist";
    fsmount_is_refused: "fsmount" 432, "(-1, 0, 0)" => EPERM, Root;
        threat "the new mount API: turning a context into a mount"; anchor "seccomp allowlist";
    fspick_is_refused: "fspick" 433, "(FDCWD, b'/nonexistent-swerve', 0)" => EPERM, Root;
        threat "the new mount API: reconfiguring a mounted filesystem (remounting read-write)"; anchor "seccomp allowlist";
    mount_setattr_is_refused: "mount_setattr" 442, "(FDCWD, b'/nonexistent-swerve', 0, None, 0)" => EPERM, Any;
        threat "clearing a mount's read-only or nosuid flag"; anchor "seccomp allowlist";
    pivot_root_is_refused: "pivot_root" libc::SYS_pivot_root, "(b'/nonexistent-swerve', b'/nonexistent-swerve')" => EPERM, Root;
        threat "swapping the sandbox's root for another"; anchor "seccomp allowlist";
    name_to_handle_at_is_refused: "name_to_handle_at" libc::SYS_name_to_handle_at, "(-1, b'', BUF, BUF, 0)" => EPERM, Any;
        threat "file handles, the first half of the shocker escape"; anchor "seccomp allowlist (newer Docker profiles keep it for CAP_SYS_ADMIN)";
    open_by_handle_at_is_refused: "open_by_handle_at" libc::SYS_open_by_handle_at, "(-1, BUF, 0)" => EPERM, Root;
        threat "the shocker escape: opening host files by guessed handle"; anchor "seccomp allowlist";
    nfsservctl_is_refused: "nfsservctl" libc::SYS_nfsservctl, "(0, None, None)" => EPERM, Any;
        threat "the kernel NFS server's control (a removed call)"; anchor "seccomp allowlist";
    perf_event_open_is_refused: "perf_event_open" libc::SYS_perf_event_open, "(None, 0, -1, -1, 0)" => EPERM, Any;
        threat "performance counters: kernel address leaks, side channels"; anchor "seccomp allowlist";
    personality_is_refused_outside_the_allowed_values: "personality" libc::SYS_personality, "(0x0400000,)" => EPERM, Any;
        threat "READ_IMPLIES_EXEC and other personalities that weaken the process's own hardening"; anchor "seccomp argument check (0, 8, 0x20000, 0x20008, 0xffffffff only)";
    process_vm_readv_cannot_reach_a_host_process: "process_vm_readv" libc::SYS_process_vm_readv, "(HOSTPID, IOV, 1, IOV, 1, 0)" => ESRCH, Any;
        threat "reading a host process's memory"; anchor "PID namespace (the host's pids do not exist inside)";
    process_vm_writev_cannot_reach_a_host_process: "process_vm_writev" libc::SYS_process_vm_writev, "(HOSTPID, IOV, 1, IOV, 1, 0)" => ESRCH, Any;
        threat "writing a host process's memory"; anchor "PID namespace";
    ptrace_cannot_seize_a_host_process: "ptrace" libc::SYS_ptrace, "(0x4206, HOSTPID, 0, 0)" => ESRCH, Any;
        threat "tracing (and so controlling) a host process"; anchor "PID namespace";
    quotactl_is_refused: "quotactl" libc::SYS_quotactl, "(0, None, 0, None)" => EPERM, Root;
        threat "changing the host filesystems' quotas"; anchor "seccomp allowlist";
    quotactl_fd_is_refused: "quotactl_fd" 443, "(-1, 0, 0, None)" => EPERM, Any;
        threat "changing the host filesystems' quotas"; anchor "seccomp allowlist";
    reboot_is_refused: "reboot" libc::SYS_reboot, "(0, 0, 0, None)" => EPERM, Root;
        threat "rebooting or halting the host"; anchor "seccomp allowlist";
    setns_is_refused: "setns" libc::SYS_setns, "(-1, 0)" => EPERM, Any;
        threat "joining another namespace (a leaked descriptor of the host's)"; anchor "seccomp allowlist";
    swapon_is_refused: "swapon" libc::SYS_swapon, "(b'/nonexistent-swerve', 0)" => EPERM, Root;
        threat "adding swap (the host's memory accounting)"; anchor "seccomp allowlist";
    swapoff_is_refused: "swapoff" libc::SYS_swapoff, "(b'/nonexistent-swerve',)" => EPERM, Root;
        threat "removing the host's swap"; anchor "seccomp allowlist";
    sysfs_is_refused: "sysfs" libc::SYS_sysfs, "(3,)" => EPERM, Any;
        threat "enumerating the kernel's filesystem types (an obsolete call)"; anchor "seccomp allowlist";
    sysctl_is_refused: "_sysctl" libc::SYS__sysctl, "(None,)" => EPERM, Any;
        threat "binary sysctl, a removed path around read-only `/proc/sys`"; anchor "seccomp allowlist";
    uselib_is_refused: "uselib" libc::SYS_uselib, "(b'/nonexistent-swerve',)" => EPERM, Any;
        threat "the a.out library loader (old kernel bugs)"; anchor "seccomp allowlist";
    userfaultfd_is_refused: "userfaultfd" libc::SYS_userfaultfd, "(1 | 0x40,)" => EPERM, Any;
        threat "stalling kernel copies at will, the staple of kernel race exploits"; anchor "seccomp allowlist";
    ustat_is_refused: "ustat" libc::SYS_ustat, "(0, BUF)" => EPERM, Any;
        threat "statistics of host filesystems by device number (an obsolete call)"; anchor "seccomp allowlist";
    io_uring_setup_is_refused: "io_uring_setup" 425, "(0, None)" => EPERM, Any;
        threat "io_uring, the source of many kernel escalations"; anchor "seccomp allowlist (Docker refuses it since 25.0)";
    io_uring_enter_is_refused: "io_uring_enter" 426, "(-1, 1, 0, 0, None, 0)" => EPERM, Any;
        threat "io_uring"; anchor "seccomp allowlist";
    io_uring_register_is_refused: "io_uring_register" 427, "(-1, 0, None, 0)" => EPERM, Any;
        threat "io_uring"; anchor "seccomp allowlist";
    iopl_is_refused: "iopl" libc::SYS_iopl, "(4,)" => EPERM, Any;
        threat "raw I/O port access (the host's hardware)"; anchor "seccomp allowlist";
    ioperm_is_refused: "ioperm" libc::SYS_ioperm, "(0, 0, 1)" => EPERM, Any;
        threat "raw I/O port access"; anchor "seccomp allowlist";
    syslog_is_refused: "syslog" libc::SYS_syslog, "(10, None, 0)" => EPERM, Root;
        threat "reading or clearing the kernel log (kernel addresses, other tenants' messages)"; anchor "seccomp allowlist";
    fanotify_init_is_refused: "fanotify_init" libc::SYS_fanotify_init, "(0, 0)" => EPERM, Root;
        threat "watching (and blocking) every file access of the mount"; anchor "seccomp allowlist";
    kcmp_is_refused: "kcmp" libc::SYS_kcmp, "(os.getpid(), os.getpid(), 0, 0, 0)" => EPERM, Any;
        threat "comparing kernel objects (kernel pointer ordering leaks)"; anchor "seccomp allowlist";
    pidfd_getfd_is_refused: "pidfd_getfd" 438, "(-1, 0, 0)" => EPERM, Any;
        threat "stealing another process's descriptors"; anchor "seccomp allowlist";
    process_madvise_is_refused: "process_madvise" 440, "(-1, None, 0, 0, 0)" => EPERM, Any;
        threat "acting on another process's memory"; anchor "seccomp allowlist";
    mbind_is_refused: "mbind" libc::SYS_mbind, "(0, 0, 0, None, 0, 0)" => EPERM, Any;
        threat "NUMA placement against the host's other work"; anchor "seccomp allowlist";
    get_mempolicy_is_refused: "get_mempolicy" libc::SYS_get_mempolicy, "(None, None, 0, 0, 0)" => EPERM, Any;
        threat "NUMA policy (refused as in Docker without CAP_SYS_NICE)"; anchor "seccomp allowlist";
    set_mempolicy_is_refused: "set_mempolicy" libc::SYS_set_mempolicy, "(0, None, 0)" => EPERM, Any;
        threat "NUMA policy"; anchor "seccomp allowlist";
    set_mempolicy_home_node_is_refused: "set_mempolicy_home_node" 450, "(0, 0, 0, 0)" => EPERM, Any;
        threat "NUMA policy"; anchor "seccomp allowlist";
    vhangup_is_refused: "vhangup" libc::SYS_vhangup, "()" => EPERM, None;
        threat "hanging up a terminal (made on the host it would hang up the test's own)"; anchor "seccomp allowlist";
    sethostname_is_refused: "sethostname" libc::SYS_sethostname, "(b'x', 1000)" => EPERM, Root;
        threat "renaming the host"; anchor "seccomp allowlist (and a UTS namespace of its own)";
    setdomainname_is_refused: "setdomainname" libc::SYS_setdomainname, "(b'x', 1000)" => EPERM, Root;
        threat "renaming the host's NIS domain"; anchor "seccomp allowlist (and a UTS namespace of its own)";
    vsock_sockets_are_refused: "socket_vsock" libc::SYS_socket, "(40, 1, 0)" => EPERM, None;
        threat "a socket to the hypervisor (made on the host it could load a module)"; anchor "seccomp argument check (AF_VSOCK)";
    clone3_falls_back: "clone3" 435, "(None, 0)" => ENOSYS, Any;
        threat "clone3, whose namespace flags a filter cannot read"; anchor "seccomp (ENOSYS, so the C library falls back to clone)";
    a_call_newer_than_the_list_is_refused: "fchmodat2" 452, "(FDCWD, b'/nonexistent-swerve', 0o755, 0)" => ENOSYS, Any;
        threat "kernel surface newer than the allowlist"; anchor "seccomp (numbers above the list's newest call: ENOSYS)";
    clone_into_a_new_user_namespace_is_refused: "clone_newuser" libc::SYS_clone, "(0x10000000 | 0x800, 0, 0, 0, 0)" => EPERM, Any;
        threat "a user namespace of its own: full capabilities over new kernel surface"; anchor "seccomp argument check (clone's namespace flags)";
    clone_into_a_new_mount_namespace_is_refused: "clone_newns" libc::SYS_clone, "(0x20000 | 0x800, 0, 0, 0, 0)" => EPERM, Any;
        threat "a mount namespace of its own"; anchor "seccomp argument check";
    clone_into_a_new_network_namespace_is_refused: "clone_newnet" libc::SYS_clone, "(0x40000000 | 0x800, 0, 0, 0, 0)" => EPERM, Any;
        threat "a network namespace of its own (netfilter surface)"; anchor "seccomp argument check";
    clone_into_a_new_pid_namespace_is_refused: "clone_newpid" libc::SYS_clone, "(0x20000000 | 0x800, 0, 0, 0, 0)" => EPERM, Any;
        threat "a PID namespace of its own"; anchor "seccomp argument check";
    clone_into_a_new_cgroup_namespace_is_refused: "clone_newcgroup" libc::SYS_clone, "(0x02000000 | 0x800, 0, 0, 0, 0)" => EPERM, Any;
        threat "a cgroup namespace of its own"; anchor "seccomp argument check";
    unshare_of_the_mount_namespace_is_refused: "unshare_newns" libc::SYS_unshare, "(0x20000,)" => EPERM, Root;
        threat "a private mount namespace to remount in"; anchor "seccomp allowlist";
    unshare_of_the_network_namespace_is_refused: "unshare_newnet" libc::SYS_unshare, "(0x40000000,)" => EPERM, Root;
        threat "a network namespace of its own"; anchor "seccomp allowlist";
    unshare_of_the_pid_namespace_is_refused: "unshare_newpid" libc::SYS_unshare, "(0x20000000,)" => EPERM, Root;
        threat "a PID namespace of its own"; anchor "seccomp allowlist";
    unshare_of_the_uts_namespace_is_refused: "unshare_newuts" libc::SYS_unshare, "(0x04000000,)" => EPERM, Root;
        threat "a UTS namespace of its own"; anchor "seccomp allowlist";
    unshare_of_the_ipc_namespace_is_refused: "unshare_newipc" libc::SYS_unshare, "(0x08000000,)" => EPERM, Root;
        threat "an IPC namespace of its own"; anchor "seccomp allowlist";
    unshare_of_the_cgroup_namespace_is_refused: "unshare_newcgroup" libc::SYS_unshare, "(0x02000000,)" => EPERM, Root;
        threat "a cgroup namespace of its own"; anchor "seccomp allowlist";
    unshare_of_the_time_namespace_is_refused: "unshare_newtime" libc::SYS_unshare, "(0x80,)" => EPERM, Root;
        threat "a time namespace: clocks offset for its children"; anchor "seccomp allowlist";
    unshare_of_the_user_namespace_is_refused: "unshare_newuser" libc::SYS_unshare, "(0x10000000,)" => EPERM, Root;
        threat "a user namespace of its own: full capabilities over new kernel surface"; anchor "seccomp allowlist";
}

/// The sandbox's and the host's answers to every call of the table.
struct Answers {
    sandbox: BTreeMap<String, (i64, i32)>,
    host: BTreeMap<String, (i64, i32)>,
}

/// Runs the table once (in a sandbox, then on the host) for every case.
fn answers() -> &'static Answers {
    static ANSWERS: OnceLock<Answers> = OnceLock::new();
    ANSWERS.get_or_init(|| {
        // A host process for the calls aimed at one: it must stay out of reach.
        let mut target = std::process::Command::new("sleep")
            .arg("1000.7171")
            .spawn()
            .unwrap();
        let pid = target.id().to_string();
        let lines = |cases: &mut dyn Iterator<Item = Case>| -> String {
            cases
                .map(|case| {
                    format!(
                        "{} {} {}\n",
                        case.name,
                        case.number,
                        case.args.replace("HOSTPID", &pid)
                    )
                })
                .collect()
        };
        let fixture = Fixture::new();
        let workspace = fixture.workspace(isolated());
        let sandbox = super::raw_syscalls(&workspace, &lines(&mut table().into_iter()));
        let host_calls = lines(
            &mut table()
                .into_iter()
                .filter(|case| case.control != Control::None),
        );
        let output = std::process::Command::new("python3")
            .arg("-c")
            .arg(super::syscall_script(&host_calls))
            .output()
            .unwrap();
        let host = super::syscall_results(
            &host_calls,
            &String::from_utf8_lossy(&output.stdout),
            &String::from_utf8_lossy(&output.stderr),
        );
        let _ = target.kill();
        let _ = target.wait();
        Answers { sandbox, host }
    })
}

/// Checks case `name`: the sandbox answered its `errno`, and the host, where the control
/// applies, answered otherwise.
fn check(name: &str) {
    let case = table().into_iter().find(|case| case.name == name).unwrap();
    let answers = answers();
    let got = answers.sandbox[name];
    assert_eq!(
        got,
        (-1, case.errno),
        "{name} in the sandbox: expected -1 with errno {}, got {got:?}",
        case.errno
    );
    let root = nix::unistd::Uid::effective().is_root();
    match case.control {
        Control::Any => {}
        Control::Root if root => {}
        Control::Root => {
            eprintln!("{name}: no host control unprivileged (the host refuses it with EPERM too)");
            return;
        }
        Control::None => {
            eprintln!("{name}: no host control (the call would touch the host)");
            return;
        }
    }
    let host = answers.host[name];
    assert_ne!(
        host,
        (-1, case.errno),
        "{name} on the host answered as in the sandbox, so the case shows nothing"
    );
}

/// Runs `program` (Python) in a sandbox and on the host; returns both shells' exit statuses.
fn status_in_sandbox_and_host(program: &str) -> (String, String) {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let outcome = super::run(
        &workspace,
        &format!("cat > /tmp/p.py <<'EOF'\n{program}\nEOF\npython3 /tmp/p.py; echo status=$?"),
    );
    let host = std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .output()
        .unwrap();
    let host_status = match (
        host.status.code(),
        std::os::unix::process::ExitStatusExt::signal(&host.status),
    ) {
        (Some(code), _) => format!("status={code}"),
        (None, Some(signal)) => format!("status={}", 128 + signal),
        _ => "status=?".into(),
    };
    (
        format!("{}{}", outcome.stdout_text(), outcome.stderr_text()),
        format!(
            "{}{}{host_status}",
            String::from_utf8_lossy(&host.stdout),
            String::from_utf8_lossy(&host.stderr)
        ),
    )
}

/// Threat: the 32-bit system call table (`int 0x80`), with its own numbers (`vm86`, `vm86old`
/// and the rest only it has) that an allowlist of 64-bit numbers would misread. Anchor:
/// seccomp's architecture check, which kills the process. Verdict: `SIGSYS` (status 159); on
/// the host the same code returns the process's id (or dies of `SIGSEGV` without IA-32
/// emulation).
#[test]
fn a_32_bit_system_call_kills_the_process() {
    // mov eax, 20 (getpid in the 32-bit table); int 0x80; ret
    let program = "import ctypes, mmap\n\
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n\
        m.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')\n\
        code = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))\n\
        print('returned', code(), flush=True)";
    let (sandbox, host) = status_in_sandbox_and_host(program);
    assert!(sandbox.contains("status=159"), "{sandbox}");
    assert!(!sandbox.contains("returned"), "{sandbox}");
    assert!(!host.contains("status=159"), "{host}");
}

/// Threat: the x32 system call table (numbers with bit 30 set), another table an allowlist of
/// 64-bit numbers would misread. Anchor: seccomp (x32 numbers kill the process). Verdict:
/// `SIGSYS` (status 159); on the host `ENOSYS` without x32 support, or the call's answer.
#[test]
fn an_x32_system_call_kills_the_process() {
    let program = "import ctypes\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        print('returned', libc.syscall(ctypes.c_long(0x40000000 | 39)), flush=True)";
    let (sandbox, host) = status_in_sandbox_and_host(program);
    assert!(sandbox.contains("status=159"), "{sandbox}");
    assert!(!sandbox.contains("returned"), "{sandbox}");
    assert!(host.contains("returned"), "{host}");
}
