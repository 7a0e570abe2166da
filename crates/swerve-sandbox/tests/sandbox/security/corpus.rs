//! The adversarial corpus beyond single system calls: each test is one attack, made by a real
//! program in a real sandbox, with the verdict it must get checked in the sandbox (a specific
//! `errno`) and, where the attack aims at the host, on the host (nothing changed). Each test's
//! doc names the threat and the anchor (the mechanism that stops it); `docs/security.md`
//! tables them. Every case holds as root, as `nobody` and in an image's root unless its doc
//! says otherwise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{self, Fixture, isolated};
use swerve_core::{ExecOutcome, Shell};
use swerve_sandbox::{Exposure, Limits, PatchOptions, SandboxConfig, Workspace};

/// A fresh workspace (first, so it is dropped before its fixture).
fn sandbox_with(config: SandboxConfig) -> (Workspace, Fixture) {
    let fixture = Fixture::new();
    (fixture.workspace(config), fixture)
}

fn sandbox() -> (Workspace, Fixture) {
    sandbox_with(isolated())
}

/// Helpers every Python probe starts with: `attempt(name, f)` prints `name ok` or
/// `name ERRNO`; `write(path, text)` returns a function writing `text` to `path`.
const PRELUDE: &str = "import os, sys, ctypes, socket, struct, fcntl\n\
def attempt(name, f):\n\
\x20   try:\n\
\x20       f()\n\
\x20       print(name, 'ok', flush=True)\n\
\x20   except OSError as e:\n\
\x20       print(name, e.errno, flush=True)\n\
def write(path, text):\n\
\x20   def f():\n\
\x20       with open(path, 'w') as handle:\n\
\x20           handle.write(text)\n\
\x20   return f\n";

/// Runs Python `program` (after [`PRELUDE`]) in `workspace`.
fn python(workspace: &Workspace, program: &str) -> ExecOutcome {
    super::run(
        workspace,
        &format!("cat > /tmp/probe.py <<'EOF'\n{PRELUDE}{program}\nEOF\npython3 /tmp/probe.py"),
    )
}

/// The `name value` lines of a probe's output, by name.
fn answers(outcome: &ExecOutcome) -> BTreeMap<String, String> {
    outcome
        .stdout_text()
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(' ')?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// Asserts each `(name, errno)` of `expected` is what the probe answered.
fn assert_errnos(outcome: &ExecOutcome, expected: &[(&str, i32)]) {
    let got = answers(outcome);
    for (name, errno) in expected {
        assert_eq!(
            got.get(*name).map(String::as_str),
            Some(errno.to_string().as_str()),
            "{name}: expected errno {errno}; stdout:\n{}stderr:\n{}",
            outcome.stdout_text(),
            outcome.stderr_text()
        );
    }
}

/// The host id of the sandbox's root: what its files are owned by on the host.
fn sandbox_root_on_host(workspace: &Workspace) -> u32 {
    let outcome = super::run(workspace, "cat /proc/self/uid_map");
    let map = outcome.stdout_text();
    let mut words = map.split_whitespace();
    assert_eq!(words.next(), Some("0"), "{map}");
    words.next().unwrap().parse().unwrap()
}

/// Files under `dir` on the host, recursively (symlinks not followed).
fn host_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path.clone());
            }
            found.push(path);
        }
    }
    found
}

/// A host file's extended attribute, if it has it.
fn host_xattr(path: &Path, name: &str) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let name = std::ffi::CString::new(name).unwrap();
    let mut buffer = vec![0u8; 256];
    // SAFETY: both strings are NUL-terminated and the buffer's length is passed.
    let size = unsafe {
        libc::lgetxattr(
            path.as_ptr(),
            name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    (size >= 0).then(|| buffer[..size as usize].to_vec())
}

// --- runc (CVE-2019-5736): overwriting the runtime's binary through /proc ---

/// Threat: CVE-2019-5736 (runc): a command opens the binary it runs through `/proc/self/exe`
/// for writing, to overwrite a host binary. Anchor: read-only system directories (and the
/// kernel's `ETXTBSY`). Verdict: `EACCES`/`EROFS`/`ETXTBSY`, and the binary's bytes are
/// unchanged.
#[test]
fn proc_self_exe_cannot_be_opened_for_writing() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "import hashlib\n\
         before = hashlib.sha256(open('/proc/self/exe', 'rb').read()).hexdigest()\n\
         attempt('write', lambda: os.open('/proc/self/exe', os.O_WRONLY))\n\
         attempt('append', lambda: os.open(os.path.realpath('/proc/self/exe'), os.O_WRONLY | os.O_APPEND))\n\
         print('same', hashlib.sha256(open('/proc/self/exe', 'rb').read()).hexdigest() == before)",
    );
    let got = answers(&outcome);
    for attempt in ["write", "append"] {
        let errno: i32 = got
            .get(attempt)
            .and_then(|errno| errno.parse().ok())
            .unwrap_or_else(|| panic!("{attempt} opened: {got:?} {}", outcome.stderr_text()));
        assert!(
            [libc::EACCES, libc::EROFS, libc::ETXTBSY].contains(&errno),
            "{attempt}: {errno}"
        );
    }
    assert_eq!(got["same"], "True");
}

/// Threat: CVE-2019-5736's other half: reaching the sandbox's PID 1 (a host binary, swerve's
/// init) through `/proc/1/exe`, to open it and rewrite it once it exits. Anchor: PID 1 is not
/// dumpable (it makes itself so before any command starts; as root, changing ids entering the
/// sandbox did too), so its `/proc` entries belong to host root and need `CAP_SYS_PTRACE` in
/// the host's user namespace. Verdict in every mode: `EACCES` for `readlink`, read, write,
/// `O_PATH` and `map_files`, and the host's binary unchanged.
#[test]
fn the_init_binary_is_out_of_reach_through_proc_1_exe() {
    let (workspace, _fixture) = sandbox();
    let binary = std::fs::read_link("/proc/self/exe").unwrap();
    let before = std::fs::metadata(&binary).unwrap().modified().unwrap();
    let outcome = python(
        &workspace,
        "attempt('readlink', lambda: os.readlink('/proc/1/exe'))\n\
         attempt('read', lambda: os.open('/proc/1/exe', os.O_RDONLY))\n\
         attempt('write', lambda: os.open('/proc/1/exe', os.O_WRONLY))\n\
         attempt('path', lambda: os.open('/proc/1/exe', os.O_PATH))\n\
         attempt('map_files', lambda: os.listdir('/proc/1/map_files'))",
    );
    assert_errnos(
        &outcome,
        &[
            ("readlink", libc::EACCES),
            ("read", libc::EACCES),
            ("write", libc::EACCES),
            ("path", libc::EACCES),
            ("map_files", libc::EACCES),
        ],
    );
    assert_eq!(
        std::fs::metadata(&binary).unwrap().modified().unwrap(),
        before
    );
}

/// Threat: taking over the sandbox's PID 1 (which holds the channel to the host and outlives
/// every command) with `ptrace`, `process_vm_writev` or `/proc/1/mem`, to forge later
/// commands' results (or its descriptors, `/proc/1/fd`). Anchor: PID 1 makes itself
/// non-dumpable before any command starts, and
/// `CAP_SYS_PTRACE` is dropped: a non-dumpable process may be traced only with that
/// capability in the user namespace of its memory, which is the host's (as `nobody` PID 1
/// keeps the invoking user's id, the same as every command's, so the dumpable flag is what
/// stands). Verdict in every mode: `EPERM` (`EACCES` for `/proc/1/mem` and `/proc/1/fd`).
/// Control: the same
/// calls against a dumpable process of the command's own (a forked copy of the probe)
/// succeed, so the refusals come from PID 1's state, not from the filter or a missing call.
#[test]
fn the_sandbox_init_cannot_be_traced_or_written() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "import time\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         def call(name, *args):\n\
         \x20   ctypes.set_errno(0)\n\
         \x20   result = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])\n\
         \x20   print(name, 'ok' if result >= 0 else ctypes.get_errno(), flush=True)\n\
         buf = ctypes.create_string_buffer(64)\n\
         iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)\n\
         def probe(prefix, pid):\n\
         \x20   call(prefix + 'seize', 101, 0x4206, pid, 0, 0)\n\
         \x20   call(prefix + 'attach', 101, 16, pid, 0, 0)\n\
         \x20   call(prefix + 'vm_write', 311, pid, iov, 1, iov, 1, 0)\n\
         \x20   call(prefix + 'vm_read', 310, pid, iov, 1, iov, 1, 0)\n\
         \x20   attempt(prefix + 'mem', lambda: os.close(os.open('/proc/%d/mem' % pid, os.O_RDWR)))\n\
         \x20   attempt(prefix + 'fd', lambda: os.listdir('/proc/%d/fd' % pid))\n\
         probe('', 1)\n\
         child = os.fork()\n\
         if child == 0:\n\
         \x20   time.sleep(60)\n\
         \x20   os._exit(0)\n\
         probe('control_', child)\n\
         os.kill(child, 9)\n\
         os.waitpid(child, 0)",
    );
    assert_errnos(
        &outcome,
        &[
            ("seize", libc::EPERM),
            ("attach", libc::EPERM),
            ("vm_write", libc::EPERM),
            ("vm_read", libc::EPERM),
            ("mem", libc::EACCES),
            ("fd", libc::EACCES),
        ],
    );
    let got = answers(&outcome);
    for control in [
        "control_seize",
        "control_vm_write",
        "control_vm_read",
        "control_mem",
        "control_fd",
    ] {
        assert_eq!(
            got.get(control).map(String::as_str),
            Some("ok"),
            "{control}: {got:?} {}",
            outcome.stderr_text()
        );
    }
}

// --- overlayfs (CVE-2021-3493, CVE-2023-0386): privileges through copy-up and xattrs ---

/// Threat: CVE-2023-0386 style: a set-user-id file made or copied up in the repository's
/// overlay lands on the host's disk owned by host root, runnable from the host. Anchor: user
/// namespace (the sandbox's root is an unprivileged host id; files it makes are that id's).
/// Verdict: no file of the workspace's layers on the host is set-user-id and owned by host
/// root.
#[test]
fn a_setuid_file_in_the_overlay_is_not_host_roots() {
    let (workspace, fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "chmod u+s,g+s script.sh a.txt && cp /bin/true suid && chmod 6755 suid && \
         mkdir -p ~/bin && cp /bin/true ~/bin/suid && chmod 6755 ~/bin/suid && echo made",
    );
    assert_eq!(outcome.stdout_text(), "made\n", "{}", outcome.stderr_text());
    let owner = sandbox_root_on_host(&workspace);
    assert_ne!(owner, 0);
    let mut seen = 0;
    for path in host_files(fixture.dir.path()) {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let mode = std::os::unix::fs::PermissionsExt::mode(&metadata.permissions());
        if mode & 0o6000 != 0 {
            seen += 1;
            let uid = std::os::unix::fs::MetadataExt::uid(&metadata);
            assert_ne!(uid, 0, "{} is set-user-id and host root's", path.display());
            assert_eq!(uid, owner, "{}", path.display());
        }
    }
    // The copies exist on the host (in the layer, and in HOME), so the check saw them.
    assert!(seen >= 3, "only {seen} set-id files found on the host");
}

/// Threat: CVE-2021-3493 style: a file capability (`security.capability`, say
/// `CAP_SYS_ADMIN`) set inside lands on the host's disk as one the host honours. Anchor: user
/// namespace (the kernel writes a namespaced v3 capability whose root is the sandbox's root);
/// everything writable is `nosuid`. Verdict: the host's copy is a v3 capability for the
/// sandbox's root id, never host root's.
#[test]
fn a_file_capability_set_inside_is_not_the_hosts() {
    let (workspace, _fixture) = sandbox();
    // A v2 capability: CAP_SYS_ADMIN (bit 21) permitted, effective flag set.
    let outcome = python(
        &workspace,
        "open('/testbed/capfile', 'w').write('x')\n\
         value = struct.pack('<IIIII', 0x02000001, 1 << 21, 0, 0, 0)\n\
         attempt('setcap', lambda: os.setxattr('/testbed/capfile', 'security.capability', value))",
    );
    let got = answers(&outcome);
    if got.get("setcap").map(String::as_str) != Some("ok") {
        // Refusing it outright holds too.
        assert_eq!(
            got.get("setcap").map(String::as_str),
            Some("1"),
            "{got:?} {}",
            outcome.stderr_text()
        );
        return;
    }
    let value = host_xattr(
        &workspace.host_root().join("capfile"),
        "security.capability",
    )
    .expect("the capability reached the host file");
    assert_eq!(value.len(), 24, "not a v3 capability: {value:?}");
    let magic = u32::from_le_bytes(value[0..4].try_into().unwrap());
    let rootid = u32::from_le_bytes(value[20..24].try_into().unwrap());
    assert_eq!(magic & 0xff00_0000, 0x0300_0000, "{value:?}");
    assert_ne!(rootid, 0, "the capability is host root's");
    assert_eq!(rootid, sandbox_root_on_host(&workspace));
}

/// Threat: overlayfs's own metadata (`trusted.overlay.*`, or `user.overlay.*` on a
/// `userxattr` mount: opaque directories, redirects to other paths) forged by the model to
/// make the overlay show what is not in its layers. Anchor: `trusted.*` needs
/// `CAP_SYS_ADMIN` in the host's namespace; overlayfs refuses or escapes its own xattrs set
/// through it. Verdict: `EPERM` for `trusted.*`; `user.overlay.*` refused or stored escaped
/// (`user.overlay.overlay.*`) on the host, never as the real thing.
#[test]
fn overlay_metadata_cannot_be_forged() {
    let (workspace, fixture) = sandbox();
    let outcome = python(
        &workspace,
        "os.mkdir('/testbed/forged-opaque'); os.mkdir('/testbed/forged-redirect')\n\
         attempt('trusted_opaque', lambda: os.setxattr('/testbed/forged-opaque', 'trusted.overlay.opaque', b'y'))\n\
         attempt('trusted_redirect', lambda: os.setxattr('/testbed/forged-redirect', 'trusted.overlay.redirect', b'/pkg'))\n\
         attempt('user_opaque', lambda: os.setxattr('/testbed/forged-opaque', 'user.overlay.opaque', b'y'))\n\
         attempt('user_redirect', lambda: os.setxattr('/testbed/forged-redirect', 'user.overlay.redirect', b'/pkg'))",
    );
    assert_errnos(
        &outcome,
        &[
            ("trusted_opaque", libc::EPERM),
            ("trusted_redirect", libc::EPERM),
        ],
    );
    let got = answers(&outcome);
    for name in ["user_opaque", "user_redirect"] {
        assert!(["ok", "1"].contains(&got[name].as_str()), "{name}: {got:?}");
    }
    let forged: Vec<PathBuf> = host_files(fixture.dir.path())
        .into_iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("forged-"))
        })
        .collect();
    assert!(!forged.is_empty(), "the directories are not on the host");
    for path in forged {
        for name in [
            "user.overlay.opaque",
            "user.overlay.redirect",
            "trusted.overlay.opaque",
            "trusted.overlay.redirect",
        ] {
            assert_eq!(
                host_xattr(&path, name),
                None,
                "{} carries a real {name}",
                path.display()
            );
        }
    }
}

// --- cgroups (CVE-2022-0492): release_agent ---

/// Threat: CVE-2022-0492: mount a cgroup-v1 hierarchy and set its `release_agent` (run as
/// host root when a cgroup empties). Anchor: seccomp allowlist (`mount` refused) and user
/// namespace (a v1 hierarchy cannot be mounted from one). Verdict: the mount fails with
/// `EPERM`, no `release_agent` is reachable, the host's (where it has one) unchanged.
#[test]
fn cgroupfs_cannot_be_mounted_for_its_release_agent() {
    let (workspace, _fixture) = sandbox();
    let host_agents: Vec<(PathBuf, String)> = host_files(Path::new("/sys/fs/cgroup"))
        .into_iter()
        .filter(|path| path.ends_with("release_agent"))
        .filter_map(|path| Some((path.clone(), std::fs::read_to_string(&path).ok()?)))
        .collect();
    let outcome = python(
        &workspace,
        "libc = ctypes.CDLL(None, use_errno=True)\n\
         os.makedirs('/tmp/cg', exist_ok=True)\n\
         for controller in ['memory', 'rdma', 'pids']:\n\
         \x20   result = libc.mount(b'cgroup', b'/tmp/cg', b'cgroup', 0, controller.encode())\n\
         \x20   print('mount_' + controller, 'ok' if result == 0 else ctypes.get_errno())\n\
         result = libc.mount(b'cgroup2', b'/tmp/cg', b'cgroup2', 0, None)\n\
         print('mount_cgroup2', 'ok' if result == 0 else ctypes.get_errno())\n\
         found = [os.path.join(d, f) for d, _, fs in os.walk('/sys/fs/cgroup') for f in fs if f == 'release_agent']\n\
         print('agents', len(found))",
    );
    assert_errnos(
        &outcome,
        &[
            ("mount_memory", libc::EPERM),
            ("mount_rdma", libc::EPERM),
            ("mount_pids", libc::EPERM),
            ("mount_cgroup2", libc::EPERM),
        ],
    );
    assert_eq!(answers(&outcome)["agents"], "0");
    for (path, before) in host_agents {
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    }
}

/// Threat: writing the sandbox's own cgroup (`release_agent`, `notify_on_release`, raising
/// `pids.max` or `memory.max`, moving into another group, new child groups). Anchor: the
/// cgroup2 view at `/sys/fs/cgroup` is mounted read-only. Verdict: `EROFS` for each.
#[test]
fn the_cgroup_view_is_read_only() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "for name in ['release_agent', 'notify_on_release', 'pids.max', 'memory.max', 'cgroup.procs', 'cgroup.subtree_control']:\n\
         \x20   attempt(name, write('/sys/fs/cgroup/' + name, '1'))\n\
         attempt('mkdir', lambda: os.mkdir('/sys/fs/cgroup/child'))",
    );
    assert_errnos(
        &outcome,
        &[
            ("release_agent", libc::EROFS),
            ("notify_on_release", libc::EROFS),
            ("pids.max", libc::EROFS),
            ("memory.max", libc::EROFS),
            ("cgroup.procs", libc::EROFS),
            ("cgroup.subtree_control", libc::EROFS),
            ("mkdir", libc::EROFS),
        ],
    );
}

// --- Dirty Pipe (CVE-2022-0847) ---

/// The Dirty Pipe write: fill and drain a pipe (so its buffers are mergeable), splice one
/// byte of `path` into it, then write `payload`: on a vulnerable kernel the write lands in
/// the file's page cache although the file was opened read-only.
const DIRTY_PIPE: &str = "def dirty_pipe(path, payload):\n\
\x20   fd = os.open(path, os.O_RDONLY)\n\
\x20   r, w = os.pipe()\n\
\x20   size = fcntl.fcntl(w, 1032)\n\
\x20   os.write(w, b'x' * size)\n\
\x20   os.read(r, size)\n\
\x20   os.splice(fd, w, 1, offset_src=0)\n\
\x20   os.write(w, payload)\n\
\x20   return open(path, 'rb').read()\n";

/// Threat: CVE-2022-0847 (Dirty Pipe): overwrite a read-only file (a host file exposed
/// read-only, the base checkout under the overlay) through the page cache with `splice`.
/// Anchor: the kernel (fixed in 5.16.11, 5.15.25, 5.10.102); read-only mounts do not stop
/// page-cache writes, so on an unpatched kernel this case fails. Verdict: both files
/// unchanged, read inside and on the host.
#[test]
fn splicing_into_a_read_only_file_changes_nothing() {
    let fixture = Fixture::new();
    let exposed = tempfile::tempdir_in(fixture.dir.path()).unwrap();
    std::fs::set_permissions(
        exposed.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let target = exposed.path().join("host-file");
    std::fs::write(&target, "host file contents\n").unwrap();
    std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let base = fixture.base();
    let workspace = fixture.workspace(SandboxConfig {
        expose: vec![Exposure::read_only(exposed.path())],
        ..isolated()
    });
    let outcome = python(
        &workspace,
        &format!(
            "{DIRTY_PIPE}\
             for name, path in [('host', '{}'), ('base', '/testbed/a.txt')]:\n\
             \x20   try:\n\
             \x20       print(name, dirty_pipe(path, b'PWNED'))\n\
             \x20   except OSError as e:\n\
             \x20       print(name, e.errno)",
            target.display()
        ),
    );
    let got = answers(&outcome);
    assert!(
        got.contains_key("host") && got.contains_key("base"),
        "{got:?} {}",
        outcome.stderr_text()
    );
    assert!(!outcome.stdout_text().contains("PWNED"), "{got:?}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "host file contents\n"
    );
    assert_eq!(
        std::fs::read_to_string(base.path.join("a.txt")).unwrap(),
        "one\ntwo\nthree\n"
    );
}

// --- /proc and /sys ---

/// Writes each of `paths` from the sandbox; each must fail with `EROFS` (or, where the host's
/// kernel has no such file, `ENOENT`); at least one must exist on the host.
fn assert_read_only(workspace: &Workspace, paths: &[&str]) {
    let program: String = paths
        .iter()
        .map(|path| format!("attempt('{path}', write('{path}', '1'))\n"))
        .collect();
    let outcome = python(workspace, &program);
    let got = answers(&outcome);
    let mut refused = 0;
    for path in paths {
        let errno = got
            .get(*path)
            .unwrap_or_else(|| panic!("{path}: {got:?} {}", outcome.stderr_text()));
        if Path::new(path).exists() {
            assert_eq!(errno, &libc::EROFS.to_string(), "{path}: {got:?}");
            refused += 1;
        } else {
            assert!(
                [libc::EROFS, libc::ENOENT]
                    .map(|errno| errno.to_string())
                    .contains(errno),
                "{path}: {got:?}"
            );
        }
    }
    assert!(refused > 0, "no file of {paths:?} exists on this host");
}

/// Threat: the kernel's usermode helpers, run as host root: `core_pattern` (a pipe to a
/// program at the next crash), `modprobe` (run for an unknown binary format), the hotplug
/// `uevent_helper`, `poweroff_cmd`. Anchor: read-only `/proc/sys` and `/sys` mounts.
/// Verdict: `EROFS` (`ENOENT` for a file this kernel lacks); host values unchanged.
#[test]
fn usermode_helpers_cannot_be_replaced() {
    let (workspace, _fixture) = sandbox();
    let paths = [
        "/proc/sys/kernel/core_pattern",
        "/proc/sys/kernel/modprobe",
        "/proc/sys/kernel/poweroff_cmd",
        "/sys/kernel/uevent_helper",
    ];
    let before: Vec<Option<String>> = paths
        .iter()
        .map(|path| std::fs::read_to_string(path).ok())
        .collect();
    assert_read_only(&workspace, &paths);
    let after: Vec<Option<String>> = paths
        .iter()
        .map(|path| std::fs::read_to_string(path).ok())
        .collect();
    assert_eq!(before, after);
}

/// Threat: tuning the host's memory management (`drop_caches`, overcommit, `max_map_count`,
/// `swappiness`). Anchor: read-only `/proc/sys`. Verdict: `EROFS`; host values unchanged.
#[test]
fn proc_sys_vm_is_read_only() {
    let (workspace, _fixture) = sandbox();
    let paths = [
        "/proc/sys/vm/drop_caches",
        "/proc/sys/vm/overcommit_memory",
        "/proc/sys/vm/max_map_count",
        "/proc/sys/vm/swappiness",
    ];
    let before: Vec<Option<String>> = paths
        .iter()
        .map(|path| std::fs::read_to_string(path).ok())
        .collect();
    assert_read_only(&workspace, &paths);
    let after: Vec<Option<String>> = paths
        .iter()
        .map(|path| std::fs::read_to_string(path).ok())
        .collect();
    assert_eq!(before, after);
}

/// Threat: kernel settings under `/sys` (transparent huge pages, suspend through
/// `/sys/power/state`, profiling, the kernel's `mm` knobs). Anchor: `/sys` mounted read-only.
/// Verdict: `EROFS`.
#[test]
fn sys_kernel_and_power_are_read_only() {
    let (workspace, _fixture) = sandbox();
    assert_read_only(
        &workspace,
        &[
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "/sys/power/state",
            "/sys/kernel/profiling",
            "/sys/module/printk/parameters/time",
        ],
    );
}

/// Threat: the magic SysRq key (`/proc/sysrq-trigger` crashes or reboots the host; the
/// `kernel.sysrq` switch enables it) and `kernel.ctrl-alt-del` (what the three keys do).
/// Anchor: read-only `/proc/sysrq-trigger` and `/proc/sys`. Verdict: `EROFS` (`ENOENT` where
/// the kernel is built without SysRq).
#[test]
fn sysrq_and_ctrl_alt_del_are_out_of_reach() {
    let (workspace, _fixture) = sandbox();
    assert_read_only(
        &workspace,
        &[
            "/proc/sysrq-trigger",
            "/proc/sys/kernel/sysrq",
            "/proc/sys/kernel/ctrl-alt-del",
        ],
    );
}

/// Threat: registering a `binfmt_misc` interpreter (run with the credentials of any binary
/// it matches, for every process of the host). Anchor: read-only `/proc/sys`, and no
/// `binfmt_misc` mount (mounting is refused). Verdict: `EROFS` or `ENOENT`, nothing registered.
#[test]
fn binfmt_misc_cannot_register_an_interpreter() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "attempt('register', write('/proc/sys/fs/binfmt_misc/register', ':swerve:E::swerve::/tmp/x:'))\n\
         attempt('status', write('/proc/sys/fs/binfmt_misc/status', '1'))",
    );
    let got = answers(&outcome);
    for name in ["register", "status"] {
        assert!(
            [libc::EROFS, libc::ENOENT, libc::EACCES]
                .map(|errno| errno.to_string())
                .contains(&got[name]),
            "{name}: {got:?}"
        );
    }
    assert!(!Path::new("/proc/sys/fs/binfmt_misc/swerve").exists());
}

/// Threat: exempting the sandbox from the host's OOM killer (`oom_score_adj` -1000) so the
/// host's own processes die first. Anchor: lowering needs `CAP_SYS_RESOURCE`, dropped.
/// Verdict: `EACCES` (raising it, which only hurts the sandbox, works: the positive control).
#[test]
fn oom_score_adj_cannot_be_lowered() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "attempt('lower', write('/proc/self/oom_score_adj', '-1000'))\n\
         attempt('raise', write('/proc/self/oom_score_adj', '500'))",
    );
    assert_errnos(&outcome, &[("lower", libc::EACCES)]);
    assert_eq!(answers(&outcome)["raise"], "ok");
}

/// Threat: relabelling the process for an LSM (`/proc/self/attr/current`, `exec`) to leave
/// its confinement. Anchor: the host's LSM (none active here refuses with `EINVAL`; AppArmor
/// or SELinux refuse the transition). Verdict: the writes fail (`EINVAL`, `EACCES`, `EPERM`
/// or `ENOENT`).
#[test]
fn the_lsm_label_cannot_be_changed() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "attempt('current', write('/proc/self/attr/current', 'unconfined'))\n\
         attempt('exec', write('/proc/self/attr/exec', 'exec unconfined'))",
    );
    let got = answers(&outcome);
    for name in ["current", "exec"] {
        assert!(
            [libc::EINVAL, libc::EACCES, libc::EPERM, libc::ENOENT]
                .map(|errno| errno.to_string())
                .contains(&got[name]),
            "{name}: {got:?} {}",
            outcome.stderr_text()
        );
    }
}

/// Threat: rewriting the sandbox's id mapping (mapping host root in). Anchor: user
/// namespaces: a map is written once, by the parent. Verdict: `EPERM` for `uid_map` and
/// `gid_map`; `EACCES` for `setgroups`.
#[test]
fn the_id_map_cannot_be_rewritten() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "attempt('uid_map', write('/proc/self/uid_map', '0 0 1'))\n\
         attempt('gid_map', write('/proc/self/gid_map', '0 0 1'))\n\
         attempt('setgroups', write('/proc/self/setgroups', 'deny'))",
    );
    assert_errnos(
        &outcome,
        &[
            ("uid_map", libc::EPERM),
            ("gid_map", libc::EPERM),
            ("setgroups", libc::EACCES),
        ],
    );
}

/// Threat: finding host processes through `/proc` (their command lines, environments,
/// descriptors). Anchor: PID namespace with a fresh `/proc`. Verdict: a host process started
/// for the test is not among the sandbox's, and every pid listed is the sandbox's own.
#[test]
fn host_processes_are_invisible_in_proc() {
    let (workspace, _fixture) = sandbox();
    let mut host = std::process::Command::new("sleep")
        .arg("1000.9191")
        .spawn()
        .unwrap();
    let outcome = super::run(
        &workspace,
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done; ls -d /proc/[0-9]* | wc -l",
    );
    let _ = host.kill();
    let _ = host.wait();
    let stdout = outcome.stdout_text();
    assert!(!stdout.contains("1000.9191"), "{stdout}");
    let count: usize = stdout.lines().last().unwrap().trim().parse().unwrap();
    assert!(count < 10, "{count} processes visible: {stdout}");
}

/// Threat: kernel addresses (`/proc/kallsyms`, `/proc/modules`), the first step of most
/// kernel exploits. Anchor: the kernel hides them from a user namespace's root
/// (`kptr_restrict`); `/proc/kcore` masked. Verdict: every address reads as zero,
/// `/proc/kcore` is empty.
#[test]
fn kernel_addresses_are_hidden() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "head -50 /proc/kallsyms | cut -d' ' -f1 | sort -u; cat /proc/kcore 2>/dev/null | wc -c",
    );
    let lines: Vec<&str> = outcome.stdout_text().leak().lines().collect();
    assert_eq!(
        lines,
        ["0000000000000000", "0"],
        "{}",
        outcome.stderr_text()
    );
}

/// Threat: the keyrings of the host's users through `/proc/keys` and `/proc/key-users`.
/// Anchor: both masked (Docker's list). Verdict: both read empty.
#[test]
fn the_keyring_files_are_masked() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(&workspace, "wc -c < /proc/keys; wc -c < /proc/key-users");
    assert_eq!(outcome.stdout_text(), "0\n0\n", "{}", outcome.stderr_text());
}

// --- namespaces ---

/// Threat: joining another namespace through a `/proc/<pid>/ns` file (the sandbox's PID 1's,
/// its own), with `setns` or `nsenter`. Anchor: seccomp allowlist (`setns`); PID 1 is not
/// dumpable, so its files belong to host root. Verdict in every mode: `EACCES` opening PID
/// 1's files, `EPERM` for `setns`.
#[test]
fn setns_into_namespace_files_is_refused() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "libc = ctypes.CDLL(None, use_errno=True)\n\
         for ns in ['mnt', 'net', 'pid', 'user', 'uts', 'ipc', 'cgroup']:\n\
         \x20   attempt('open_1_' + ns, lambda: os.open('/proc/1/ns/' + ns, os.O_RDONLY))\n\
         \x20   fd = os.open('/proc/self/ns/' + ns, os.O_RDONLY)\n\
         \x20   print('setns_' + ns, 'ok' if libc.setns(fd, 0) == 0 else ctypes.get_errno())",
    );
    let mut expected = Vec::new();
    let names: Vec<(String, String)> = ["mnt", "net", "pid", "user", "uts", "ipc", "cgroup"]
        .iter()
        .map(|ns| (format!("open_1_{ns}"), format!("setns_{ns}")))
        .collect();
    for (open, setns) in &names {
        expected.push((open.as_str(), libc::EACCES));
        expected.push((setns.as_str(), libc::EPERM));
    }
    assert_errnos(&outcome, &expected);
}

/// Threat: new namespaces with the ordinary tools (`unshare -U`, `-m`, `-n`, `-p`, `-u`,
/// `-i`, `-C`, `-T`), each a door to kernel surface a user namespace's root reaches.
/// Anchor: seccomp allowlist (`unshare` refused). Verdict: each exits non-zero with
/// "Operation not permitted".
#[test]
fn unshare_fails_for_every_namespace() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "for flag in -U -m -n '-p -f' -u -i -C -T; do unshare $flag true 2>&1 && echo \"unshared $flag\"; done",
    );
    let stdout = outcome.stdout_text();
    assert!(!stdout.contains("unshared"), "{stdout}");
    assert_eq!(
        stdout.matches("Operation not permitted").count(),
        8,
        "{stdout}"
    );
}

// --- mounts ---

/// Threat: bind-mounting over the repository or a system directory to change what the
/// grader or the next command sees. Anchor: seccomp allowlist (`mount`). Verdict: `mount`
/// fails, `/testbed` unchanged.
#[test]
fn a_bind_mount_is_refused() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "mount --bind /tmp /testbed 2>&1; echo status=$?; ls /testbed/a.txt",
    );
    let stdout = outcome.stdout_text();
    assert!(stdout.contains("permission denied"), "{stdout}");
    assert!(!stdout.contains("status=0"), "{stdout}");
    assert!(stdout.ends_with("/testbed/a.txt\n"), "{stdout}");
}

/// Threat: remounting a read-only directory (`/usr`, `/etc`) read-write. Anchor: seccomp
/// allowlist (`mount`), and the read-only flag locked by the user namespace. Verdict: the
/// remount fails and writes still get `EROFS`. In an image's root `/usr` and `/etc` are the
/// image's, writable into the workspace's own layer: there the remount still fails and
/// nothing reaches the host's `/usr`.
#[test]
fn read_only_directories_cannot_be_remounted_writable() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "mount -o remount,rw /usr 2>&1; mount -o remount,rw /etc 2>&1; \
         python3 -c \"import os\nfor p in ['/usr/swerve-x', '/etc/swerve-x']:\n  try: open(p, 'w'); print(p, 'ok')\n  except OSError as e: print(p, e.errno)\"",
    );
    let stdout = outcome.stdout_text();
    assert_eq!(stdout.matches("permission denied").count(), 2, "{stdout}");
    if !common::in_image() {
        assert!(stdout.contains("/usr/swerve-x 30\n"), "{stdout}");
        assert!(stdout.contains("/etc/swerve-x 30\n"), "{stdout}");
    }
    assert!(!Path::new("/usr/swerve-x").exists());
    assert!(!Path::new("/etc/swerve-x").exists());
}

/// Threat: making the sandbox's mounts shared, so mounts propagate to (or from) the host.
/// Anchor: seccomp allowlist (`mount`); the sandbox's mounts are private from the start.
/// Verdict: `mount --make-shared` fails and no mount of the sandbox is in a peer group.
#[test]
fn mount_propagation_cannot_be_shared() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "mount --make-rshared / 2>&1; mount --make-shared /testbed 2>&1; \
         grep -c -E 'shared:|master:' /proc/self/mountinfo",
    );
    let stdout = outcome.stdout_text();
    assert_eq!(stdout.matches("permission denied").count(), 2, "{stdout}");
    assert!(stdout.ends_with("\n0\n"), "{stdout}");
}

/// Threat: `/proc/self/mountinfo` telling the model where the host keeps things (other
/// workspaces, the base checkout, the cache, the repository). Anchor: the overlay's layers are
/// passed as descriptors (`/proc/self/fd/N`), not paths; other mounts are the same path
/// inside and out. Verdict: no host path but this workspace's own `HOME` directory and the
/// exposed toolchains; not the base checkout, the repository, another workspace. (The
/// workspace's `HOME` line does show where the cache lives: see `docs/security.md`.)
#[test]
fn mountinfo_shows_no_host_path_beyond_the_task() {
    let fixture = Fixture::new();
    let base = fixture.base();
    let workspace = fixture.workspace(isolated());
    let other = fixture.workspace(isolated());
    let outcome = super::run(&workspace, "cat /proc/self/mountinfo");
    let mountinfo = outcome.stdout_text();
    // The other workspace's HOME, as its own mountinfo names it: it must not show here.
    let other_home = super::run(
        &other,
        "grep ' /root ' /proc/self/mountinfo | cut -d' ' -f4",
    )
    .stdout_text();
    const PSEUDO: &[&str] = &[
        "proc", "sysfs", "tmpfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "overlay", "mqueue",
    ];
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let (source_root, mount_point) = (fields[3], fields[4]);
        let kind = line
            .split(" - ")
            .nth(1)
            .unwrap_or("")
            .split(' ')
            .next()
            .unwrap();
        if PSEUDO.contains(&kind) {
            continue;
        }
        assert!(
            !source_root.contains(&*base.path.to_string_lossy()),
            "the base checkout's path shows: {line}"
        );
        assert!(
            !source_root.contains(&*fixture.repo.to_string_lossy()),
            "the repository's path shows: {line}"
        );
        let same_path = source_root == mount_point || source_root == "/";
        // Bound from the host at another path: only the workspace's own HOME.
        if !same_path {
            assert_eq!(mount_point, "/root", "a host path shows: {line}");
            assert!(source_root.ends_with("/home"), "{line}");
        }
    }
    let other_home = other_home.trim();
    if !other_home.is_empty() {
        assert!(!mountinfo.contains(other_home), "{other_home}: {mountinfo}");
    }
    assert!(
        mountinfo.contains("lowerdir=/proc/self/fd/") || common::in_image(),
        "{mountinfo}"
    );
}

// --- devices ---

/// Threat: making device nodes (a character device for `/dev/mem`, a block device for the
/// host's disk) to read or write the hardware behind the kernel's back. Anchor: user
/// namespace (`mknod` of a device needs `CAP_MKNOD` in the host's namespace) and `nodev`
/// mounts. Verdict: `EPERM` for both; a FIFO (no device) is made: the positive control.
#[test]
fn device_nodes_cannot_be_made() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "import stat\n\
         attempt('char', lambda: os.mknod('/tmp/mem', 0o600 | stat.S_IFCHR, os.makedev(1, 1)))\n\
         attempt('block', lambda: os.mknod('/testbed/sda', 0o600 | stat.S_IFBLK, os.makedev(8, 0)))\n\
         attempt('fifo', lambda: os.mkfifo('/tmp/fifo'))",
    );
    assert_errnos(&outcome, &[("char", libc::EPERM), ("block", libc::EPERM)]);
    assert_eq!(answers(&outcome)["fifo"], "ok");
}

/// Threat: opening the host's devices (`/dev/mem`, `/dev/kmem`, `/dev/port`, `/dev/kmsg`,
/// disks, `/dev/kvm`, `/dev/fuse`, `/dev/net/tun`). Anchor: `/dev` is a fresh tmpfs with six
/// harmless nodes. Verdict: `ENOENT` for each (and the host has at least one of them, so the
/// names are real).
#[test]
fn host_devices_are_absent() {
    let (workspace, _fixture) = sandbox();
    let devices = [
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
        "/dev/kmsg",
        "/dev/sda",
        "/dev/vda",
        "/dev/nvme0n1",
        "/dev/kvm",
        "/dev/fuse",
        "/dev/net/tun",
    ];
    let program: String = devices
        .iter()
        .map(|device| format!("attempt('{device}', lambda: os.open('{device}', os.O_RDONLY))\n"))
        .collect();
    let outcome = python(&workspace, &program);
    let expected: Vec<(&str, i32)> = devices
        .iter()
        .map(|device| (*device, libc::ENOENT))
        .collect();
    assert_errnos(&outcome, &expected);
    assert!(devices.iter().any(|device| Path::new(device).exists()));
}

// --- descriptors ---

/// Threat: a descriptor inherited from the host (the sandbox's control socket, a host file)
/// used by a program deeper in the tree. Anchor: the init closes every inherited descriptor
/// (`close_range`). Verdict: a Python grandchild has only 0, 1, 2 (and the one listing the
/// directory), none pointing at a host path.
#[test]
fn a_grandchild_inherits_no_host_descriptors() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "fds = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))\n\
         print('fds', fds)\n\
         for fd in fds:\n\
         \x20   try:\n\
         \x20       print('link', fd, os.readlink('/proc/self/fd/%d' % fd))\n\
         \x20   except OSError:\n\
         \x20       pass",
    );
    let got = answers(&outcome);
    assert_eq!(got["fds"], "[0, 1, 2, 3]", "{}", outcome.stdout_text());
    for line in outcome
        .stdout_text()
        .lines()
        .filter(|line| line.starts_with("link "))
    {
        let target = line.splitn(3, ' ').nth(2).unwrap();
        assert!(
            target == "/dev/null"
                || target.starts_with("pipe:")
                || target.starts_with("socket:")
                || target.starts_with("/proc/"),
            "{line}"
        );
    }
}

// --- bombs (small limits so they end quickly) ---

/// Threat: a thread bomb (threads count against the same limit as processes). Anchor:
/// cgroup `pids.max` (RLIMIT_NPROC unprivileged). Verdict: thread creation fails below the
/// limit, the host still starts processes, the sandbox recovers.
#[test]
fn a_thread_bomb_is_stopped_by_the_process_limit() {
    let (workspace, _fixture) = sandbox_with(SandboxConfig {
        limits: Limits {
            max_processes: Some(48),
            ..Limits::default()
        },
        ..isolated()
    });
    super::assert_limits_enforced(&workspace);
    let outcome = python(
        &workspace,
        "import threading, time\n\
         stop = threading.Event()\n\
         threads = []\n\
         try:\n\
         \x20   for _ in range(1000):\n\
         \x20       t = threading.Thread(target=stop.wait); t.start(); threads.append(t)\n\
         except RuntimeError as e:\n\
         \x20   print('stopped', len(threads))\n\
         stop.set()",
    );
    let got = answers(&outcome);
    let started: usize = got
        .get("stopped")
        .unwrap_or_else(|| panic!("not stopped: {got:?} {}", outcome.stderr_text()))
        .parse()
        .unwrap();
    assert!(started < 48, "{started} threads");
    assert!(
        std::process::Command::new("true")
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(
        super::run(&workspace, "echo alive").stdout_text(),
        "alive\n"
    );
}

/// Threat: a pid bomb of sleepers (no fork loop: many long-lived processes). Anchor: cgroup
/// `pids.max` (RLIMIT_NPROC unprivileged). Verdict: `fork` fails with `EAGAIN` below the
/// limit; no more sleepers than the limit exist on the host.
#[test]
fn a_pid_bomb_of_sleepers_is_stopped() {
    let (workspace, _fixture) = sandbox_with(SandboxConfig {
        limits: Limits {
            max_processes: Some(32),
            ..Limits::default()
        },
        ..isolated()
    });
    super::assert_limits_enforced(&workspace);
    let outcome = python(
        &workspace,
        "import subprocess\n\
         sleepers = []\n\
         def bomb():\n\
         \x20   for _ in range(200):\n\
         \x20       sleepers.append(subprocess.Popen(['sleep', '1000.31' + '31']))\n\
         attempt('bomb', bomb)\n\
         print('started', len(sleepers))\n\
         sys.stdout.flush()\n\
         import time; time.sleep(0.5)\n\
         for s in sleepers: s.kill()",
    );
    assert_errnos(&outcome, &[("bomb", libc::EAGAIN)]);
    let started: usize = answers(&outcome)["started"].parse().unwrap();
    assert!(started < 32, "{started} sleepers");
}

/// Threat: filling `/tmp` (a tmpfs: memory of the host). Anchor: `/tmp`'s size
/// (`tmp_bytes`). Verdict: `ENOSPC` at the size.
#[test]
fn filling_tmp_stops_at_its_size() {
    let (workspace, _fixture) = sandbox_with(SandboxConfig {
        limits: Limits {
            tmp_bytes: 8 << 20,
            ..Limits::default()
        },
        ..isolated()
    });
    let outcome = python(
        &workspace,
        "def fill():\n\
         \x20   with open('/tmp/fill', 'wb') as f:\n\
         \x20       for _ in range(64):\n\
         \x20           f.write(b'x' * (1 << 20)); f.flush()\n\
         attempt('fill', fill)\n\
         print('size', os.path.getsize('/tmp/fill') >> 20)",
    );
    assert_errnos(&outcome, &[("fill", libc::ENOSPC)]);
    assert!(answers(&outcome)["size"].parse::<u32>().unwrap() <= 8);
}

/// Threat: an inode bomb in `/tmp` (millions of empty files: no bytes, but the host's kernel
/// memory, which no memory cgroup charges in an unprivileged run). Anchor: the tmpfs's inode
/// count (`nr_inodes`, one per KiB of its size; before this corpus it was the kernel's
/// default, half the machine's memory pages). Verdict: `ENOSPC` at 4,096 files for a 4 MiB
/// `/tmp`.
#[test]
fn an_inode_bomb_in_tmp_is_bounded() {
    let (workspace, _fixture) = sandbox_with(SandboxConfig {
        limits: Limits {
            tmp_bytes: 4 << 20,
            ..Limits::default()
        },
        ..isolated()
    });
    let outcome = python(
        &workspace,
        "os.mkdir('/tmp/i')\n\
         count = 0\n\
         def bomb():\n\
         \x20   global count\n\
         \x20   while count < 200000:\n\
         \x20       os.close(os.open('/tmp/i/%d' % count, os.O_CREAT | os.O_WRONLY)); count += 1\n\
         attempt('bomb', bomb)\n\
         print('count', count)",
    );
    assert_errnos(&outcome, &[("bomb", libc::ENOSPC)]);
    let count: u32 = answers(&outcome)["count"].parse().unwrap();
    assert!(count <= 4096, "{count} files in a 4 MiB /tmp");
}

// --- time, signals, identity ---

/// Threat: setting the host's clock with the usual tools (`date -s`, Python's
/// `clock_settime`), which breaks TLS, logs and schedulers for every tenant. Anchor: seccomp
/// allowlist (`settimeofday`, `clock_settime`). Verdict: `EPERM`; the host's clock still
/// agrees with the test's.
#[test]
fn the_clock_cannot_be_set() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "import time, subprocess\n\
         attempt('clock_settime', lambda: time.clock_settime(time.CLOCK_REALTIME, 1e9))\n\
         print('date', subprocess.run(['date', '-s', '2001-01-01'], capture_output=True).returncode)",
    );
    assert_errnos(&outcome, &[("clock_settime", libc::EPERM)]);
    assert_ne!(answers(&outcome)["date"], "0");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    assert!(now.as_secs() > 1_700_000_000);
}

/// Threat: `kill -9 -1` (every process the caller may signal) to take down the host's
/// processes of the same user. Anchor: PID namespace. Verdict: a host process of the same
/// user survives.
#[test]
fn kill_minus_one_reaches_only_the_sandbox() {
    let (workspace, _fixture) = sandbox();
    let mut host = std::process::Command::new("sleep")
        .arg("1000.8181")
        .spawn()
        .unwrap();
    let _ = workspace
        .sandbox()
        .run("kill -9 -1; sleep 1", Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(200));
    let alive = host.try_wait().unwrap().is_none();
    let _ = host.kill();
    let _ = host.wait();
    assert!(alive, "kill -1 in the sandbox killed a host process");
    assert_eq!(
        super::run(&workspace, "echo alive").stdout_text(),
        "alive\n"
    );
}

/// Threat: renaming the host (`hostname`, `sethostname`, the NIS domain), which confuses
/// every service that trusts it. Anchor: seccomp allowlist and a UTS namespace of the
/// sandbox's own. Verdict: `EPERM`; the host's name unchanged.
#[test]
fn hostname_changes_do_not_reach_the_host() {
    let (workspace, _fixture) = sandbox();
    let before = nix::sys::utsname::uname().unwrap();
    let outcome = python(
        &workspace,
        "attempt('sethostname', lambda: socket.sethostname('swerve-evil'))\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         print('setdomainname', 'ok' if libc.setdomainname(b'evil', 4) == 0 else ctypes.get_errno())\n\
         print('name', socket.gethostname())",
    );
    assert_errnos(
        &outcome,
        &[("sethostname", libc::EPERM), ("setdomainname", libc::EPERM)],
    );
    assert_ne!(answers(&outcome)["name"], "swerve-evil");
    let after = nix::sys::utsname::uname().unwrap();
    assert_eq!(before.nodename(), after.nodename());
    assert_eq!(before.domainname(), after.domainname());
}

// --- the filesystem view ---

/// Threat: the classic chroot escape: `chroot` into a subdirectory while holding a
/// descriptor outside it, climb with `..`, `chroot(".")`. Anchor: the sandbox's root is a
/// `pivot_root`ed mount namespace: climbing ends at the sandbox's `/`, not the host's.
/// Verdict: the escaped root lists exactly what the sandbox's `/` lists.
#[test]
fn a_chroot_escape_ends_at_the_sandbox_root() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "print('before', sorted(os.listdir('/')))\n\
         os.makedirs('/tmp/jail', exist_ok=True)\n\
         fd = os.open('/', os.O_RDONLY)\n\
         os.chroot('/tmp/jail')\n\
         os.fchdir(fd)\n\
         for _ in range(64):\n\
         \x20   os.chdir('..')\n\
         os.chroot('.')\n\
         print('after', sorted(os.listdir('/')))",
    );
    let got = answers(&outcome);
    assert!(
        got.contains_key("after"),
        "{got:?} {}",
        outcome.stderr_text()
    );
    assert_eq!(got["before"], got["after"]);
    assert!(got["after"].contains("'testbed'"), "{got:?}");
}

/// Threat: hard links from a writable place to a read-only or host file (so a later write,
/// or a host-side helper, changes the original). Anchor: every writable directory is its
/// own mount; the kernel refuses links across mounts. Verdict: `EXDEV`. In an image's root,
/// `/usr`, `/testbed` and `HOME` are one overlay (the image's layers under the workspace's
/// own), so links between them are made, and a write through one copies the file up into the
/// workspace's layer: the case then checks the image's layer on the host is unchanged.
#[test]
fn hard_links_across_mounts_are_refused() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "attempt('etc_to_tmp', lambda: os.link('/etc/passwd', '/tmp/passwd'))\n\
         attempt('usr_to_repo', lambda: os.link(os.path.realpath(sys.executable), '/testbed/python'))\n\
         attempt('repo_to_home', lambda: os.link('/testbed/a.txt', os.path.expanduser('~/a.txt')))",
    );
    if !common::in_image() {
        assert_errnos(
            &outcome,
            &[
                ("etc_to_tmp", libc::EXDEV),
                ("usr_to_repo", libc::EXDEV),
                ("repo_to_home", libc::EXDEV),
            ],
        );
        return;
    }
    assert_errnos(&outcome, &[("etc_to_tmp", libc::EXDEV)]);
    // Write through the link to the image's Python: the image's layer must not change.
    let python = super::run(&workspace, "readlink -f \"$(command -v python3)\"")
        .stdout_text()
        .trim()
        .to_owned();
    let layers = std::env::var("SWERVE_TEST_IMAGE_LAYERS").unwrap();
    let in_layers: Vec<(PathBuf, u64)> = layers
        .split(':')
        .map(|layer| Path::new(layer).join(python.trim_start_matches('/')))
        .filter_map(|path| Some((path.clone(), std::fs::metadata(&path).ok()?.len())))
        .collect();
    assert!(!in_layers.is_empty(), "{python} is in no layer");
    super::run(&workspace, "echo appended >> /testbed/python");
    for (path, len) in in_layers {
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            len,
            "{}",
            path.display()
        );
    }
}

/// Threat: a symlink in the repository toward a host file (a key), hoping the host-side
/// patch extraction follows it and puts the file's contents in the patch. Anchor: git runs
/// joined to the sandbox's namespaces, and records links as links. Verdict: the patch holds
/// the link's text, never the host file's contents.
#[test]
fn a_symlink_toward_a_host_file_does_not_leak_it_into_the_patch() {
    let fixture = Fixture::new();
    let secret = fixture.dir.path().join("host-secret");
    std::fs::write(&secret, "swerve-host-secret-contents\n").unwrap();
    let workspace = fixture.workspace(isolated());
    let outcome = super::run(
        &workspace,
        &format!(
            "ln -s {} leak && ln -s /etc/shadow shadow && git add -A && echo linked",
            secret.display()
        ),
    );
    assert_eq!(
        outcome.stdout_text(),
        "linked\n",
        "{}",
        outcome.stderr_text()
    );
    let patch = workspace.patch(&PatchOptions::default()).unwrap();
    assert!(patch.files.contains(&"leak".to_owned()), "{patch:?}");
    assert!(
        patch.diff.contains(&*secret.to_string_lossy()),
        "{}",
        patch.diff
    );
    assert!(
        !patch.diff.contains("swerve-host-secret-contents"),
        "{}",
        patch.diff
    );
    assert!(!patch.diff.contains("root:"), "{}", patch.diff);
}

/// Threat: a git `core.fsmonitor` command (or hook) planted in the repository's config, run
/// by the host when swerve extracts the patch. Anchor: swerve's git passes
/// `core.fsmonitor=false` and `core.hooksPath=/dev/null`, and runs joined to the sandbox.
/// Verdict: the planted command never creates its marker on the host.
#[test]
fn a_planted_git_fsmonitor_does_not_run_on_the_host() {
    let fixture = Fixture::new();
    let marker = fixture.dir.path().join("fsmonitor-ran");
    let workspace = fixture.workspace(isolated());
    let outcome = super::run(
        &workspace,
        &format!(
            "git config core.fsmonitor 'touch {0}; touch /tmp/fsmonitor-ran; true' && \
             mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch {0}\\n' > .git/hooks/post-index-change && \
             chmod +x .git/hooks/post-index-change && echo changed >> a.txt && echo planted",
            marker.display()
        ),
    );
    assert_eq!(
        outcome.stdout_text(),
        "planted\n",
        "{}",
        outcome.stderr_text()
    );
    let patch = workspace.patch(&PatchOptions::default()).unwrap();
    assert!(patch.files.contains(&"a.txt".to_owned()), "{patch:?}");
    assert!(!marker.exists(), "the planted command ran on the host");
    let ran = super::run(&workspace, "ls /tmp/fsmonitor-ran 2>/dev/null | wc -l");
    assert_eq!(ran.stdout_text(), "0\n", "git ran the planted fsmonitor");
}

/// Threat: one rollout reading another's work (its repository, `/tmp`, `HOME`, its
/// processes). Anchor: a mount and PID namespace per sandbox; each workspace's layers are
/// its own. Verdict: none of the first rollout's secrets is readable from the second.
#[test]
fn a_rollout_cannot_read_another_rollouts_files() {
    let fixture = Fixture::new();
    let first = fixture.workspace(isolated());
    let second = fixture.workspace(isolated());
    let planted = super::run(
        &first,
        "echo swerve-rollout-secret > /testbed/secret; echo swerve-rollout-secret > /tmp/secret; \
         echo swerve-rollout-secret > ~/secret; (sleep 1000.2727 &) ; echo planted",
    );
    assert_eq!(planted.stdout_text(), "planted\n");
    let first_host_path = first.host_root().display().to_string();
    let outcome = super::run(
        &second,
        &format!(
            "cat /testbed/secret /tmp/secret ~/secret {first_host_path}/secret 2>/dev/null; \
             grep -l 1000.27''27 /proc/[0-9]*/cmdline 2>/dev/null; \
             grep -rl swerve-rollout-secret / --exclude-dir=proc --exclude-dir=sys 2>/dev/null | grep -v '^/tmp/.*probe' ; true"
        ),
    );
    assert_eq!(outcome.stdout_text(), "", "{}", outcome.stderr_text());
    // The secret is there in the first rollout: the search above could have found it.
    assert_eq!(
        super::run(&first, "cat /testbed/secret /tmp/secret ~/secret").stdout_text(),
        "swerve-rollout-secret\n".repeat(3)
    );
}

/// Threat: secrets of the host's environment through `/proc/<pid>/environ` of the sandbox's
/// processes (PID 1 included), not only a command's own environment. Anchor: the init and
/// every command start from a cleared environment. Verdict: no process's environment in the
/// sandbox holds a variable set in the host's.
#[test]
fn no_process_environment_holds_a_host_secret() {
    // SAFETY: no other thread of this test binary reads this variable.
    unsafe { std::env::set_var("SWERVE_CORPUS_SECRET", "swerve-env-secret") };
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(
        &workspace,
        "for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; done; tr '\\0' '\\n' < /proc/self/environ",
    );
    let stdout = outcome.stdout_text();
    assert!(stdout.contains("PATH="), "{stdout}");
    assert!(!stdout.contains("swerve-env-secret"), "{stdout}");
    assert!(!stdout.contains("SWERVE_CORPUS_SECRET"), "{stdout}");
}

// --- privilege ---

/// Threat: keeping capabilities beyond Docker's default set (`CAP_SYS_ADMIN`,
/// `CAP_SYS_MODULE`, `CAP_NET_ADMIN`, `CAP_SYS_TIME`, `CAP_BPF`, ...), or ambient and
/// inheritable ones that survive `execve`. Anchor: `PR_CAPBSET_DROP` and `capset` in PID 1.
/// Verdict: effective, permitted and bounding sets are exactly Docker's (`0xa80425fb`);
/// inheritable and ambient are empty.
#[test]
fn the_capability_sets_are_exactly_dockers() {
    let (workspace, _fixture) = sandbox();
    let outcome = super::run(&workspace, "grep ^Cap /proc/self/status");
    let stdout = outcome.stdout_text();
    for (set, value) in [
        ("CapInh", "0000000000000000"),
        ("CapPrm", "00000000a80425fb"),
        ("CapEff", "00000000a80425fb"),
        ("CapBnd", "00000000a80425fb"),
        ("CapAmb", "0000000000000000"),
    ] {
        assert!(
            stdout.contains(&format!("{set}:\t{value}\n")),
            "{set}: {stdout}"
        );
    }
}

/// Threat: a file capability (`setcap cap_sys_admin+ep`) on a copy of Python, run to gain
/// the capability. Anchor: `no_new_privs` and `nosuid` on every writable mount. Verdict:
/// the program runs without `CAP_SYS_ADMIN` (its effective set is no larger than its
/// parent's).
#[test]
fn a_file_capability_gives_no_privilege() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "import shutil, subprocess\n\
         shutil.copy(os.path.realpath(sys.executable), '/testbed/py')\n\
         value = struct.pack('<IIIII', 0x02000001, 1 << 21, 0, 0, 0)\n\
         attempt('setcap', lambda: os.setxattr('/testbed/py', 'security.capability', value))\n\
         out = subprocess.run(['/testbed/py', '-c', \"print([l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1])\"], capture_output=True, text=True)\n\
         print('effective', out.stdout.strip() or out.stderr.strip())",
    );
    let got = answers(&outcome);
    assert!(["ok", "1"].contains(&got["setcap"].as_str()), "{got:?}");
    let effective = u64::from_str_radix(&got["effective"], 16)
        .unwrap_or_else(|_| panic!("{got:?} {}", outcome.stderr_text()));
    assert_eq!(effective & (1 << 21), 0, "CAP_SYS_ADMIN gained: {got:?}");
    assert_eq!(effective, 0xa80425fb);
}

/// Threat: TIOCSTI: pushing characters into the input of the terminal the agent runs from,
/// to type commands on the host. Anchor: commands have no controlling terminal (new
/// session) and stdin is `/dev/null`. Verdict: `ENOTTY` on stdin, `ENXIO` opening
/// `/dev/tty`.
#[test]
fn tiocsti_cannot_inject_into_a_terminal() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "import termios\n\
         attempt('stdin', lambda: fcntl.ioctl(0, termios.TIOCSTI, b'x'))\n\
         attempt('tty', lambda: fcntl.ioctl(os.open('/dev/tty', os.O_RDWR), termios.TIOCSTI, b'x'))",
    );
    assert_errnos(&outcome, &[("stdin", libc::ENOTTY), ("tty", libc::ENXIO)]);
}

// --- network ---

/// Threat: raw IP sockets (`CAP_NET_RAW` is kept, as in Docker) to reach or spoof the
/// outside. Anchor: network namespace with only `lo`. Verdict: the socket opens (the
/// capability is real) but sending out fails with `ENETUNREACH`.
#[test]
fn a_raw_socket_cannot_reach_outside() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)\n\
         print('opened yes')\n\
         attempt('send', lambda: s.sendto(b'\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00', ('1.1.1.1', 0)))",
    );
    assert_eq!(
        answers(&outcome).get("opened").map(String::as_str),
        Some("yes")
    );
    assert_errnos(&outcome, &[("send", libc::ENETUNREACH)]);
}

/// Threat: `AF_PACKET` sockets, to sniff or inject frames on the host's interfaces. Anchor:
/// network namespace (the socket sees the namespace's interfaces only). Verdict: only `lo`.
#[test]
fn af_packet_sees_only_loopback() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n\
         print('interfaces', socket.if_nameindex())\n\
         print('sys', sorted(os.listdir('/sys/class/net')))",
    );
    let got = answers(&outcome);
    assert_eq!(
        got.get("interfaces").map(String::as_str),
        Some("[(1, 'lo')]"),
        "{}",
        outcome.stderr_text()
    );
    assert_eq!(got["sys"], "['lo']");
}

/// Threat: netlink route and address changes (`ip addr add`, `ip route add`) to redirect
/// traffic. Anchor: `CAP_NET_ADMIN` is dropped (and the namespace is the sandbox's own).
/// Verdict: the kernel answers `EPERM` to an `RTM_NEWADDR` message; the address is not on
/// the host.
#[test]
fn netlink_address_changes_are_refused() {
    let (workspace, _fixture) = sandbox();
    let outcome = python(
        &workspace,
        "s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n\
         s.bind((0, 0))\n\
         addr = socket.inet_aton('10.123.45.6')\n\
         body = struct.pack('BBBBI', socket.AF_INET, 32, 0, 0, 1) + struct.pack('HH', 8, 2) + addr\n\
         header = struct.pack('IHHII', 16 + len(body), 20, 1 | 4 | 0x400 | 0x200, 1, 0)\n\
         s.send(header + body)\n\
         reply = s.recv(4096)\n\
         print('error', -struct.unpack('i', reply[16:20])[0])",
    );
    assert_errnos(&outcome, &[("error", libc::EPERM)]);
    let host = std::fs::read_to_string("/proc/net/fib_trie").unwrap_or_default();
    assert!(!host.contains("10.123.45.6"));
}

/// Threat: interface settings by `ioctl` (`SIOCSIFMTU`, taking `lo` down) hoping they reach
/// the host's interfaces. Anchor: `CAP_NET_ADMIN` dropped, and a network namespace of its
/// own. Verdict: `EPERM`; the host's `lo` MTU unchanged.
#[test]
fn interface_settings_are_refused() {
    let (workspace, _fixture) = sandbox();
    let before = std::fs::read_to_string("/sys/class/net/lo/mtu").unwrap();
    let outcome = python(
        &workspace,
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         attempt('mtu', lambda: fcntl.ioctl(s, 0x8922, struct.pack('16si20x', b'lo', 1280)))\n\
         attempt('down', lambda: fcntl.ioctl(s, 0x8914, struct.pack('16sh22x', b'lo', 0)))",
    );
    assert_errnos(&outcome, &[("mtu", libc::EPERM), ("down", libc::EPERM)]);
    assert_eq!(
        std::fs::read_to_string("/sys/class/net/lo/mtu").unwrap(),
        before
    );
}
