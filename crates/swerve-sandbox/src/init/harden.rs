//! What PID 1 gives up once the sandbox's filesystem is built, before it starts any command:
//! its dumpability, capabilities beyond Docker's default set, the right to gain privileges,
//! and every system call outside an allowlist (a seccomp filter after Docker's default
//! profile, which is an allowlist too, without io_uring).
//!
//! Every command is a descendant of PID 1, so all of them inherit the last three. The
//! capabilities left are those of the sandbox's user namespace, which owns nothing of the
//! host's: they let root inside change the workspace's files, not the machine.

use super::fail_text;

/// Capabilities commands keep (Docker's default set): CHOWN, DAC_OVERRIDE, FOWNER, FSETID,
/// KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD, AUDIT_WRITE,
/// SETFCAP.
const KEPT_CAPABILITIES: &[u32] = &[0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31];

/// Gives up what commands must not have; an error names the step that failed.
pub(crate) fn harden() -> Result<(), String> {
    become_undumpable()?;
    drop_capabilities()?;
    nix::sys::prctl::set_no_new_privs().map_err(fail_text("setting no_new_privs"))?;
    install_seccomp_filter()
}

/// Makes PID 1 non-dumpable, so that no command can trace it, read or write its memory
/// (`ptrace`, `process_vm_readv`/`writev`, `/proc/1/mem`) or open its `/proc/1/exe`,
/// `/proc/1/ns/*`, `/proc/1/fd/*` or `/proc/1/root`: PID 1 holds the channel to the host, and
/// a command that took it over could forge what the host reads of later commands.
///
/// Run by a user other than root, PID 1 keeps that user's id (the same as every command's),
/// and for a dumpable process the kernel grants such access to any process of the same ids.
/// A non-dumpable one it grants only to a holder of `CAP_SYS_PTRACE` in the user namespace
/// of PID 1's memory, which is the host's (PID 1's memory comes from an `execve` made before
/// the sandbox's user namespace existed): commands, root only in the sandbox's namespace and
/// without `CAP_SYS_PTRACE` there anyway, have none. As root, PID 1 changed ids entering the
/// sandbox, which already made it non-dumpable; this makes it so in every mode.
///
/// The host never needs PID 1's `/proc` entries: it reaches the sandbox's files
/// (`/proc/PID/root`) and namespaces (`nsenter`) through the init's first process, PID 1's
/// parent, which lives outside the sandbox's PID namespace, where no command can name it.
/// Commands themselves are dumpable as before: `execve` resets the flag.
fn become_undumpable() -> Result<(), String> {
    nix::sys::prctl::set_dumpable(false).map_err(fail_text("making PID 1 non-dumpable"))
}

/// Drops every capability outside [`KEPT_CAPABILITIES`] from the bounding set (so no
/// program can regain it) and from the effective, permitted and inheritable sets.
fn drop_capabilities() -> Result<(), String> {
    let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .unwrap_or(40);
    for capability in (0..=last).filter(|cap| !KEPT_CAPABILITIES.contains(cap)) {
        // SAFETY: PR_CAPBSET_DROP takes a capability number and no pointers.
        let result =
            unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability as libc::c_ulong, 0, 0, 0) };
        if result != 0 && nix::errno::Errno::last() != nix::errno::Errno::EINVAL {
            return Err(format!(
                "dropping capability {capability} from the bounding set: {}",
                nix::errno::Errno::last()
            ));
        }
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut words = [0u32; 2];
    for capability in KEPT_CAPABILITIES {
        words[(capability / 32) as usize] |= 1 << (capability % 32);
    }
    let data = words.map(|word| Data {
        effective: word,
        permitted: word,
        inheritable: 0,
    });
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    // SAFETY: a version-3 header and two data words, as capset(2) requires.
    let result = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    if result != 0 {
        return Err(format!(
            "setting the capability sets: {}",
            nix::errno::Errno::last()
        ));
    }
    Ok(())
}

/// The audit architecture of this build's system calls.
#[cfg(target_arch = "x86_64")]
const NATIVE_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const NATIVE_ARCH: u32 = 0xC000_00B7;

/// System calls of Docker's default seccomp profile (moby's `profiles/seccomp/default.json`)
/// that every command may make, on either architecture: the profile's unconditional allowlist
/// as it applies to 64-bit x86 and Arm, the calls it allows for the capabilities the sandbox
/// keeps (`chroot` for CAP_SYS_CHROOT) and on kernels from 4.8 (`ptrace`,
/// `process_vm_readv`, `process_vm_writev`: a PID namespace keeps them to the sandbox's own
/// processes). Left out although Docker allows them: `io_uring_setup`, `io_uring_enter` and
/// `io_uring_register` (Docker refuses them since 25.0: io_uring has been the source of many
/// kernel escalations), `name_to_handle_at` (newer profiles keep it for CAP_SYS_ADMIN),
/// `adjtimex` and `clock_adjtime` (clock tuning, which swerve has always refused). Calls with
/// arguments the profile checks (`clone`, `clone3`, `socket`, `personality`) are
/// decided in [`install_seccomp_filter`].
const ALLOWED_CALLS: &[libc::c_long] = &[
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_bind,
    libc::SYS_brk,
    libc::SYS_capget,
    libc::SYS_capset,
    libc::SYS_chdir,
    libc::SYS_chroot,
    libc::SYS_clock_getres,
    libc::SYS_clock_gettime,
    libc::SYS_clock_nanosleep,
    libc::SYS_close,
    libc::SYS_close_range,
    libc::SYS_connect,
    libc::SYS_copy_file_range,
    libc::SYS_dup,
    libc::SYS_dup3,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_eventfd2,
    libc::SYS_execve,
    libc::SYS_execveat,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_fadvise64,
    libc::SYS_fallocate,
    libc::SYS_fanotify_mark,
    libc::SYS_fchdir,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_fcntl,
    libc::SYS_fdatasync,
    libc::SYS_fgetxattr,
    libc::SYS_flistxattr,
    libc::SYS_flock,
    libc::SYS_fremovexattr,
    libc::SYS_fsetxattr,
    libc::SYS_fstat,
    libc::SYS_fstatfs,
    libc::SYS_fsync,
    libc::SYS_ftruncate,
    libc::SYS_futex,
    libc::SYS_futex_waitv,
    libc::SYS_get_robust_list,
    libc::SYS_getcpu,
    libc::SYS_getcwd,
    libc::SYS_getdents64,
    libc::SYS_getegid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getgroups,
    libc::SYS_getitimer,
    libc::SYS_getpeername,
    libc::SYS_getpgid,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_getpriority,
    libc::SYS_getrandom,
    libc::SYS_getresgid,
    libc::SYS_getresuid,
    libc::SYS_getrusage,
    libc::SYS_getsid,
    libc::SYS_getsockname,
    libc::SYS_getsockopt,
    libc::SYS_gettid,
    libc::SYS_gettimeofday,
    libc::SYS_getuid,
    libc::SYS_getxattr,
    libc::SYS_inotify_add_watch,
    libc::SYS_inotify_init1,
    libc::SYS_inotify_rm_watch,
    libc::SYS_io_cancel,
    libc::SYS_io_destroy,
    libc::SYS_io_getevents,
    SYS_IO_PGETEVENTS,
    libc::SYS_io_setup,
    libc::SYS_io_submit,
    libc::SYS_ioctl,
    libc::SYS_ioprio_get,
    libc::SYS_ioprio_set,
    libc::SYS_kill,
    libc::SYS_landlock_add_rule,
    libc::SYS_landlock_create_ruleset,
    libc::SYS_landlock_restrict_self,
    libc::SYS_lgetxattr,
    libc::SYS_linkat,
    libc::SYS_listen,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_lremovexattr,
    libc::SYS_lseek,
    libc::SYS_lsetxattr,
    libc::SYS_madvise,
    libc::SYS_membarrier,
    libc::SYS_memfd_create,
    libc::SYS_memfd_secret,
    libc::SYS_mincore,
    libc::SYS_mkdirat,
    libc::SYS_mknodat,
    libc::SYS_mlock,
    libc::SYS_mlock2,
    libc::SYS_mlockall,
    libc::SYS_mmap,
    libc::SYS_mprotect,
    libc::SYS_mq_getsetattr,
    libc::SYS_mq_notify,
    libc::SYS_mq_open,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_unlink,
    libc::SYS_mremap,
    libc::SYS_msgctl,
    libc::SYS_msgget,
    libc::SYS_msgrcv,
    libc::SYS_msgsnd,
    libc::SYS_msync,
    libc::SYS_munlock,
    libc::SYS_munlockall,
    libc::SYS_munmap,
    libc::SYS_nanosleep,
    libc::SYS_newfstatat,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_pidfd_open,
    libc::SYS_pidfd_send_signal,
    libc::SYS_pipe2,
    libc::SYS_pkey_alloc,
    libc::SYS_pkey_free,
    libc::SYS_pkey_mprotect,
    libc::SYS_ppoll,
    libc::SYS_prctl,
    libc::SYS_pread64,
    libc::SYS_preadv,
    libc::SYS_preadv2,
    libc::SYS_prlimit64,
    libc::SYS_process_mrelease,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pselect6,
    libc::SYS_ptrace,
    libc::SYS_pwrite64,
    libc::SYS_pwritev,
    libc::SYS_pwritev2,
    libc::SYS_read,
    libc::SYS_readahead,
    libc::SYS_readlinkat,
    libc::SYS_readv,
    libc::SYS_recvfrom,
    libc::SYS_recvmmsg,
    libc::SYS_recvmsg,
    libc::SYS_remap_file_pages,
    libc::SYS_removexattr,
    libc::SYS_renameat2,
    libc::SYS_restart_syscall,
    libc::SYS_rseq,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigpending,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigqueueinfo,
    libc::SYS_rt_sigreturn,
    libc::SYS_rt_sigsuspend,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_rt_tgsigqueueinfo,
    libc::SYS_sched_get_priority_max,
    libc::SYS_sched_get_priority_min,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_getattr,
    libc::SYS_sched_getparam,
    libc::SYS_sched_getscheduler,
    libc::SYS_sched_rr_get_interval,
    libc::SYS_sched_setaffinity,
    libc::SYS_sched_setattr,
    libc::SYS_sched_setparam,
    libc::SYS_sched_setscheduler,
    libc::SYS_sched_yield,
    libc::SYS_seccomp,
    libc::SYS_semctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_sendfile,
    libc::SYS_sendmmsg,
    libc::SYS_sendmsg,
    libc::SYS_sendto,
    libc::SYS_set_robust_list,
    libc::SYS_set_tid_address,
    libc::SYS_setfsgid,
    libc::SYS_setfsuid,
    libc::SYS_setgid,
    libc::SYS_setgroups,
    libc::SYS_setitimer,
    libc::SYS_setpgid,
    libc::SYS_setpriority,
    libc::SYS_setregid,
    libc::SYS_setresgid,
    libc::SYS_setresuid,
    libc::SYS_setreuid,
    libc::SYS_setsid,
    libc::SYS_setsockopt,
    libc::SYS_setuid,
    libc::SYS_setxattr,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_shmget,
    libc::SYS_shutdown,
    libc::SYS_sigaltstack,
    libc::SYS_signalfd4,
    libc::SYS_socketpair,
    libc::SYS_splice,
    libc::SYS_statfs,
    libc::SYS_statx,
    libc::SYS_symlinkat,
    libc::SYS_sync,
    libc::SYS_syncfs,
    libc::SYS_sysinfo,
    libc::SYS_tee,
    libc::SYS_tgkill,
    libc::SYS_timer_create,
    libc::SYS_timer_delete,
    libc::SYS_timer_getoverrun,
    libc::SYS_timer_gettime,
    libc::SYS_timer_settime,
    libc::SYS_timerfd_create,
    libc::SYS_timerfd_gettime,
    libc::SYS_timerfd_settime,
    libc::SYS_times,
    libc::SYS_tkill,
    libc::SYS_truncate,
    libc::SYS_umask,
    libc::SYS_uname,
    libc::SYS_unlinkat,
    libc::SYS_utimensat,
    libc::SYS_vmsplice,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_write,
    libc::SYS_writev,
];

/// The allowed calls each architecture numbers in its own way. On x86_64: the older calls it
/// still has beside their `…at` and generic forms (Docker's list names them; Arm's 64-bit
/// table never had them), its own `arch_prctl` and `modify_ldt`, which Docker allows there,
/// and `getrlimit`, `setrlimit`, `renameat`, `sync_file_range`.
#[cfg(target_arch = "x86_64")]
const ARCH_CALLS: &[libc::c_long] = &[
    libc::SYS_getrlimit,
    libc::SYS_setrlimit,
    libc::SYS_renameat,
    libc::SYS_sync_file_range,
    libc::SYS_access,
    libc::SYS_alarm,
    libc::SYS_arch_prctl,
    libc::SYS_chmod,
    libc::SYS_chown,
    libc::SYS_creat,
    libc::SYS_dup2,
    libc::SYS_epoll_create,
    libc::SYS_epoll_ctl_old,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_wait_old,
    libc::SYS_eventfd,
    libc::SYS_fork,
    libc::SYS_futimesat,
    libc::SYS_get_thread_area,
    libc::SYS_getdents,
    libc::SYS_getpgrp,
    libc::SYS_inotify_init,
    libc::SYS_lchown,
    libc::SYS_link,
    libc::SYS_lstat,
    libc::SYS_mkdir,
    libc::SYS_mknod,
    libc::SYS_modify_ldt,
    libc::SYS_open,
    libc::SYS_pause,
    libc::SYS_pipe,
    libc::SYS_poll,
    libc::SYS_readlink,
    libc::SYS_rename,
    libc::SYS_rmdir,
    libc::SYS_select,
    libc::SYS_set_thread_area,
    libc::SYS_signalfd,
    libc::SYS_stat,
    libc::SYS_symlink,
    libc::SYS_time,
    libc::SYS_unlink,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_vfork,
];
/// On aarch64: `getrlimit` (163), `setrlimit` (164), `renameat` (38) and `sync_file_range`
/// (84), which the `libc` crate does not name there.
#[cfg(target_arch = "aarch64")]
const ARCH_CALLS: &[libc::c_long] = &[163, 164, 38, 84];

/// `io_pgetevents`, which the `libc` crate does not name on these targets.
#[cfg(target_arch = "x86_64")]
const SYS_IO_PGETEVENTS: libc::c_long = 333;
#[cfg(target_arch = "aarch64")]
const SYS_IO_PGETEVENTS: libc::c_long = 292;

/// The highest system call number Docker's default profile names (`set_mempolicy_home_node`,
/// 450 on both architectures). A higher number is a call newer than the list: it fails with
/// `ENOSYS`, as on an older kernel, so the C library falls back to the older call it replaces
/// (`fchmodat2` → `fchmodat`), where `EPERM` would break it. Numbers up to this one that the
/// list does not allow fail with `EPERM`, as in Docker.
const NEWEST_LISTED_CALL: u32 = 450;

/// `AF_VSOCK`: sockets to the hypervisor, which Docker's profile refuses.
const AF_VSOCK: u32 = 40;

/// The `clone` flags that create namespaces (Docker's mask, 0x7E020000): `CLONE_NEWNS`,
/// `CLONE_NEWCGROUP`, `CLONE_NEWUTS`, `CLONE_NEWIPC`, `CLONE_NEWUSER`, `CLONE_NEWPID`,
/// `CLONE_NEWNET`.
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// The `personality` values Docker's profile allows: `PER_LINUX`, `UNAME26` with it
/// (`0x0020000`), `PER_LINUX32` (8), both, and the query `0xffffffff`.
const ALLOWED_PERSONALITIES: &[u32] = &[0, 8, 0x0002_0000, 0x0002_0008, 0xffff_ffff];

/// The allowed call numbers, sorted, as inclusive ranges of consecutive numbers.
fn allowed_ranges() -> Vec<(u32, u32)> {
    let mut calls: Vec<u32> = ALLOWED_CALLS
        .iter()
        .chain(ARCH_CALLS)
        .map(|call| *call as u32)
        .collect();
    calls.sort_unstable();
    calls.dedup();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for call in calls {
        match ranges.last_mut() {
            Some((_, high)) if *high + 1 == call => *high = call,
            _ => ranges.push((call, call)),
        }
    }
    ranges
}

/// Installs the filter, an allowlist in the sense of Docker's default profile: system calls
/// of a foreign architecture (32-bit or x32 calls on x86_64) kill the process; `clone3`,
/// whose flags a filter cannot read, fails with `ENOSYS`, so the C library falls back to
/// `clone`; `clone` asking for a new namespace, `socket` for `AF_VSOCK` and `personality`
/// outside [`ALLOWED_PERSONALITIES`] fail with `EPERM`; calls newer than
/// [`NEWEST_LISTED_CALL`] fail with `ENOSYS`; [`ALLOWED_CALLS`] (and
/// [`ARCH_CALLS`]) run; everything else fails with `EPERM`.
fn install_seccomp_filter() -> Result<(), String> {
    use libc::{
        BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JGT, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W,
        SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS, sock_filter, sock_fprog,
    };
    const ARCH_OFFSET: u32 = 4;
    const NR_OFFSET: u32 = 0;
    const ARG0_LOW_OFFSET: u32 = 16;
    const X32_BIT: u32 = 0x4000_0000;
    let statement = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let errno = |code: i32| SECCOMP_RET_ERRNO | (code as u32 & libc::SECCOMP_RET_DATA);
    let allow = statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    let refuse = statement(BPF_RET | BPF_K, errno(libc::EPERM));
    let mut program = vec![
        statement(BPF_LD | BPF_W | BPF_ABS, ARCH_OFFSET),
        jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
        statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        statement(BPF_LD | BPF_W | BPF_ABS, NR_OFFSET),
    ];
    if cfg!(target_arch = "x86_64") {
        program.push(jump(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 1));
        program.push(statement(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    }
    program.push(jump(
        BPF_JMP | BPF_JEQ | BPF_K,
        libc::SYS_clone3 as u32,
        0,
        1,
    ));
    program.push(statement(BPF_RET | BPF_K, errno(libc::ENOSYS)));
    // clone: load the flags (the first argument's low word) and test the namespace bits.
    program.push(jump(
        BPF_JMP | BPF_JEQ | BPF_K,
        libc::SYS_clone as u32,
        0,
        4,
    ));
    program.push(statement(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW_OFFSET));
    program.push(jump(BPF_JMP | BPF_JSET | BPF_K, NAMESPACE_FLAGS, 0, 1));
    program.push(refuse);
    program.push(allow);
    // socket: every domain but AF_VSOCK.
    program.push(jump(
        BPF_JMP | BPF_JEQ | BPF_K,
        libc::SYS_socket as u32,
        0,
        4,
    ));
    program.push(statement(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW_OFFSET));
    program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, AF_VSOCK, 0, 1));
    program.push(refuse);
    program.push(allow);
    // personality: one of the allowed values.
    let values = ALLOWED_PERSONALITIES.len() as u8;
    program.push(jump(
        BPF_JMP | BPF_JEQ | BPF_K,
        libc::SYS_personality as u32,
        0,
        2 * values + 2,
    ));
    program.push(statement(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW_OFFSET));
    for value in ALLOWED_PERSONALITIES {
        program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, *value, 0, 1));
        program.push(allow);
    }
    program.push(refuse);
    // Newer than the list: ENOSYS.
    program.push(jump(BPF_JMP | BPF_JGT | BPF_K, NEWEST_LISTED_CALL, 0, 1));
    program.push(statement(BPF_RET | BPF_K, errno(libc::ENOSYS)));
    // The allowlist, a range at a time: "if low <= nr <= high, allow".
    for (low, high) in allowed_ranges() {
        if low == high {
            program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, low, 0, 1));
        } else {
            program.push(jump(BPF_JMP | BPF_JGE | BPF_K, low, 0, 2));
            program.push(jump(BPF_JMP | BPF_JGT | BPF_K, high, 1, 0));
        }
        program.push(allow);
    }
    program.push(refuse);
    let filter = sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: `filter` points at `program`, which outlives the call; the kernel copies it.
    let result = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &filter as *const sock_fprog,
            0,
            0,
        )
    };
    if result != 0 {
        return Err(format!(
            "installing the seccomp filter: {}",
            nix::errno::Errno::last()
        ));
    }
    Ok(())
}
