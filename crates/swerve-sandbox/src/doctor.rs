//! Probes what isolation this host offers, for `swerve doctor` and for choosing fallbacks.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use swerve_core::Shell;

use crate::cgroup::CgroupSupport;
use crate::identity::{IdMap, hand_over};
use crate::quota::human_bytes;
use crate::sandbox::{Layer, Placement};
use crate::view::HostView;
use crate::{Cache, Isolation, Sandbox, SandboxConfig, Userland};

/// What the host offers, each with the reason when it is missing.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// Namespaced sandboxes start (`Err` holds why not).
    pub namespaces: Result<(), String>,
    /// overlayfs mounts inside a sandbox.
    pub overlay: Result<(), String>,
    /// The cgroup layout usable for limits.
    pub cgroups: CgroupSupport,
    /// The cache filesystem can clone files (reflink).
    pub reflink: Result<(), String>,
    /// A sandboxed command cannot open a TCP connection out (checked against loopback).
    pub network_isolated: Result<(), String>,
    /// What confines a sandboxed command: user namespace, capabilities, seccomp, the
    /// filesystem view and the disk quota.
    pub confinement: Result<Confinement, String>,
    /// Whose `/usr`, `/bin`, `/lib*` and `/etc` recipe sandboxes show, and the base root's
    /// state (`Err` when it cannot be used here).
    pub userland: Result<String, String>,
    /// `git --version`.
    pub git: Result<String, String>,
    /// `nsenter` (util-linux), which runs git inside a sandbox to compute its patch.
    pub nsenter: Result<String, String>,
    /// Python interpreters found on PATH and under pyenv.
    pub pythons: Vec<(String, PathBuf)>,
    /// `bwrap --version`, if installed (only used by benchmarks, for comparison).
    pub bwrap: Option<String>,
}

/// Probes the host using `cache` for scratch space, with the sandbox settings of `config`
/// (namespaces forced on), in tens of milliseconds.
pub fn probe(cache: &Cache, config: &SandboxConfig) -> Capabilities {
    let scratch = tempfile::Builder::new()
        .prefix("doctor-")
        .tempdir_in(cache.root());
    let SandboxProbe {
        namespaces,
        overlay,
        network_isolated,
        confinement,
    } = match &scratch {
        Ok(scratch) => probe_sandbox(cache, config, scratch.path()),
        Err(error) => SandboxProbe::failed(format!(
            "cannot create scratch space in {}: {error}",
            cache.root().display()
        )),
    };
    let reflink = match &scratch {
        Ok(scratch) => {
            let file = scratch.path().join("reflink-source");
            let _ = std::fs::write(&file, b"x");
            let output = Command::new("cp")
                .arg("--reflink=always")
                .arg(&file)
                .arg(scratch.path().join("reflink-copy"))
                .output();
            match output {
                Ok(output) if output.status.success() => Ok(()),
                Ok(output) => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
                Err(error) => Err(error.to_string()),
            }
        }
        Err(error) => Err(error.to_string()),
    };
    Capabilities {
        namespaces,
        overlay,
        cgroups: CgroupSupport::detect(),
        reflink,
        network_isolated,
        confinement,
        userland: cache.describe_userland(config.userland, &config.base_userland),
        git: version_of("git", "--version").ok_or_else(|| "git not found on PATH".to_owned()),
        nsenter: version_of("nsenter", "--version")
            .ok_or_else(|| "nsenter not found on PATH".to_owned()),
        pythons: find_pythons(),
        bwrap: version_of("bwrap", "--version"),
    }
}

/// What confines a sandboxed command, as seen from inside one.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// Who the sandbox's users are on the host.
    pub identity: String,
    /// `/proc/self/uid_map` as a command reads it.
    pub uid_map: String,
    /// A command's effective capabilities (`CapEff`), which hold only over what the
    /// sandbox's own user namespace owns.
    pub capabilities: String,
    /// `Seccomp` and `NoNewPrivs` as a command's `/proc/self/status` shows them.
    pub seccomp: String,
    /// What a command sees at `/`.
    pub root_entries: Vec<String>,
    /// Host paths shown besides the system directories, with whether they are writable.
    pub exposures: Vec<(PathBuf, bool)>,
    /// How the disk quota is enforced.
    pub quota: String,
}

/// What [`probe_sandbox`] found; each field as in [`Capabilities`].
struct SandboxProbe {
    namespaces: Result<(), String>,
    overlay: Result<(), String>,
    network_isolated: Result<(), String>,
    confinement: Result<Confinement, String>,
}

impl SandboxProbe {
    /// Every check failed for the same reason.
    fn failed(why: String) -> Self {
        Self {
            namespaces: Err(why.clone()),
            overlay: Err(why.clone()),
            network_isolated: Err(why.clone()),
            confinement: Err(why),
        }
    }
}

fn probe_sandbox(cache: &Cache, config: &SandboxConfig, scratch: &std::path::Path) -> SandboxProbe {
    let config = SandboxConfig {
        isolation: Isolation::Namespaces,
        ..config.clone()
    };
    let ids = match IdMap::for_this_process(config.subordinate_ids) {
        Ok(ids) => ids,
        Err(error) => {
            return SandboxProbe::failed(error);
        }
    };
    let hide = [cache.root().to_path_buf()];
    // The view of a built base root; the probe never builds one (minutes).
    let base_root = match config.userland {
        Userland::Host => None,
        Userland::Base => cache
            .built_base_root(&config.base_userland)
            .map(|root| root.path),
    };
    let dirs: Vec<PathBuf> = ["lower", "upper", "work", "home"]
        .iter()
        .map(|name| scratch.join(name))
        .collect();
    for dir in &dirs {
        let _ = std::fs::create_dir_all(dir);
        let _ = hand_over(dir, ids.root_owner());
    }
    let start = |layer, name: &str| {
        let placement = Placement {
            name,
            hide: &hide,
            cgroups: CgroupSupport::Unavailable,
            extra_layers: &[],
            ids: &ids,
            home: &dirs[3],
            quota: None,
            system_root: base_root.as_deref(),
        };
        Sandbox::start(layer, &config, &placement).map_err(|error| error.to_string())
    };
    let plain = start(
        Layer::Directory(&dirs[0]),
        &format!("doctor-{}", std::process::id()),
    );
    let namespaces = plain.as_ref().map(|_| ()).map_err(Clone::clone);
    let network = match &plain {
        Ok(sandbox) => match sandbox.run("exec 3<>/dev/tcp/127.0.0.1/9 2>/dev/null || python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 1)'", Duration::from_secs(5)) {
            Ok(outcome) if !outcome.success() => Ok(()),
            Ok(_) => Err("a sandboxed command opened a network connection".to_owned()),
            Err(error) => Err(error.to_string()),
        },
        Err(error) => Err(error.clone()),
    };
    let confinement = match &plain {
        Ok(sandbox) => confinement(sandbox, &ids),
        Err(error) => Err(error.clone()),
    };
    drop(plain);
    let overlay = start(
        Layer::Overlay {
            lowers: &dirs[..1],
            upper: &dirs[1],
            work: &dirs[2],
        },
        &format!("doctor-overlay-{}", std::process::id()),
    )
    .map(|_| ());
    SandboxProbe {
        namespaces,
        overlay,
        network_isolated: network,
        confinement,
    }
}

/// Reads a sandboxed command's own view of its identity, capabilities, filter and root.
fn confinement(sandbox: &Sandbox, ids: &IdMap) -> Result<Confinement, String> {
    let outcome = sandbox
        .run(
            "cat /proc/self/uid_map; grep -E '^(CapEff|Seccomp|NoNewPrivs):' /proc/self/status; \
             echo ---; ls -A /",
            Duration::from_secs(5),
        )
        .map_err(|error| error.to_string())?;
    let text = outcome.stdout_text();
    let (status, listing) = text.split_once("---\n").unwrap_or((&text, ""));
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|value| value.trim().to_owned())
            .unwrap_or_else(|| "unknown".into())
    };
    let uid_map = status
        .lines()
        .next()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let env = sandbox.config().command_env();
    let host_home = std::env::var_os("HOME").map(PathBuf::from);
    let view = HostView::new(
        sandbox.config(),
        &env,
        &[sandbox.config().mount_point.clone()],
        host_home.as_deref(),
    )
    .map_err(|error| error.to_string())?;
    Ok(Confinement {
        identity: ids.describe(),
        uid_map,
        capabilities: field("CapEff:"),
        seccomp: format!(
            "mode {} (2 = filter), no_new_privs {}",
            field("Seccomp:"),
            field("NoNewPrivs:")
        ),
        root_entries: listing.split_whitespace().map(str::to_owned).collect(),
        exposures: view.exposures,
        quota: match sandbox.config().limits.disk_bytes {
            Some(bytes) => format!("{} per workspace; {QUOTA_MECHANISM}", human_bytes(bytes)),
            None => "none (limits.disk_bytes is unset)".into(),
        },
    })
}

/// How this build enforces `limits.disk_bytes` (see [`crate::quota`]).
const QUOTA_MECHANISM: &str = "measured: a watchdog sums each workspace's writable layers and HOME and stops its commands past the quota; single files capped by RLIMIT_FSIZE";

/// The first line `PROGRAM FLAG` prints (on stdout, or stderr as Python 2 does).
fn version_of(program: &str, flag: &str) -> Option<String> {
    let output = Command::new(program).arg(flag).output().ok()?;
    let text = if output.stdout.is_empty() {
        &output.stderr
    } else {
        &output.stdout
    };
    output.status.success().then(|| {
        String::from_utf8_lossy(text)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_owned()
    })
}

/// `python3`, `python3.X` on PATH and pyenv versions, each with its version text.
fn find_pythons() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            for minor in (6..=14).rev() {
                candidates.push(dir.join(format!("python3.{minor}")));
            }
            candidates.push(dir.join("python3"));
        }
    }
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")));
    if let Some(versions) = pyenv_root.map(|root| root.join("versions"))
        && let Ok(entries) = std::fs::read_dir(versions)
    {
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path().join("bin").join("python"))
            .collect();
        dirs.sort();
        candidates.extend(dirs);
    }
    let mut seen = std::collections::HashSet::new();
    for candidate in candidates {
        let is_shim = candidate
            .components()
            .any(|part| part.as_os_str() == "shims");
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if is_shim || !real.is_file() || !seen.insert(real.clone()) {
            continue;
        }
        if let Some(version) = version_of(&real.to_string_lossy(), "--version") {
            found.push((version, real));
        }
    }
    found
}
