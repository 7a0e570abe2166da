//! The userland of recipe sandboxes: where their `/usr`, `/bin`, `/sbin`, `/lib*` and `/etc`
//! come from.
//!
//! With [`Userland::Host`] a sandbox shows the host's system directories and a curated copy
//! of its `/etc`, so which tools exist (`ed`, compilers, `python2`) and their versions depend
//! on the machine swerve runs on. With [`Userland::Base`] it shows a **base root** instead: a
//! Debian root filesystem built once by `debootstrap --variant=minbase --include=<packages>`
//! from the distribution's packages, holding what SWE-bench's base image holds
//! ([`SWEBENCH_BASE_PACKAGES`]), no more and no fewer tools. The same command then gives the
//! same answer on every host.
//!
//! A base root is built once per definition ([`BaseUserland`]: suite, package list and
//! [`BASE_ROOT_FORMAT`], hashed into [`BaseUserland::key`]) into the cache's
//! `userlands/<key>/`, under `userlands/<key>.lock`, in a staging directory renamed into
//! place; `userlands/<key>.ready` records the definition and the root's C library version.
//! Building needs root (debootstrap) and the network to the mirror; using it needs neither.
//!
//! The evaluation environment and toolchains are still the host's (interpreters from pyenv
//! or uv, linked against the host's C library), so a base root must carry a C library at
//! least as new as the host's: [`Cache::base_root`] checks it on every use and refuses an
//! older one with the fix. Use the host's Debian release as the suite (the default,
//! `bookworm`, is the release swerve is developed on).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Cache, SandboxError};

/// Where a recipe sandbox's system directories (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`)
/// come from. Tasks that run in a container image always use the image's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Userland {
    /// The host's system directories, read-only, and a curated copy of its `/etc`.
    #[default]
    Host,
    /// The base root of [`SandboxConfig::base_userland`](crate::SandboxConfig), built on
    /// first use.
    Base,
}

/// The packages of SWE-bench's base image (`_DOCKERFILE_BASE_PY` in the `swebench` package's
/// `swebench/harness/dockerfiles/python.py`, 4.1.0: `ubuntu:22.04` plus `apt install`
/// of these), which all have the same names in Debian. Miniconda, which that image adds
/// on top, is not a Debian package: swerve's environments bring their own interpreter.
pub const SWEBENCH_BASE_PACKAGES: &[&str] = &[
    "wget",
    "git",
    "build-essential",
    "libffi-dev",
    "libtiff-dev",
    "python3",
    "python3-pip",
    "python-is-python3",
    "jq",
    "curl",
    "locales",
    "locales-all",
    "tzdata",
];

/// The layout of base roots, part of every key: raised whenever what a build puts in a root
/// changes, so roots built before are built again.
pub const BASE_ROOT_FORMAT: u32 = 1;

/// The definition of a base root (`[sandbox.base_userland]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BaseUserland {
    /// The Debian suite or codename (`bookworm`).
    pub suite: String,
    /// The packages installed over `debootstrap --variant=minbase` (Debian names).
    pub packages: Vec<String>,
    /// The Debian mirror the packages come from. Not part of the key: any mirror of the
    /// suite serves the same packages.
    pub mirror: String,
}

impl Default for BaseUserland {
    fn default() -> Self {
        Self {
            suite: "bookworm".into(),
            packages: SWEBENCH_BASE_PACKAGES
                .iter()
                .map(|name| name.to_string())
                .collect(),
            mirror: "http://deb.debian.org/debian".into(),
        }
    }
}

/// A built base root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseRoot {
    /// The root directory (holding `usr`, `etc`, ...).
    pub path: PathBuf,
    /// The version of its C library (`libc6`), e.g. `2.36-9+deb12u14`.
    pub glibc: String,
}

/// What `userlands/<key>.ready` records.
#[derive(Debug, Serialize, Deserialize)]
struct ReadyMarker {
    definition: BaseUserland,
    glibc: String,
}

impl BaseUserland {
    /// The key naming this definition's root in the cache: 16 hex digits of the SHA-256 of
    /// the suite, the sorted package list and [`BASE_ROOT_FORMAT`].
    pub fn key(&self) -> String {
        let mut packages: Vec<&str> = self.packages.iter().map(String::as_str).collect();
        packages.sort_unstable();
        packages.dedup();
        let text = format!(
            "format={BASE_ROOT_FORMAT}\nsuite={}\npackages={}\n",
            self.suite,
            packages.join(",")
        );
        let digest = Sha256::digest(text.as_bytes());
        digest[..8]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// Checks the definition: a suite and package names made of Debian's characters, an
    /// `http` or `https` mirror.
    pub fn validate(&self) -> Result<(), SandboxError> {
        let debian_name = |name: &str| {
            !name.is_empty()
                && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && name.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '-' | '.')
                })
        };
        if !debian_name(&self.suite) {
            return Err(SandboxError::Userland(format!(
                "sandbox.base_userland.suite = {:?} is not a Debian suite name; give one like \"bookworm\"",
                self.suite
            )));
        }
        if let Some(bad) = self.packages.iter().find(|name| !debian_name(name)) {
            return Err(SandboxError::Userland(format!(
                "sandbox.base_userland.packages: {bad:?} is not a Debian package name (lowercase letters, digits, '+', '-', '.')"
            )));
        }
        if !(self.mirror.starts_with("http://") || self.mirror.starts_with("https://")) {
            return Err(SandboxError::Userland(format!(
                "sandbox.base_userland.mirror = {:?} is not an http(s) URL; give one like \"http://deb.debian.org/debian\"",
                self.mirror
            )));
        }
        Ok(())
    }
}

impl Cache {
    fn userlands_dir(&self) -> PathBuf {
        self.root().join("userlands")
    }

    /// The base root of `definition` if it is built, without building it.
    pub fn built_base_root(&self, definition: &BaseUserland) -> Option<BaseRoot> {
        let key = definition.key();
        finished(
            &self.userlands_dir().join(&key),
            &self.userlands_dir().join(format!("{key}.ready")),
        )
    }

    /// The base root of `definition`, built on first use (minutes: debootstrap downloads
    /// and installs the packages), and checked to run this host's interpreters: its C
    /// library must be at least as new as the host's.
    pub fn base_root(&self, definition: &BaseUserland) -> Result<BaseRoot, SandboxError> {
        let root = match self.built_base_root(definition) {
            Some(root) => root,
            None => self.build_base_root(definition)?,
        };
        check_runs_host_binaries(&root, definition)?;
        Ok(root)
    }

    /// What `userland` (with `definition` as the base root's) is, for `swerve doctor`,
    /// without building anything: `Err` when a built base root cannot run this host's
    /// interpreters.
    pub fn describe_userland(
        &self,
        userland: Userland,
        definition: &BaseUserland,
    ) -> Result<String, String> {
        let base = format!(
            "base: Debian {} with {} packages (key {})",
            definition.suite,
            definition.packages.len(),
            definition.key()
        );
        match userland {
            Userland::Host => Ok(
                "host: this machine's /usr, /bin, /sbin, /lib* and a curated /etc (sandbox.userland = \"base\" fixes them)"
                    .into(),
            ),
            Userland::Base => match self.built_base_root(definition) {
                None => Ok(format!(
                    "{base}, not built yet: the first recipe sandbox builds it (debootstrap, minutes, needs root)"
                )),
                Some(root) => check_runs_host_binaries(&root, definition)
                    .map(|()| format!("{base}, glibc {}, at {}", root.glibc, root.path.display()))
                    .map_err(|error| error.to_string()),
            },
        }
    }

    fn build_base_root(&self, definition: &BaseUserland) -> Result<BaseRoot, SandboxError> {
        definition.validate()?;
        let dir = self.userlands_dir();
        std::fs::create_dir_all(&dir)
            .map_err(SandboxError::io(format!("creating {}", dir.display())))?;
        let key = definition.key();
        let path = dir.join(&key);
        let ready = dir.join(format!("{key}.ready"));
        let lock_path = dir.join(format!("{key}.lock"));
        let _lock = crate::cache::lock_exclusive(&lock_path)?;
        if let Some(root) = finished(&path, &ready) {
            return Ok(root);
        }
        if !nix::unistd::Uid::effective().is_root() {
            return Err(SandboxError::Userland(format!(
                "the base userland {key} (Debian {}) is not built yet in {}, and building it needs root (debootstrap); \
                 run swerve once as root with this cache, or set sandbox.userland = \"host\"",
                definition.suite,
                dir.display()
            )));
        }
        let staging = dir.join(format!(".staging-{key}"));
        let _ = crate::tree::remove_tree(&staging);
        let log = dir.join(format!("{key}.log"));
        let glibc = debootstrap(definition, &staging, &log)
            .and_then(|()| finish_root(&staging))
            .inspect_err(|_| {
                let _ = crate::tree::remove_tree(&staging);
            })?;
        if path.exists() {
            // A crash's leftover between the rename and the marker: no workspace uses it.
            crate::tree::remove_tree(&path)
                .map_err(SandboxError::io(format!("removing {}", path.display())))?;
        }
        std::fs::rename(&staging, &path).map_err(SandboxError::io(format!(
            "moving the base userland into {}",
            path.display()
        )))?;
        let marker = serde_json::to_vec_pretty(&ReadyMarker {
            definition: definition.clone(),
            glibc: glibc.clone(),
        })
        .expect("the marker serializes");
        swerve_core::atomic::write_atomically(&ready, |out| {
            std::io::Write::write_all(out, &marker)
        })
        .map_err(SandboxError::io(format!("writing {}", ready.display())))?;
        Ok(BaseRoot { path, glibc })
    }
}

/// The root at `path` if `ready` marks it finished.
fn finished(path: &Path, ready: &Path) -> Option<BaseRoot> {
    let marker: ReadyMarker = serde_json::from_slice(&std::fs::read(ready).ok()?).ok()?;
    path.is_dir().then(|| BaseRoot {
        path: path.to_path_buf(),
        glibc: marker.glibc,
    })
}

/// Runs debootstrap for `definition` into `staging`, its output into `log`.
fn debootstrap(definition: &BaseUserland, staging: &Path, log: &Path) -> Result<(), SandboxError> {
    let log_file =
        File::create(log).map_err(SandboxError::io(format!("creating {}", log.display())))?;
    let mut command = Command::new("debootstrap");
    command.arg("--variant=minbase");
    if !definition.packages.is_empty() {
        command.arg(format!("--include={}", definition.packages.join(",")));
    }
    command
        .arg(&definition.suite)
        .arg(staging)
        .arg(&definition.mirror)
        .stdin(std::process::Stdio::null())
        .stdout(
            log_file
                .try_clone()
                .map_err(SandboxError::io("duplicating the log's descriptor"))?,
        )
        .stderr(log_file);
    tracing::info!(
        "building the base userland (Debian {}, {} packages) with debootstrap; this takes minutes, once",
        definition.suite,
        definition.packages.len()
    );
    let status = command.status().map_err(|error| {
        SandboxError::Userland(format!(
            "cannot run debootstrap ({error}); install it (apt-get install debootstrap) or set sandbox.userland = \"host\""
        ))
    })?;
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(5).collect();
    Err(SandboxError::Userland(format!(
        "debootstrap of Debian {} from {} failed ({status}); its log is {}, ending:\n{}",
        definition.suite,
        definition.mirror,
        log.display(),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    )))
}

/// Makes a fresh debootstrap root a base root: drops what holds the build machine's traces
/// or only serves package downloads, names the host `swerve-sandbox`; returns its C
/// library's version.
fn finish_root(root: &Path) -> Result<String, SandboxError> {
    for dir in [
        "var/lib/apt/lists",
        "var/cache/apt",
        "var/log",
        "usr/share/doc",
        "usr/share/man",
        "usr/share/info",
    ] {
        let dir = root.join(dir);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let removed = if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                crate::tree::remove_tree(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(SandboxError::io(format!("removing {}", path.display())))?;
        }
    }
    for (file, text) in [
        ("etc/hostname", "swerve-sandbox\n"),
        (
            "etc/hosts",
            "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
        ),
    ] {
        let path = root.join(file);
        std::fs::write(&path, text)
            .map_err(SandboxError::io(format!("writing {}", path.display())))?;
    }
    package_version(root, "libc6").ok_or_else(|| {
        SandboxError::Userland(format!(
            "the debootstrap root {} has no libc6 in var/lib/dpkg/status",
            root.display()
        ))
    })
}

/// The installed version of `package` in the dpkg database of `root`.
fn package_version(root: &Path, package: &str) -> Option<String> {
    let status = std::fs::read_to_string(root.join("var/lib/dpkg/status")).ok()?;
    status.split("\n\n").find_map(|stanza| {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        (field("Package") == Some(package)).then(|| field("Version").map(str::to_owned))?
    })
}

/// The host's C library version (`gnu_get_libc_version`), e.g. `2.36`.
pub fn host_glibc() -> String {
    // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) }
        .to_string_lossy()
        .into_owned()
}

/// The numeric parts of a glibc version's upstream part (`2.36-9+deb12u14` → `[2, 36]`).
fn glibc_numbers(version: &str) -> Vec<u32> {
    let upstream = version.split(['-', '+', '~']).next().unwrap_or_default();
    let upstream = upstream.rsplit(':').next().unwrap_or(upstream);
    upstream
        .split('.')
        .map_while(|part| part.parse().ok())
        .collect()
}

/// Refuses a base root whose C library is older than the host's: the host's interpreters
/// (pyenv's, uv's) and the environments built with them would not load in it.
fn check_runs_host_binaries(
    root: &BaseRoot,
    definition: &BaseUserland,
) -> Result<(), SandboxError> {
    check_glibc(&root.glibc, &host_glibc(), &definition.suite)
}

/// The check of [`check_runs_host_binaries`] on two version strings.
pub(crate) fn check_glibc(base: &str, host: &str, suite: &str) -> Result<(), SandboxError> {
    if glibc_numbers(base) >= glibc_numbers(host) {
        return Ok(());
    }
    Err(SandboxError::Userland(format!(
        "the base userland (Debian {suite}) has glibc {base}, older than this host's {host}: \
         the host's interpreters and the environments built with them would not run in it; \
         set sandbox.base_userland.suite to the host's Debian release, or sandbox.userland = \"host\""
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_versions_compare_by_upstream_numbers() {
        assert_eq!(glibc_numbers("2.36-9+deb12u14"), [2, 36]);
        assert_eq!(glibc_numbers("2.41-12"), [2, 41]);
        assert!(check_glibc("2.36-9+deb12u14", "2.36", "bookworm").is_ok());
        assert!(check_glibc("2.41-12", "2.36", "trixie").is_ok());
        let error = check_glibc("2.31-13+deb11u11", "2.36", "bullseye").unwrap_err();
        assert!(
            error.to_string().contains("older than this host's 2.36"),
            "{error}"
        );
    }
}
