//! Real security tests: each runs real processes in a real sandbox and checks from the host.
//!
//! This file holds the first tests, one per row of `docs/security.md`'s defences; `corpus`
//! and `syscalls` hold the adversarial corpus, one named case per attack.

mod corpus;
#[cfg(target_arch = "x86_64")]
mod syscalls;

use crate::common;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{Fixture, host_processes_with, isolated};
use swerve_core::Shell;
use swerve_sandbox::{IsolationInForce, Limits, SandboxConfig, Workspace};

/// As root, limits must come from cgroups: RLIMIT_NPROC does not bind root, so without them a
/// fork bomb would exhaust the host. (Unprivileged, rlimits apply and cgroups are optional.)
fn assert_limits_enforced(workspace: &Workspace) {
    if nix::unistd::Uid::effective().is_root() {
        assert_eq!(
            workspace.sandbox().isolation(),
            IsolationInForce::Namespaces { cgroups: true }
        );
    }
}

const CONNECT: &str = "python3 -c \"import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 2); print('connected')\"";

#[test]
fn a_command_cannot_reach_a_loopback_server_outside_the_sandbox() {
    let fixture = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let closed = fixture.workspace(isolated());
    let outcome = closed
        .sandbox()
        .run(&format!("{CONNECT} {port}"), Duration::from_secs(10))
        .unwrap();
    assert!(!outcome.success(), "connected: {}", outcome.stdout_text());
    assert!(
        outcome.stderr_text().contains("ConnectionRefusedError"),
        "{}",
        outcome.stderr_text()
    );
    // The same command does connect when network is switched on, so the check above can fail.
    let open = fixture.workspace(SandboxConfig {
        network: true,
        ..isolated()
    });
    let outcome = open
        .sandbox()
        .run(&format!("{CONNECT} {port}"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        outcome.stdout_text().trim(),
        "connected",
        "{}",
        outcome.stderr_text()
    );
}

#[test]
fn loopback_inside_the_sandbox_works() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let command = "python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); \
                   c=socket.create_connection(s.getsockname()); print('ok')\"";
    let outcome = workspace
        .sandbox()
        .run(command, Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        outcome.stdout_text().trim(),
        "ok",
        "{}",
        outcome.stderr_text()
    );
}

#[test]
fn background_processes_do_not_survive_the_rollout() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let outcome = workspace
        .sandbox()
        .run(
            "sleep 1000.4242 & setsid sleep 1000.4343 & echo started",
            Duration::from_secs(5),
        )
        .unwrap();
    assert_eq!(outcome.stdout_text().trim(), "started");
    assert_eq!(
        host_processes_with("1000.4242").len(),
        1,
        "the background sleep should be running"
    );
    assert_eq!(host_processes_with("1000.4343").len(), 1);
    workspace.destroy().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !host_processes_with("1000.4").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        host_processes_with("1000.4").is_empty(),
        "a background process outlived its rollout"
    );
}

#[test]
fn a_timeout_kills_grandchildren_even_in_new_sessions() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let started = Instant::now();
    let outcome = workspace
        .sandbox()
        .run(
            "setsid sh -c 'sleep 1000.5151' & (sh -c 'sleep 1000.5252') & sleep 1000.5353",
            Duration::from_millis(500),
        )
        .unwrap();
    assert!(outcome.timed_out);
    assert_eq!(outcome.shell_status(), 124);
    assert!(started.elapsed() < Duration::from_secs(3));
    let deadline = Instant::now() + Duration::from_secs(2);
    while !host_processes_with("1000.5").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        host_processes_with("1000.5").is_empty(),
        "a grandchild survived the timeout"
    );
    let after = workspace
        .sandbox()
        .run("echo still-usable", Duration::from_secs(5))
        .unwrap();
    assert_eq!(after.stdout_text().trim(), "still-usable");
}

#[test]
fn commands_cannot_change_the_base_the_host_or_another_workspace() {
    let fixture = Fixture::new();
    let base = fixture.base();
    let first = fixture.workspace(isolated());
    let second = fixture.workspace(isolated());
    let cache = fixture.cache.root().display().to_string();
    let attack = format!(
        "echo changed > a.txt; rm pkg/mod.py; echo new > new.txt; \
         echo x > {base}/a.txt; echo x > {cache}/x; echo x > /etc/swerve-test; touch /usr/swerve-test; \
         ls {cache} | wc -l",
        base = base.path.display()
    );
    let outcome = first
        .sandbox()
        .run(&attack, Duration::from_secs(5))
        .unwrap();
    assert_eq!(
        outcome.stdout_text().trim(),
        "0",
        "the cache must be hidden: {}",
        outcome.stderr_text()
    );
    assert_eq!(
        std::fs::read_to_string(first.host_root().join("a.txt")).unwrap(),
        "changed\n"
    );
    assert_eq!(
        std::fs::read_to_string(base.path.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
    assert!(base.path.join("pkg/mod.py").exists());
    assert!(!base.path.join("new.txt").exists());
    assert!(!std::path::Path::new("/etc/swerve-test").exists());
    assert!(!std::path::Path::new("/usr/swerve-test").exists());
    let seen = second
        .sandbox()
        .run("cat a.txt; ls new.txt 2>&1; ls pkg", Duration::from_secs(5))
        .unwrap();
    assert_eq!(
        seen.stdout_text(),
        "one\ntwo\nthree\nls: cannot access 'new.txt': No such file or directory\nmod.py\n"
    );
}

#[test]
fn a_fork_bomb_is_stopped_by_the_process_limit() {
    let fixture = Fixture::new();
    let limits = Limits {
        max_processes: Some(64),
        ..Limits::default()
    };
    let workspace = fixture.workspace(SandboxConfig {
        limits,
        ..isolated()
    });
    assert_limits_enforced(&workspace);
    let outcome = workspace
        .sandbox()
        .run(
            "bomb() { bomb | bomb & }; bomb; sleep 2; echo survived-bomb",
            Duration::from_secs(4),
        )
        .unwrap();
    assert!(
        outcome.stderr_text().contains("fork") || outcome.stderr_text().contains("Resource"),
        "{}",
        outcome.stderr_text()
    );
    // The host can still start processes, and the sandbox recovers once the bomb is killed.
    assert!(
        std::process::Command::new("true")
            .status()
            .unwrap()
            .success()
    );
    let after = workspace
        .sandbox()
        .run("echo alive", Duration::from_secs(10))
        .unwrap();
    assert_eq!(
        after.stdout_text().trim(),
        "alive",
        "{}",
        after.stderr_text()
    );
}

#[test]
fn a_memory_hog_is_killed_by_the_memory_limit() {
    let fixture = Fixture::new();
    let limits = Limits {
        memory_bytes: Some(128 << 20),
        ..Limits::default()
    };
    let workspace = fixture.workspace(SandboxConfig {
        limits,
        ..isolated()
    });
    assert_limits_enforced(&workspace);
    let outcome = workspace
        .sandbox()
        .run(
            "python3 -c \"b = b'x' * (1024 * 1024 * 1024); print('allocated')\"",
            Duration::from_secs(60),
        )
        .unwrap();
    assert!(!outcome.success());
    assert!(!outcome.stdout_text().contains("allocated"));
    assert!(
        outcome.signal == Some(9)
            || outcome.exit_code == Some(137)
            || outcome.stderr_text().contains("MemoryError"),
        "{outcome:?}"
    );
    let after = workspace
        .sandbox()
        .run("echo alive", Duration::from_secs(5))
        .unwrap();
    assert_eq!(after.stdout_text().trim(), "alive");
}

#[test]
fn the_repository_is_always_at_the_same_path() {
    let fixture = Fixture::new();
    let first = fixture.workspace(isolated());
    let second = fixture.workspace(isolated());
    for workspace in [&first, &second] {
        let outcome = workspace
            .sandbox()
            .run("pwd; ls /testbed/a.txt", Duration::from_secs(5))
            .unwrap();
        assert_eq!(outcome.stdout_text(), "/testbed\n/testbed/a.txt\n");
    }
}

#[test]
fn secrets_in_the_host_environment_are_not_passed_to_commands() {
    let fixture = Fixture::new();
    // SAFETY: no other thread of this test binary reads this variable.
    unsafe { std::env::set_var("OPENAI_API_KEY", "sk-secret-for-test") };
    let workspace = fixture.workspace(isolated());
    let outcome = workspace
        .sandbox()
        .run("env", Duration::from_secs(5))
        .unwrap();
    assert!(!outcome.stdout_text().contains("sk-secret-for-test"));
    assert!(outcome.stdout_text().contains("PATH="));
}

#[test]
fn commands_inherit_only_standard_input_output_and_error() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    // `ls` lists the shell's descriptors: anything beyond 0-2 (the sandbox's control socket,
    // say) would let the agent talk to the init or reach host files.
    let outcome = workspace
        .sandbox()
        .run(
            "ls /proc/$$/fd; readlink /proc/$$/fd/0",
            Duration::from_secs(5),
        )
        .unwrap();
    let listing = outcome.stdout_text();
    assert_eq!(listing, "0\n1\n2\n/dev/null\n", "{}", outcome.stderr_text());
}

/// Runs `command` in `workspace` (10 s limit).
fn run(workspace: &Workspace, command: &str) -> swerve_core::ExecOutcome {
    workspace
        .sandbox()
        .run(command, Duration::from_secs(10))
        .unwrap()
}

/// A host file the sandbox must not read: planted by the test where it can (as root), else
/// by `scripts/rootless-tests.sh`, which names it in `variable`.
fn planted_secret(path: &std::path::Path, variable: &str) -> Option<std::path::PathBuf> {
    if nix::unistd::Uid::effective().is_root() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "swerve-planted-secret\n").unwrap();
        return Some(path.to_path_buf());
    }
    let planted = std::env::var_os(variable).map(std::path::PathBuf::from);
    if planted.is_none() {
        eprintln!(
            "{variable} is not set: run this test as root or through scripts/rootless-tests.sh"
        );
    }
    planted
}

#[test]
fn a_command_cannot_write_kernel_settings() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let before = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    // Writes back the current value, so a wrong success changes nothing on the host.
    let outcome = run(
        &workspace,
        "cat /proc/sys/kernel/core_pattern > /tmp/value && cat /tmp/value > /proc/sys/kernel/core_pattern && echo wrote; \
         cat /proc/sys/kernel/hostname > /tmp/name && cat /tmp/name > /proc/sys/kernel/hostname && echo wrote-hostname; \
         echo 1 > /proc/sysrq-trigger && echo wrote-sysrq; \
         echo 1 > /sys/kernel/profiling && echo wrote-sys",
    );
    assert!(
        !outcome.stdout_text().contains("wrote"),
        "{}",
        outcome.stdout_text()
    );
    assert!(
        outcome.stderr_text().contains("Read-only file system"),
        "{}",
        outcome.stderr_text()
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap(),
        before
    );
}

#[test]
fn host_files_outside_the_task_are_invisible() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME is set"));
    let stamp = std::process::id();
    let in_home = planted_secret(
        &home.join(format!(".swerve-secret-{stamp}")),
        "SWERVE_TEST_SECRET_IN_HOME_UNUSED",
    )
    .or_else(|| {
        // Without root the test's own HOME is still the invoking user's home.
        let path = home.join(format!(".swerve-secret-{stamp}"));
        std::fs::write(&path, "swerve-planted-secret\n").ok()?;
        Some(path)
    })
    .expect("a secret in the invoking user's home");
    let in_root = planted_secret(
        std::path::Path::new(&format!("/root/.swerve-secret-{stamp}")),
        "SWERVE_TEST_SECRET_IN_ROOT",
    );
    let top_level = planted_secret(
        std::path::Path::new(&format!("/swerve-secret-{stamp}/secret")),
        "SWERVE_TEST_SECRET_TOP_LEVEL",
    );
    let targets: Vec<&std::path::PathBuf> = [Some(&in_home), in_root.as_ref(), top_level.as_ref()]
        .into_iter()
        .flatten()
        .collect();
    assert!(
        nix::unistd::Uid::effective().is_root() || targets.len() == 3,
        "the rootless run must plant every secret"
    );
    let command: String = targets
        .iter()
        .map(|path| format!("cat {} 2>&1; ls {} 2>&1; ", path.display(), path.parent().unwrap().display()))
        .chain(["ls -A / /root /home /mnt /media /srv /opt /work 2>&1; cat /etc/shadow 2>&1; ls /etc/ssh /etc/ssl/private 2>&1".into()])
        .collect();
    let outcome = run(&workspace, &command);
    let seen = outcome.stdout_text();
    let _ = std::fs::remove_file(&in_home);
    if nix::unistd::Uid::effective().is_root() {
        let _ = std::fs::remove_file(format!("/root/.swerve-secret-{stamp}"));
        let _ = std::fs::remove_dir_all(format!("/swerve-secret-{stamp}"));
    }
    assert!(!seen.contains("swerve-planted-secret"), "{seen}");
    // `ls` of the secrets' directories must not list them (error messages name them).
    assert!(
        !seen
            .lines()
            .any(|line| line.starts_with(".swerve-secret-") || line.starts_with("swerve-secret-")),
        "{seen}"
    );
    if common::in_image() {
        // The image's own `/etc/shadow` (and top-level directories) are the image's, not
        // the host's: the host's shadow must not be what the command read.
        if let Ok(host_shadow) = std::fs::read_to_string("/etc/shadow")
            && let Some(root_line) = host_shadow.lines().find(|line| line.starts_with("root:"))
        {
            let image_shadow = outcome.stdout_text();
            assert!(
                !image_shadow.contains(root_line) || root_line.starts_with("root:*:"),
                "the host's /etc/shadow was readable: {seen}"
            );
        }
        assert!(seen.contains("\n/:\n"), "{seen}");
        return;
    }
    assert!(
        seen.contains("cat: /etc/shadow: No such file or directory"),
        "/etc/shadow was readable: {seen}"
    );
    let top: Vec<&str> = seen
        .lines()
        .skip_while(|line| *line != "/:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .collect();
    for entry in &top {
        assert!(
            [
                "bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "root", "run",
                "sbin", "sys", "testbed", "tmp", "usr", "var"
            ]
            .contains(entry),
            "unexpected top-level entry {entry}: {seen}"
        );
    }
    assert!(top.contains(&"testbed"), "{seen}");
}

#[test]
fn home_is_private_and_writable() {
    let fixture = Fixture::new();
    let first = fixture.workspace(isolated());
    let second = fixture.workspace(isolated());
    let outcome = run(
        &first,
        "echo $HOME && mkdir -p ~/.cache/tool && echo kept > ~/.cache/tool/state && cat ~/.cache/tool/state",
    );
    assert_eq!(
        outcome.stdout_text(),
        "/root\nkept\n",
        "{}",
        outcome.stderr_text()
    );
    let other = run(&second, "ls -A ~/.cache 2>&1 || true");
    assert!(
        !other.stdout_text().contains("tool"),
        "{}",
        other.stdout_text()
    );
}

#[test]
fn mounting_and_leaving_the_root_are_refused() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let outcome = run(
        &workspace,
        "mkdir -p /tmp/m; mount -t tmpfs none /tmp/m && echo mounted; \
         umount /testbed && echo unmounted; umount -l /proc && echo unmounted-proc; \
         mkdir -p /tmp/new/old; pivot_root /tmp/new /tmp/new/old && echo pivoted; \
         unshare -U true && echo new-userns; unshare -m true && echo new-mountns; \
         ls /testbed/a.txt",
    );
    let stdout = outcome.stdout_text();
    for done in [
        "mounted",
        "unmounted",
        "pivoted",
        "new-userns",
        "new-mountns",
    ] {
        assert!(
            !stdout.lines().any(|line| line == done),
            "{done}: {stdout}{}",
            outcome.stderr_text()
        );
    }
    assert!(stdout.ends_with("/testbed/a.txt\n"), "{stdout}");
}

#[test]
fn kernel_modules_devices_and_the_kernel_log_are_out_of_reach() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    // init_module, finit_module, kexec_load, bpf, perf_event_open, keyctl, syslog: each
    // must fail with EPERM (1) whatever its arguments.
    let syscalls = "import ctypes, os\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        calls = {'init_module': 175, 'finit_module': 313, 'kexec_load': 246, 'bpf': 321, \
        'perf_event_open': 298, 'keyctl': 250, 'syslog': 103, 'open_by_handle_at': 304}\n\
        for name, number in sorted(calls.items()):\n\
        \x20   result = libc.syscall(number, 0, 0, 0, 0, 0)\n\
        \x20   print(name, result, ctypes.get_errno())\n";
    let command = format!(
        "mknod /tmp/disk b 8 0 && echo made-device; ls /dev; dmesg >/dev/null 2>&1 && echo read-log; \
         test -n \"$(timeout 2 head -c1 /proc/kmsg 2>/dev/null)\" && echo read-kmsg; \
         cat /proc/kcore 2>/dev/null | head -c1 | wc -c; \
         python3 -c \"$(printf '%s' '{}')\"",
        syscalls.replace('\'', "'\"'\"'")
    );
    let outcome = run(&workspace, &command);
    let stdout = outcome.stdout_text();
    assert!(!stdout.contains("made-device"), "{stdout}");
    assert!(!stdout.contains("read-log"), "{stdout}");
    assert!(!stdout.contains("read-kmsg"), "{stdout}");
    let devices: Vec<&str> = stdout
        .lines()
        .take_while(|line| !line.chars().all(|c| c.is_ascii_digit()))
        .collect();
    for device in &devices {
        assert!(
            [
                "full", "null", "random", "shm", "stderr", "stdin", "stdout", "fd", "tty",
                "urandom", "zero", "pts", "ptmx"
            ]
            .contains(device),
            "unexpected device {device}: {stdout}"
        );
    }
    if cfg!(target_arch = "x86_64") {
        for call in [
            "bpf",
            "finit_module",
            "init_module",
            "kexec_load",
            "keyctl",
            "open_by_handle_at",
            "perf_event_open",
            "syslog",
        ] {
            assert!(
                stdout.contains(&format!("{call} -1 1\n")),
                "{call} was not refused with EPERM: {stdout}{}",
                outcome.stderr_text()
            );
        }
    }
}

/// Makes each system call of `calls` (`name number args`, one per line; `args` a Python
/// tuple, `FDCWD` standing for `AT_FDCWD`, `BUF` for a zeroed 120-byte buffer and `IOV` for
/// one `iovec` of 64 bytes) with `syscall(2)` in the sandbox, and returns each name's result
/// and `errno`.
fn raw_syscalls(workspace: &Workspace, calls: &str) -> BTreeMap<String, (i64, i32)> {
    let outcome = run(
        workspace,
        &format!(
            "cat > /tmp/calls.py <<'EOF'\n{}EOF\npython3 /tmp/calls.py",
            syscall_script(calls)
        ),
    );
    syscall_results(calls, &outcome.stdout_text(), &outcome.stderr_text())
}

/// The Python program [`raw_syscalls`] runs: each call of `calls`, in order, in one process.
fn syscall_script(calls: &str) -> String {
    format!(
        "import ctypes, os\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.syscall.restype = ctypes.c_long\n\
         FDCWD, BUF = -100, ctypes.create_string_buffer(120)\n\
         SCRATCH = ctypes.create_string_buffer(64)\n\
         IOV = (ctypes.c_void_p * 2)(ctypes.addressof(SCRATCH), 64)\n\
         for line in '''{calls}'''.strip().splitlines():\n\
         \x20   name, number, args = line.split(None, 2)\n\
         \x20   args = [ctypes.c_long(a) if isinstance(a, int) else a for a in eval(args)]\n\
         \x20   ctypes.set_errno(0)\n\
         \x20   print(name, libc.syscall(ctypes.c_long(int(number)), *args), ctypes.get_errno(), flush=True)\n"
    )
}

/// Each name's result and `errno` from the output of [`syscall_script`]; every call of
/// `calls` must have answered.
fn syscall_results(calls: &str, stdout: &str, stderr: &str) -> BTreeMap<String, (i64, i32)> {
    let results: BTreeMap<String, (i64, i32)> = stdout
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?.to_owned();
            Some((
                name,
                (words.next()?.parse().ok()?, words.next()?.parse().ok()?),
            ))
        })
        .collect();
    assert_eq!(
        results.len(),
        calls.trim().lines().count(),
        "{stdout}{stderr}"
    );
    results
}

#[test]
fn io_uring_userfaultfd_and_the_new_mount_api_are_refused() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let arm = cfg!(target_arch = "aarch64");
    // getpid and personality's query are allowed: they show the probe itself works.
    // io_uring_setup(8, params) returns a ring where the kernel allows io_uring (Docker's
    // profile refuses it since 25.0); userfaultfd with UFFD_USER_MODE_ONLY needs no
    // privilege; then the new mount API, a socket to the hypervisor (AF_VSOCK) and unshare
    // (CLONE_FILES, which needs no privilege). fchmodat2, newer than the list, fails with
    // ENOSYS so the C library falls back to fchmodat.
    let calls = format!(
        "getpid {getpid} ()\n\
         personality {personality} (0xffffffff,)\n\
         io_uring_setup 425 (8, BUF)\n\
         io_uring_enter 426 (0, 1, 0, 0, None, 0)\n\
         io_uring_register 427 (0, 0, None, 0)\n\
         userfaultfd {userfaultfd} (0o2000000 | 1,)\n\
         open_tree 428 (FDCWD, b'/testbed', 1)\n\
         move_mount 429 (FDCWD, b'/tmp', FDCWD, b'/testbed', 0)\n\
         fsopen 430 (b'tmpfs', 0)\n\
         fsconfig 431 (0, 0, None, None, 0)\n\
         fsmount 432 (0, 0, 0)\n\
         fspick 433 (FDCWD, b'/testbed', 0)\n\
         mount_setattr 442 (FDCWD, b'/testbed', 0, None, 0)\n\
         vsock {socket} (40, 1, 0)\n\
         unshare {unshare} (0x400,)\n\
         fchmodat2 452 (FDCWD, b'/tmp', 0o755, 0)\n",
        getpid = if arm { 172 } else { 39 },
        personality = if arm { 92 } else { 135 },
        userfaultfd = if arm { 282 } else { 323 },
        socket = if arm { 198 } else { 41 },
        unshare = if arm { 97 } else { 272 },
    );
    let results = raw_syscalls(&workspace, &calls);
    assert!(results["getpid"].0 > 0, "{results:?}");
    assert!(results["personality"].0 >= 0, "{results:?}");
    for call in [
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "userfaultfd",
        "open_tree",
        "move_mount",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
        "vsock",
        "unshare",
    ] {
        assert_eq!(
            results[call],
            (-1, libc::EPERM),
            "{call} was not refused with EPERM: {results:?}"
        );
    }
    assert_eq!(results["fchmodat2"], (-1, libc::ENOSYS), "{results:?}");
}

#[test]
fn host_processes_cannot_be_signalled_or_traced() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let mut host = std::process::Command::new("sleep")
        .arg("1000.6161")
        .spawn()
        .unwrap();
    let pid = host.id();
    let outcome = run(
        &workspace,
        &format!(
            "kill -9 {pid} && echo killed; ls /proc | grep -x {pid} && echo visible; \
             python3 -c \"import ctypes; libc = ctypes.CDLL(None, use_errno=True); \
             print('traced' if libc.ptrace(16, {pid}, 0, 0) == 0 else 'refused')\""
        ),
    );
    let still_running = host.try_wait().unwrap().is_none();
    let _ = host.kill();
    let _ = host.wait();
    assert!(
        still_running,
        "the host process was killed from the sandbox"
    );
    let stdout = outcome.stdout_text();
    assert!(!stdout.contains("killed"), "{stdout}");
    assert!(!stdout.contains("visible"), "{stdout}");
    assert!(
        stdout.contains("refused"),
        "{stdout}{}",
        outcome.stderr_text()
    );
}

#[test]
fn commands_hold_no_host_privilege() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace(isolated());
    let outcome = run(
        &workspace,
        "cat /proc/self/uid_map; grep -E '^(CapBnd|NoNewPrivs|Seccomp):' /proc/self/status",
    );
    let stdout = outcome.stdout_text();
    let mut map = stdout.lines().next().unwrap().split_whitespace();
    assert_eq!(map.next(), Some("0"), "{stdout}");
    let host_root_of_sandbox: u32 = map.next().unwrap().parse().unwrap();
    if nix::unistd::Uid::effective().is_root() {
        assert_ne!(
            host_root_of_sandbox, 0,
            "the sandbox's root is host root: {stdout}"
        );
    } else {
        assert_eq!(host_root_of_sandbox, nix::unistd::geteuid().as_raw());
    }
    assert!(stdout.contains("NoNewPrivs:\t1"), "{stdout}");
    assert!(stdout.contains("Seccomp:\t2"), "{stdout}");
    let bounding = stdout
        .lines()
        .find_map(|line| line.strip_prefix("CapBnd:\t"))
        .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
        .unwrap();
    const CAP_SYS_ADMIN: u64 = 1 << 21;
    const CAP_SYS_MODULE: u64 = 1 << 16;
    const CAP_SYS_PTRACE: u64 = 1 << 19;
    assert_eq!(
        bounding & (CAP_SYS_ADMIN | CAP_SYS_MODULE | CAP_SYS_PTRACE),
        0,
        "{stdout}"
    );
}

#[test]
fn a_setuid_root_program_gives_no_privilege() {
    let fixture = Fixture::new();
    let dir = tempfile::tempdir_in(fixture.dir.path()).unwrap();
    let program = if nix::unistd::Uid::effective().is_root() {
        let program = dir.path().join("id");
        std::fs::copy("/usr/bin/id", &program).unwrap();
        std::os::unix::fs::chown(&program, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o4755),
        )
        .unwrap();
        Some(program)
    } else {
        std::env::var_os("SWERVE_TEST_SETUID_ID").map(std::path::PathBuf::from)
    };
    let Some(program) = program else {
        panic!(
            "SWERVE_TEST_SETUID_ID is not set: run as root or through scripts/rootless-tests.sh"
        );
    };
    std::fs::set_permissions(
        program.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .ok();
    let workspace = fixture.workspace(SandboxConfig {
        expose: vec![swerve_sandbox::Exposure::read_only(
            program.parent().unwrap(),
        )],
        ..isolated()
    });
    // As root, run it as another sandbox user (the range maps 1000); unprivileged, the one
    // id there is. Either way the effective id must not change.
    let command = if nix::unistd::Uid::effective().is_root() {
        format!(
            "setpriv --reuid=1000 --regid=1000 --clear-groups -- sh -c 'id -u; {} -u'",
            program.display()
        )
    } else {
        format!("id -u; {} -u", program.display())
    };
    let outcome = run(&workspace, &command);
    let ids: Vec<&str> = outcome.stdout_text().leak().lines().collect();
    assert_eq!(ids.len(), 2, "{ids:?} {}", outcome.stderr_text());
    assert_eq!(
        ids[0], ids[1],
        "the setuid program changed the effective user"
    );
}

#[test]
fn a_command_filling_the_disk_is_stopped_at_the_quota() {
    let fixture = Fixture::new();
    let limits = Limits {
        disk_bytes: Some(32 << 20),
        ..Limits::default()
    };
    let workspace = fixture.workspace(SandboxConfig {
        limits,
        ..isolated()
    });
    // One file past the quota: stopped by the file size limit.
    let one = run(
        &workspace,
        "head -c 48M /dev/zero > big; ls -s --block-size=M big",
    );
    assert_eq!(one.disk_limit, Some(32 << 20), "{one:?}");
    assert!(
        one.stderr_text()
            .contains("disk quota of 32 MiB (disk_limit)"),
        "{}",
        one.stderr_text()
    );
    run(&workspace, "rm -f big");
    // Many files, and a writer left running in the background: stopped by the watchdog.
    let many = workspace
        .sandbox()
        .run(
            "(i=0; while true; do i=$((i+1)); head -c 4M /dev/zero > f$i || exit; done) & sleep 30",
            Duration::from_secs(60),
        )
        .unwrap();
    assert_eq!(many.disk_limit, Some(32 << 20), "{many:?}");
    assert!(
        many.duration < Duration::from_secs(20),
        "{:?}",
        many.duration
    );
    let after = run(&workspace, "du -sm . | cut -f1");
    let used: u64 = after.stdout_text().trim().parse().unwrap();
    // Unchecked, the writer would have written for 30 s (gigabytes); the watchdog lets
    // through what the page cache takes between two checks, more on a loaded machine.
    assert!(used < 32 + 256, "{used} MiB written past a 32 MiB quota");
    // Freeing space makes the workspace usable again.
    let freed = run(&workspace, "rm -f f*; echo ok > small; cat small");
    assert_eq!(freed.stdout_text(), "ok\n", "{}", freed.stderr_text());
    assert_eq!(freed.disk_limit, None);
    // A writer left behind by a command that already ended is stopped between commands, and
    // the next command hears of it.
    let left = run(
        &workspace,
        "(i=0; while true; do i=$((i+1)); head -c 4M /dev/zero > g$i || exit; done) >/dev/null 2>&1 & echo started",
    );
    assert_eq!(left.stdout_text(), "started\n");
    std::thread::sleep(Duration::from_secs(3));
    let next = run(&workspace, "ls g* | wc -l; sleep 0.5; ls g* | wc -l");
    let counts: Vec<&str> = next.stdout_text().leak().lines().collect();
    assert_eq!(counts.len(), 2, "{next:?}");
    assert_eq!(
        counts[0], counts[1],
        "the writer is still running: {next:?}"
    );
    assert_eq!(next.disk_limit, Some(32 << 20), "{next:?}");
}
