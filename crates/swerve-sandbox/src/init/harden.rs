//! What PID 1 gives up once the sandbox's filesystem is built, before it starts any command:
//! capabilities beyond Docker's default set, the right to gain privileges, and the system
//! calls no task needs (a seccomp filter in the spirit of Docker's default profile).
//!
//! Every command is a descendant of PID 1, so all of them inherit this. The capabilities
//! left are those of the sandbox's user namespace, which owns nothing of the host's: they
//! let root inside change the workspace's files, not the machine.

use super::fail_text;

/// Capabilities commands keep (Docker's default set): CHOWN, DAC_OVERRIDE, FOWNER, FSETID,
/// KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD, AUDIT_WRITE,
/// SETFCAP.
const KEPT_CAPABILITIES: &[u32] = &[0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31];

/// Gives up what commands must not have; an error names the step that failed.
pub(crate) fn harden() -> Result<(), String> {
    drop_capabilities()?;
    nix::sys::prctl::set_no_new_privs().map_err(fail_text("setting no_new_privs"))?;
    install_seccomp_filter()
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

/// System calls that fail with `EPERM`: mounting and namespaces, kernel modules and kexec,
/// the kernel keyring, eBPF, perf events, file handles, the kernel log, swap, reboot, clocks,
/// quotas, accounting, userfaultfd.
fn denied_calls() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_setns,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_syslog,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_quotactl,
        libc::SYS_acct,
        libc::SYS_userfaultfd,
        libc::SYS_lookup_dcookie,
        libc::SYS_vhangup,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_iopl, libc::SYS_ioperm, libc::SYS_uselib]);
    calls
}

/// Installs the filter: system calls of a foreign architecture (32-bit or x32 calls on
/// x86_64) kill the process; [`denied_calls`] fail with `EPERM`; `clone` and `unshare` asking
/// for a new user namespace fail with `EPERM`; `clone3`, whose flags a filter cannot read,
/// fails with `ENOSYS`, so the C library falls back to `clone`.
fn install_seccomp_filter() -> Result<(), String> {
    use libc::{
        BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_JSET, BPF_K, BPF_LD, BPF_RET, BPF_W,
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
    let denied = denied_calls();
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
    // Each denied call: "if nr == call, return EPERM".
    for call in &denied {
        program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, *call as u32, 0, 1));
        program.push(statement(BPF_RET | BPF_K, errno(libc::EPERM)));
    }
    program.push(jump(
        BPF_JMP | BPF_JEQ | BPF_K,
        libc::SYS_clone3 as u32,
        0,
        1,
    ));
    program.push(statement(BPF_RET | BPF_K, errno(libc::ENOSYS)));
    // clone and unshare: load the flags (the first argument's low word) and test the bit.
    for call in [libc::SYS_clone, libc::SYS_unshare] {
        program.push(jump(BPF_JMP | BPF_JEQ | BPF_K, call as u32, 0, 4));
        program.push(statement(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW_OFFSET));
        program.push(jump(
            BPF_JMP | BPF_JSET | BPF_K,
            libc::CLONE_NEWUSER as u32,
            0,
            1,
        ));
        program.push(statement(BPF_RET | BPF_K, errno(libc::EPERM)));
        program.push(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    }
    program.push(statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
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
