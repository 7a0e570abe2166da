//! Builds a sandbox's root filesystem and pivots into it.
//!
//! The new root is a tmpfs holding only what a task needs, like a container image:
//!
//! - the host's system directories (`/usr`, `/bin`, `/sbin`, `/lib*`), read-only;
//! - a curated `/etc`: the entries in [`ETC_ENTRIES`] (users, name resolution, the dynamic
//!   linker, certificates, locale, shells' profiles), read-only; never `shadow`, `sudoers`,
//!   SSH host keys, private TLS keys or package managers' credentials;
//! - the layers: the repository at its mount point, environments beside it;
//! - a fresh `/proc` of the sandbox's PID namespace with Docker's masked and read-only paths
//!   ([`PROC_MASKED`], [`PROC_READ_ONLY`]), a read-only `/sys` (less [`SYS_MASKED`]) with the
//!   sandbox's own cgroup2 view and CPUs, a minimal `/dev` with pseudo-terminals of its own
//!   (`/dev/pts`, a new devpts instance), private `/tmp`, `/run` and `/dev/shm` tmpfs mounts;
//! - a private, writable `HOME`, and the configured or toolchain exposures (read-only unless
//!   marked writable), with credentials inside them covered.
//!
//! With a base root (`InitSpec::system_root`, `sandbox.userland = "base"`) the system
//! directories and the whole `/etc` are the base root's instead, read-only: the same tools
//! and versions on every host.
//!
//! Nothing else of the host is reachable: not `/root`, `/home`, `/mnt`, `/media`, `/srv`,
//! nor any other top-level directory. The root itself is remounted read-only.
//!
//! With an image (`InitSpec::image_root`) the root is instead an overlay of the image's
//! layers under the workspace's writable layer: the image's own system directories, `/etc`
//! and `HOME`, and no host file at all; `/proc`, `/sys`, `/dev`, `/tmp` and `/run` are the
//! sandbox's own as above, and configured exposures still apply.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;

use nix::mount::{MntFlags, MsFlags, mount, umount2};

use super::{HostSources, InitSpec, LayerSpec};

/// Where the new root is built before the pivot: a directory every id can search. It is
/// covered only in the sandbox's own mount namespace; the host's `/tmp` is untouched, and
/// host paths below it stay reachable through [`HostSources`].
const NEW_ROOT: &str = "/tmp";

/// Top-level entries of the system root (the host's or a base root) every sandbox sees,
/// read-only (symlinks are recreated as such).
const SYSTEM_DIRS: &[&str] = &["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/// Entries of the host's `/etc` a sandbox sees, read-only, where they exist. Names ending in
/// `*` match by prefix.
const ETC_ENTRIES: &[&str] = &[
    "passwd",
    "group",
    "hosts",
    "resolv.conf",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "alternatives",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ca-certificates",
    "ca-certificates.conf",
    "os-release",
    "debian_version",
    "lsb-release",
    "issue",
    "protocols",
    "services",
    "networks",
    "ethertypes",
    "rpc",
    "mime.types",
    "mailcap",
    "magic",
    "magic.mime",
    "bash.bashrc",
    "profile",
    "profile.d",
    "environment",
    "inputrc",
    "shells",
    "login.defs",
    "locale.alias",
    "locale.gen",
    "default/locale",
    "manpath.config",
    "xattr.conf",
    "terminfo",
    "skel",
    "fonts",
    "mtab",
    "python*",
    "perl",
    "java-*",
];

/// `/proc` entries covered (files by an empty file, directories by an empty tmpfs), as in
/// Docker's default.
const PROC_MASKED: &[&str] = &[
    "asound",
    "acpi",
    "kcore",
    "keys",
    "key-users",
    "kmsg",
    "latency_stats",
    "timer_list",
    "timer_stats",
    "sched_debug",
    "scsi",
];

/// `/proc` entries made read-only, as in Docker's default.
const PROC_READ_ONLY: &[&str] = &["bus", "fs", "irq", "sys", "sysrq-trigger"];

/// `/sys` entries covered, as in Docker's default.
const SYS_MASKED: &[&str] = &["firmware", "devices/virtual/powercap"];

/// How the sandbox's own `/sys` and cgroup2 view are mounted: read-only, nothing to run.
const PSEUDO_READ_ONLY: MsFlags = MsFlags::MS_RDONLY
    .union(MsFlags::MS_NOSUID)
    .union(MsFlags::MS_NODEV)
    .union(MsFlags::MS_NOEXEC);

/// Device nodes bound from the host into `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];

/// Builds the root at [`NEW_ROOT`] and pivots into it.
pub(crate) fn build_and_pivot(spec: &InitSpec, sources: &HostSources) -> Result<(), String> {
    mount_or(
        None::<&str>,
        "/",
        None,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None,
    )?;
    let root = Path::new(NEW_ROOT);
    let image = spec.image_root.is_some();
    match &spec.image_root {
        // An image's root: its layers under the workspace's writable layer. Its own
        // `/usr`, `/etc` and `HOME` are used; nothing of the host's files is shown.
        Some(layer) => {
            mount_layer(root, Path::new("/"), layer, sources)?;
            for dir in ["proc", "sys", "dev", "tmp", "run"] {
                let path = root.join(dir);
                if std::fs::symlink_metadata(&path).is_ok_and(|meta| !meta.is_dir()) {
                    std::fs::remove_file(&path)
                        .map_err(|error| format!("cannot replace /{dir}: {error}"))?;
                }
            }
        }
        None => {
            mount_or(
                Some("tmpfs"),
                root,
                Some("tmpfs"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                Some("mode=0755"),
            )?;
            match &spec.system_root {
                Some(system_root) => {
                    let system_root = sources.get(system_root);
                    bind_system_dirs(root, &system_root)?;
                    bind_host_entry(&system_root.join("etc"), &root.join("etc"))?;
                }
                None => {
                    bind_system_dirs(root, Path::new("/"))?;
                    build_etc(root)?;
                }
            }
        }
    }
    for (mount_point, layer) in &spec.layers {
        mount_layer(root, mount_point, layer, sources)?;
    }
    build_proc(root)?;
    build_dev(root)?;
    build_sys(root, spec)?;
    if !spec.hosts.is_empty() {
        add_hosts(root, spec)?;
    }
    let tmp_size = scratch_options(spec.tmp_bytes);
    for scratch in ["tmp", "run"] {
        let target = root.join(scratch);
        mkdir(&target)?;
        mount_or(
            Some("tmpfs"),
            &target,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(&tmp_size),
        )?;
    }
    if image {
        // The image's `HOME` (with its shell start-up files, conda's initialization) is
        // part of its root; create it when the image lacks it.
        mkdir(&inside(root, &spec.home.1))?;
    } else {
        mkdir(&root.join("var"))?;
        symlink("../tmp", root.join("var/tmp"))
            .map_err(|error| format!("cannot create /var/tmp: {error}"))?;
        let (home_source, home) = &spec.home;
        let home_target = inside(root, home);
        mkdir(&home_target)?;
        bind_writable(&sources.get(home_source), &home_target)?;
    }
    for (path, writable) in &spec.exposures {
        expose(root, path, &sources.get(path), *writable)?;
    }
    for file in &spec.masked_files {
        let target = inside(root, file);
        if target.is_file() {
            bind_read_only(&root.join("dev/null"), &target)?;
        }
    }
    for hidden in &spec.hide_paths {
        let target = inside(root, hidden);
        if target.is_dir() {
            cover_directory(&target)?;
        }
    }
    pivot(root)?;
    if image {
        // The image's root is the workspace's writable layer, as a container's is.
        return Ok(());
    }
    mount_or(
        None::<&str>,
        "/",
        None,
        MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY,
        None,
    )
}

/// `path` (absolute, inside the sandbox) under the new root.
fn inside(root: &Path, path: &Path) -> std::path::PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// Binds the system directories of `system_root` (`/`, or a base root) read-only,
/// recreating those that are symlinks (`/bin -> usr/bin` on merged-`/usr` systems).
fn bind_system_dirs(root: &Path, system_root: &Path) -> Result<(), String> {
    for name in SYSTEM_DIRS {
        bind_host_entry(&system_root.join(name), &root.join(name))?;
    }
    Ok(())
}

/// Shows the host entry `source` at `target` read-only: a symlink is recreated, a directory
/// or file bound; a missing entry is skipped.
fn bind_host_entry(source: &Path, target: &Path) -> Result<(), String> {
    let Ok(metadata) = std::fs::symlink_metadata(source) else {
        return Ok(());
    };
    if let Some(parent) = target.parent() {
        mkdir(parent)?;
    }
    if metadata.file_type().is_symlink() {
        let link = std::fs::read_link(source)
            .map_err(|error| format!("cannot read link {}: {error}", source.display()))?;
        symlink(&link, target)
            .map_err(|error| format!("cannot create {}: {error}", target.display()))
    } else if metadata.is_dir() {
        mkdir(target)?;
        bind_read_only(source, target)
    } else if metadata.is_file() {
        std::fs::write(target, b"")
            .map_err(|error| format!("cannot create {}: {error}", target.display()))?;
        bind_read_only(source, target)
    } else {
        Ok(())
    }
}

/// A tmpfs `/etc` holding the host's [`ETC_ENTRIES`].
fn build_etc(root: &Path) -> Result<(), String> {
    let etc = root.join("etc");
    mkdir(&etc)?;
    mount_or(
        Some("tmpfs"),
        &etc,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("size=1m,mode=0755"),
    )?;
    let host_names: Vec<String> = std::fs::read_dir("/etc")
        .map_err(|error| format!("cannot list /etc: {error}"))?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    for entry in ETC_ENTRIES {
        let names: Vec<String> = match entry.strip_suffix('*') {
            Some(prefix) => host_names
                .iter()
                .filter(|name| name.starts_with(prefix))
                .cloned()
                .collect(),
            None => vec![(*entry).to_owned()],
        };
        for name in names {
            bind_host_entry(&Path::new("/etc").join(&name), &etc.join(&name))?;
        }
    }
    std::fs::write(etc.join("hostname"), "swerve-sandbox\n")
        .map_err(|error| format!("cannot write /etc/hostname: {error}"))?;
    mount_or(
        None::<&str>,
        &etc,
        None,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("size=1m,mode=0755"),
    )
}

/// Shows `/etc/hosts` as the system root's file with [`InitSpec::hosts`] appended,
/// read-only: the file is written in the sandbox's `/dev` tmpfs, bound over `/etc/hosts` and
/// unlinked (the bind keeps it), so it works whichever root (`/etc` tmpfs, a base root's or
/// an image's `/etc`) is in place, as Docker's own `/etc/hosts` does.
fn add_hosts(root: &Path, spec: &InitSpec) -> Result<(), String> {
    let target = root.join("etc/hosts");
    let base = match std::fs::read_to_string(&target) {
        Ok(text) => text,
        Err(error) => {
            return Err(format!(
                "cannot add sandbox.hosts entries: the sandbox's /etc/hosts cannot be read \
                 ({error})"
            ));
        }
    };
    let entries = spec.hosts.iter().cloned().collect();
    let staged = root.join("dev/.swerve-hosts");
    std::fs::write(&staged, crate::hosts::render(&base, &entries))
        .map_err(|error| format!("cannot write the sandbox's hosts file: {error}"))?;
    bind_read_only(&staged, &target)?;
    std::fs::remove_file(&staged)
        .map_err(|error| format!("cannot remove {}: {error}", staged.display()))
}

/// A fresh procfs of the sandbox's PID namespace, with Docker's masked and read-only paths.
fn build_proc(root: &Path) -> Result<(), String> {
    let proc = root.join("proc");
    mkdir(&proc)?;
    mount_or(
        Some("proc"),
        &proc,
        Some("proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None,
    )?;
    for name in PROC_READ_ONLY {
        let target = proc.join(name);
        if target.exists() {
            bind_read_only(&target, &target)?;
        }
    }
    for name in PROC_MASKED {
        mask(&proc.join(name))?;
    }
    Ok(())
}

/// `/sys`, read-only, as a container on a cgroup-v2 host sees it: a sysfs of the sandbox's
/// network namespace (the host's `/sys` bound when the host's network is shared), Docker's
/// masked paths covered, the sandbox's own cgroup2 view at `/sys/fs/cgroup` and its CPUs as
/// the online ones (see [`crate::cpus`]).
fn build_sys(root: &Path, spec: &InitSpec) -> Result<(), String> {
    let sys = root.join("sys");
    mkdir(&sys)?;
    // A fresh sysfs needs the sandbox's own network namespace; it shows that namespace's
    // interfaces, and none of the host's mounts below `/sys`.
    if spec.network
        || mount(
            Some("sysfs"),
            &sys,
            Some("sysfs"),
            PSEUDO_READ_ONLY,
            None::<&str>,
        )
        .is_err()
    {
        bind_host_entry(Path::new("/sys"), &sys)?;
    }
    for name in SYS_MASKED {
        mask(&sys.join(name))?;
    }
    mount_cgroup_view(&sys.join("fs/cgroup"))?;
    if !spec.cpus.is_empty() {
        show_text(
            root,
            &sys.join("devices/system/cpu/online"),
            &format!("{}\n", crate::cpus::cpu_list(&spec.cpus)),
        )?;
    }
    Ok(())
}

/// The sandbox's own cgroup2 hierarchy, read-only, at `target`: rooted at the sandbox's
/// cgroup by its cgroup namespace, as Docker shows it on a cgroup-v2 host. On a cgroup-v1
/// host the unified hierarchy has no controllers, so no limit file is there to misread (the
/// host's v1 `cpu.shares` made pylint count one CPU). Where the kernel refuses the mount, an
/// empty read-only directory: never the host's controllers.
fn mount_cgroup_view(target: &Path) -> Result<(), String> {
    if !target.is_dir() {
        return Ok(());
    }
    if mount(
        Some("cgroup2"),
        target,
        Some("cgroup2"),
        PSEUDO_READ_ONLY,
        None::<&str>,
    )
    .is_ok()
    {
        return Ok(());
    }
    cover_directory(target)
}

/// Covers the file `target` with a read-only file holding `text`. The text is written to the
/// sandbox's `/dev` tmpfs (built before), bound, and unlinked there.
fn show_text(root: &Path, target: &Path, text: &str) -> Result<(), String> {
    if !target.exists() {
        return Ok(());
    }
    let source = root.join("dev").join(format!(
        ".swerve-{}",
        target.file_name().unwrap_or_default().to_string_lossy()
    ));
    std::fs::write(&source, text)
        .map_err(|error| format!("cannot write {}: {error}", source.display()))?;
    let bound = bind_read_only(&source, target);
    std::fs::remove_file(&source)
        .map_err(|error| format!("cannot remove {}: {error}", source.display()))?;
    bound
}

/// Covers `target`: a directory with an empty read-only tmpfs, a file with an empty file.
fn mask(target: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(target) {
        Ok(metadata) if metadata.is_dir() => cover_directory(target),
        Ok(_) => {
            let empty = Path::new("/dev/null");
            mount_or(Some(empty), target, None, MsFlags::MS_BIND, None)
        }
        Err(_) => Ok(()),
    }
}

/// Covers a directory with an empty read-only tmpfs.
fn cover_directory(target: &Path) -> Result<(), String> {
    mount_or(
        Some("tmpfs"),
        target,
        Some("tmpfs"),
        MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("size=4k,mode=0755"),
    )
}

/// Shows the host path `path` (reached through `source`) at the same path inside,
/// read-only unless `writable`.
fn expose(root: &Path, path: &Path, source: &Path, writable: bool) -> Result<(), String> {
    let target = inside(root, path);
    let metadata = std::fs::metadata(source)
        .map_err(|error| format!("cannot expose {}: {error}", path.display()))?;
    if metadata.is_dir() {
        mkdir(&target)?;
    } else if !target.exists() {
        if let Some(parent) = target.parent() {
            mkdir(parent)?;
        }
        std::fs::write(&target, b"")
            .map_err(|error| format!("cannot create {}: {error}", target.display()))?;
    }
    if writable {
        bind_writable(source, &target)
    } else {
        bind_read_only(source, &target)
    }
}

/// Mounts one layer at `mount_point` (an absolute path inside the sandbox).
fn mount_layer(
    root: &Path,
    mount_point: &Path,
    layer: &LayerSpec,
    sources: &HostSources,
) -> Result<(), String> {
    let target = inside(root, mount_point);
    std::fs::create_dir_all(&target)
        .map_err(|error| format!("cannot create mount point {}: {error}", target.display()))?;
    match layer {
        LayerSpec::Overlay {
            lowers,
            upper,
            work,
        } => {
            let lower = lowers
                .iter()
                .map(|lower| escape_overlay(&sources.get(lower)))
                .collect::<Vec<_>>()
                .join(":");
            // Mounted in the sandbox's user namespace, overlayfs keeps its whiteouts and
            // opaque markers in `user.overlay.*` attributes.
            let options = format!(
                "lowerdir={},upperdir={},workdir={},userxattr",
                lower,
                escape_overlay(&sources.get(upper)),
                escape_overlay(&sources.get(work))
            );
            mount_or(
                Some("overlay"),
                &target,
                Some("overlay"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                Some(&options),
            )
        }
        LayerSpec::Bind { source } => bind_writable(&sources.get(source), &target),
        LayerSpec::ReadOnly { source } => bind_read_only(&sources.get(source), &target),
    }
}

/// A minimal `/dev`: a few device nodes bound from the host, the usual symlinks, a private `shm`.
fn build_dev(root: &Path) -> Result<(), String> {
    let dev = root.join("dev");
    mkdir(&dev)?;
    mount_or(
        Some("tmpfs"),
        &dev,
        Some("tmpfs"),
        MsFlags::MS_NOSUID,
        Some("size=64k,mode=0755"),
    )?;
    for device in DEVICES {
        let source = Path::new("/dev").join(device);
        if !source.exists() {
            continue;
        }
        let target = dev.join(device);
        std::fs::write(&target, b"")
            .map_err(|error| format!("cannot create {}: {error}", target.display()))?;
        mount_or(
            Some(source.as_path()),
            &target,
            None,
            MsFlags::MS_BIND,
            None,
        )?;
    }
    for (name, link) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        symlink(link, dev.join(name))
            .map_err(|error| format!("cannot create /dev/{name}: {error}"))?;
    }
    build_pts(&dev)?;
    let shm = dev.join("shm");
    mkdir(&shm)?;
    mount_or(
        Some("tmpfs"),
        &shm,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(&scratch_options(SHM_BYTES)),
    )
}

/// The size of the sandbox's `/dev/shm`.
const SHM_BYTES: u64 = 64 << 20;

/// Mount options of a scratch tmpfs (`/tmp`, `/run`, `/dev/shm`) of `size` bytes: world
/// writable with the sticky bit, and at most one inode per KiB of its size. A tmpfs's
/// default inode count is half the machine's memory pages, and empty files take no space:
/// without the bound an inode bomb (millions of empty files) spends the host's kernel memory
/// wherever no memory cgroup charges it (unprivileged runs without a writable cgroup).
fn scratch_options(size: u64) -> String {
    format!(
        "size={size},nr_inodes={},mode=1777",
        (size / 1024).max(1024)
    )
}

/// Pseudo-terminals as a container has them: a devpts instance of the sandbox's own at
/// `/dev/pts` (`newinstance`: none of the host's terminals is in it) and `/dev/ptmx` its
/// multiplexer, as Docker mounts them. Tests that need a terminal (`script`, `pty`,
/// `expect`) run as they do in the images; without it, jq's `tests/shtest` took another
/// branch and failed.
fn build_pts(dev: &Path) -> Result<(), String> {
    let pts = dev.join("pts");
    mkdir(&pts)?;
    mount_or(
        Some("devpts"),
        &pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )?;
    symlink("pts/ptmx", dev.join("ptmx"))
        .map_err(|error| format!("cannot create /dev/ptmx: {error}"))
}

/// Makes `root` the root directory and detaches the host's tree.
fn pivot(root: &Path) -> Result<(), String> {
    let old = root.join(".oldroot");
    mkdir(&old)?;
    nix::unistd::pivot_root(root, &old).map_err(|error| format!("pivot_root failed: {error}"))?;
    std::env::set_current_dir("/")
        .map_err(|error| format!("cannot enter the new root: {error}"))?;
    umount2("/.oldroot", MntFlags::MNT_DETACH)
        .map_err(|error| format!("cannot detach the host root: {error}"))?;
    std::fs::remove_dir("/.oldroot").map_err(|error| format!("cannot remove /.oldroot: {error}"))
}

/// Bind-mounts `source` at `target` recursively, then makes the whole subtree read-only,
/// without set-user-id programs or device files.
fn bind_read_only(source: &Path, target: &Path) -> Result<(), String> {
    bind_with(
        source,
        target,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
    )
}

/// Bind-mounts `source` at `target` recursively, writable, without set-user-id programs or
/// device files.
fn bind_writable(source: &Path, target: &Path) -> Result<(), String> {
    bind_with(source, target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

fn bind_with(source: &Path, target: &Path, attributes: u64) -> Result<(), String> {
    mount_or(
        Some(source),
        target,
        None,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None,
    )?;
    if set_attributes_recursive(target, attributes).is_err() {
        // Kernels before 5.12 lack mount_setattr: remount the top mount alone.
        let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND;
        for (attribute, flag) in [
            (MOUNT_ATTR_RDONLY, MsFlags::MS_RDONLY),
            (MOUNT_ATTR_NOSUID, MsFlags::MS_NOSUID),
            (MOUNT_ATTR_NODEV, MsFlags::MS_NODEV),
        ] {
            if attributes & attribute != 0 {
                flags |= flag;
            }
        }
        mount_or(None::<&str>, target, None, flags, None)?;
    }
    Ok(())
}

/// `mount_setattr(2)` with `AT_RECURSIVE`, setting `attributes` (Linux 5.12+).
fn set_attributes_recursive(target: &Path, attributes: u64) -> Result<(), nix::errno::Errno> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    let path =
        CString::new(target.as_os_str().as_bytes()).map_err(|_| nix::errno::Errno::EINVAL)?;
    let attr = MountAttr {
        attr_set: attributes,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: valid NUL-terminated path and a correctly sized, initialised struct.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::AT_RECURSIVE as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(nix::errno::Errno::last())
    }
}

/// Overlay options separate paths with `,` and `:`; escape them with backslashes.
fn escape_overlay(path: &Path) -> String {
    let mut escaped = String::new();
    for c in path.to_string_lossy().chars() {
        if matches!(c, ',' | ':' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

fn mkdir(path: &Path) -> Result<(), String> {
    std::fs::create_dir_all(path)
        .map_err(|error| format!("cannot create {}: {error}", path.display()))
}

fn mount_or<S: AsRef<Path> + ?Sized>(
    source: Option<&S>,
    target: impl AsRef<Path>,
    fstype: Option<&str>,
    flags: MsFlags,
    data: Option<&str>,
) -> Result<(), String> {
    let target = target.as_ref();
    mount(source.map(|s| s.as_ref()), target, fstype, flags, data).map_err(|error| {
        let what = fstype.map(str::to_owned).unwrap_or_else(|| {
            source
                .map(|s| s.as_ref().display().to_string())
                .unwrap_or_else(|| "remount".into())
        });
        format!("cannot mount {what} at {}: {error}", target.display())
    })
}
