//! Sandbox configuration: isolation mode, network, limits, environment, output caps.
//!
//! Every field has a documented default; `docs/sandbox.md` lists them for users.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::userland::{BaseUserland, Userland};

/// How strongly commands are isolated from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// Linux namespaces when the kernel allows them, else a plain subprocess with a warning.
    #[default]
    Auto,
    /// Linux namespaces (user, mount, PID, network, IPC, UTS, cgroup), seccomp and a minimal
    /// filesystem view; an error if unavailable.
    Namespaces,
    /// A plain subprocess in the workspace directory: no isolation at all.
    None,
}

/// Resource limits applied to every command of a sandbox, where the kernel offers them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Memory for the whole sandbox (cgroup memory controller), in bytes. `None` = unlimited.
    pub memory_bytes: Option<u64>,
    /// Number of processes and threads alive at once in the sandbox (cgroup pids controller).
    pub max_processes: Option<u64>,
    /// Size of the sandbox's private `/tmp` (a tmpfs), in bytes.
    pub tmp_bytes: u64,
    /// Largest file a command may write (RLIMIT_FSIZE), in bytes.
    pub file_size_bytes: Option<u64>,
    /// Disk a workspace may use for what its commands write (the repository's layer, the
    /// environment's layer and `HOME`), in bytes. `None` = unlimited. See `docs/sandbox.md`
    /// for how it is enforced.
    pub disk_bytes: Option<u64>,
    /// How many CPUs the sandbox runs on and reports (`nproc`, `os.cpu_count()`,
    /// `os.sched_getaffinity`). `None` = every CPU swerve may use. More than that is an error.
    pub cpus: Option<u32>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: Some(4 << 30),
            max_processes: Some(1024),
            tmp_bytes: 1 << 30,
            file_size_bytes: Some(4 << 30),
            disk_bytes: Some(10 << 30),
            cpus: None,
        }
    }
}

/// Everything that shapes a sandbox. `SandboxConfig::default()` is closed: no network,
/// limits on, the repository at `/testbed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// Isolation mode.
    pub isolation: Isolation,
    /// Allow network access (shares the host's network namespace). Off by default.
    pub network: bool,
    /// Extra `/etc/hosts` entries, name to address (`{ "httpbin.org" = "127.0.0.1" }`):
    /// appended to the system root's file, read-only. Names must be host names. Needs
    /// namespaces.
    pub hosts: BTreeMap<String, IpAddr>,
    /// Without network: IPv4 packets to addresses outside the sandbox are dropped (a default
    /// route into `lo`) instead of refused, so connecting to one times out, as on a network
    /// where nothing answers (`Network is unreachable` otherwise). Name lookups through a
    /// non-local name server then time out too. Needs namespaces; ignored with `network`.
    pub drop_outbound: bool,
    /// The absolute path at which every rollout sees its repository.
    pub mount_point: PathBuf,
    /// The working directory of commands, inside the sandbox. Defaults to `mount_point`.
    pub workdir: Option<PathBuf>,
    /// Extra environment variables for commands (added to the base environment).
    pub env: BTreeMap<String, String>,
    /// Host environment variables passed through unchanged (e.g. `PATH`, `LANG`).
    /// Secrets are never passed unless listed here.
    pub pass_env: Vec<String>,
    /// Resource limits.
    pub limits: Limits,
    /// Most bytes kept from each of stdout and stderr; the rest is read and dropped.
    pub output_cap_bytes: usize,
    /// Host paths hidden from the sandbox (replaced by empty directories), besides the
    /// always-hidden swerve cache.
    pub hide_paths: Vec<PathBuf>,
    /// Where the system directories (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`) of sandboxes
    /// without a container image come from: the host's, or the base root of
    /// [`SandboxConfig::base_userland`] (see `docs/sandbox.md`).
    pub userland: Userland,
    /// The base root used with `userland = "base"`.
    pub base_userland: BaseUserland,
    /// Host paths shown inside the sandbox at the same path, besides the system directories
    /// (`/usr`, `/bin`, `/sbin`, `/lib*`, a curated `/etc`). Read-only unless marked writable.
    pub expose: Vec<Exposure>,
    /// Also show, read-only, the toolchains the command environment names: the directories
    /// of `PATH` outside the system directories, and `PYENV_ROOT`, `RUSTUP_HOME` and
    /// `CARGO_HOME` (without its credentials).
    pub expose_toolchains: bool,
    /// The sandbox's `HOME`: a fresh, writable directory per workspace at this path.
    pub home: PathBuf,
    /// The host ids the sandbox's users map to when swerve runs as root. `None`: the `root`
    /// entry of `/etc/subuid` and `/etc/subgid`, else [`IdRange::DEFAULT`]. Without root the
    /// sandbox's root is always the invoking user.
    pub subordinate_ids: Option<IdRange>,
}

/// A host path shown inside the sandbox (see [`SandboxConfig::expose`]). Written as a path
/// (read-only) or as `{ path = "...", writable = true }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ExposureSpec", into = "ExposureSpec")]
pub struct Exposure {
    /// The absolute host path; it appears at the same path inside.
    pub path: PathBuf,
    /// Commands may change it (the host's files, not a copy).
    pub writable: bool,
}

impl Exposure {
    /// `path`, read-only.
    pub fn read_only(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            writable: false,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum ExposureSpec {
    Path(PathBuf),
    Table {
        path: PathBuf,
        #[serde(default)]
        writable: bool,
    },
}

impl From<ExposureSpec> for Exposure {
    fn from(spec: ExposureSpec) -> Self {
        match spec {
            ExposureSpec::Path(path) => Self::read_only(path),
            ExposureSpec::Table { path, writable } => Self { path, writable },
        }
    }
}

impl From<Exposure> for ExposureSpec {
    fn from(exposure: Exposure) -> Self {
        if exposure.writable {
            Self::Table {
                path: exposure.path,
                writable: true,
            }
        } else {
            Self::Path(exposure.path)
        }
    }
}

/// A range of host user and group ids: the sandbox's id 0 is host id `start`, its id
/// `count - 1` is host id `start + count - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdRange {
    /// The first host id.
    pub start: u32,
    /// How many ids.
    pub count: u32,
}

impl IdRange {
    /// The last 65,536-id block of the range systemd reserves for containers' user
    /// namespaces (524288–1879048191): never a regular user's, and apart from the blocks
    /// `systemd-nspawn` picks from the start of that range.
    pub const DEFAULT: Self = Self {
        start: 0x6FFF_0000,
        count: 65536,
    };
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            isolation: Isolation::Auto,
            network: false,
            hosts: BTreeMap::new(),
            drop_outbound: false,
            mount_point: PathBuf::from("/testbed"),
            workdir: None,
            env: BTreeMap::new(),
            pass_env: [
                "PATH",
                "LANG",
                "LC_ALL",
                "TERM",
                "PYENV_ROOT",
                "RUSTUP_HOME",
                "CARGO_HOME",
            ]
            .iter()
            .map(|name| name.to_string())
            .collect(),
            limits: Limits::default(),
            output_cap_bytes: 1 << 20,
            hide_paths: Vec::new(),
            userland: Userland::Host,
            base_userland: BaseUserland::default(),
            expose: Vec::new(),
            expose_toolchains: true,
            home: PathBuf::from("/root"),
            subordinate_ids: None,
        }
    }
}

impl SandboxConfig {
    /// The working directory of commands inside the sandbox.
    pub fn workdir(&self) -> PathBuf {
        self.workdir
            .clone()
            .unwrap_or_else(|| self.mount_point.clone())
    }

    /// The environment commands start with: the passed-through host variables, `HOME` (the
    /// sandbox's own), then the configured extras (which win).
    pub fn command_env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = Vec::new();
        for name in &self.pass_env {
            if let Ok(value) = std::env::var(name) {
                env.push((name.clone(), value));
            }
        }
        if !env.iter().any(|(name, _)| name == "PATH") {
            env.push((
                "PATH".into(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            ));
        }
        env.push(("HOME".into(), self.home.to_string_lossy().into_owned()));
        env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
        for (name, value) in &self.env {
            env.retain(|(existing, _)| existing != name);
            env.push((name.clone(), value.clone()));
        }
        env
    }
}
