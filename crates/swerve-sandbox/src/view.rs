//! The host paths a sandbox sees besides its system directories: the configured exposures
//! and the toolchains its command environment names.
//!
//! A sandbox's root holds only the system directories, a curated `/etc` and its own layers
//! (see [`crate::init`]). Interpreters and toolchains installed elsewhere (pyenv, rustup,
//! uv's Pythons, anything under a home directory) are shown read-only when the commands'
//! environment points at them: each directory of `PATH` outside the system directories, and
//! `PYENV_ROOT`, `RUSTUP_HOME` and `CARGO_HOME`, whose credential files stay covered. Nothing
//! else of the host is visible unless `sandbox.expose` lists it.

use std::path::{Path, PathBuf};

use crate::SandboxError;
use crate::config::SandboxConfig;

/// Environment variables naming a toolchain's home, each with its default under the user's
/// home directory and the directory under the home whose presence on `PATH` means the
/// toolchain is in use (rustup's proxies live in `CARGO_HOME/bin`).
const TOOLCHAIN_VARIABLES: &[(&str, &str, &str)] = &[
    ("PYENV_ROOT", ".pyenv", ".pyenv"),
    ("RUSTUP_HOME", ".rustup", ".cargo"),
    ("CARGO_HOME", ".cargo", ".cargo"),
];

/// Files inside an exposed `CARGO_HOME` that may hold registry tokens.
const CARGO_CREDENTIALS: &[&str] = &["credentials", "credentials.toml"];

/// Host directories every sandbox already sees (or replaces): toolchains under them need no
/// exposure of their own.
const SYSTEM_PREFIXES: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/sys",
    "/dev", "/tmp", "/run",
];

/// Whether `path` lies in what every sandbox already sees or replaces (the system
/// directories, `/etc`, `/proc`, `/sys`, `/dev`, `/tmp`, `/run`): exposing it adds nothing.
pub fn is_system_path(path: &Path) -> bool {
    SYSTEM_PREFIXES
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// What a sandbox shows of the host beyond its system directories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostView {
    /// Host paths shown at the same path inside, each with whether it is writable; parents
    /// before children.
    pub exposures: Vec<(PathBuf, bool)>,
    /// Files inside exposures that are covered.
    pub masked_files: Vec<PathBuf>,
    /// Variables commands need to find the exposed toolchains: a toolchain found at its
    /// default place under the host's home is named explicitly, since the sandbox's `HOME`
    /// is another directory.
    pub env: Vec<(String, String)>,
}

impl HostView {
    /// The view for `config`, whose commands start with `env`; `layer_points` are the
    /// sandbox's own mount points (paths under them are never host paths); `host_home` is
    /// the home directory of the user running swerve.
    pub fn new(
        config: &SandboxConfig,
        env: &[(String, String)],
        layer_points: &[PathBuf],
        host_home: Option<&Path>,
    ) -> Result<Self, SandboxError> {
        let mut exposures: Vec<(PathBuf, bool)> = Vec::new();
        for exposure in &config.expose {
            if !exposure.path.is_absolute() || !exposure.path.exists() {
                return Err(SandboxError::Setup(format!(
                    "sandbox.expose: {} {}; give an absolute path that exists on this machine",
                    exposure.path.display(),
                    if exposure.path.is_absolute() {
                        "does not exist"
                    } else {
                        "is not an absolute path"
                    }
                )));
            }
            exposures.push((exposure.path.clone(), exposure.writable));
        }
        let mut masked_files = Vec::new();
        let mut added_env = Vec::new();
        if config.expose_toolchains {
            let variable = |name: &str| {
                env.iter()
                    .find(|(key, _)| key == name)
                    .map(|(_, value)| PathBuf::from(value))
            };
            let path: Vec<PathBuf> = env
                .iter()
                .find(|(key, _)| key == "PATH")
                .map(|(_, value)| std::env::split_paths(value).collect())
                .unwrap_or_default();
            let mut candidates = path.clone();
            for (name, default, used_when) in TOOLCHAIN_VARIABLES {
                let home = match variable(name) {
                    Some(value) => Some(value),
                    None => host_home
                        .filter(|home| path.iter().any(|dir| dir.starts_with(home.join(used_when))))
                        .map(|home| home.join(default))
                        .filter(|dir| dir.is_dir())
                        .inspect(|dir| {
                            added_env.push((name.to_string(), dir.to_string_lossy().into_owned()))
                        }),
                };
                if let Some(home) = home {
                    if *name == "CARGO_HOME" {
                        masked_files.extend(CARGO_CREDENTIALS.iter().map(|file| home.join(file)));
                    }
                    candidates.push(home);
                }
            }
            let inside_sandbox = |path: &Path| {
                is_system_path(path) || layer_points.iter().any(|point| path.starts_with(point))
            };
            for candidate in candidates {
                if candidate.is_absolute()
                    && candidate != Path::new("/")
                    && !inside_sandbox(&candidate)
                    && candidate.is_dir()
                {
                    exposures.push((candidate, false));
                }
            }
        }
        exposures.sort();
        exposures.dedup_by(|later, earlier| {
            later.0 == earlier.0 && {
                earlier.1 |= later.1;
                true
            }
        });
        // A path inside an exposure of the same access is already shown.
        let mut kept: Vec<(PathBuf, bool)> = Vec::new();
        for (path, writable) in exposures {
            let covered = kept.iter().any(|(parent, parent_writable)| {
                path.starts_with(parent) && *parent_writable == writable
            });
            if !covered {
                kept.push((path, writable));
            }
        }
        Ok(Self {
            exposures: kept,
            masked_files,
            env: added_env,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Exposure;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn toolchains_outside_the_system_directories_are_exposed_once_each() {
        // Not under /tmp: the sandbox has its own /tmp, so toolchains there are not exposed.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let pyenv = dir.path().join("pyenv");
        let shims = pyenv.join("shims");
        let cargo = dir.path().join("cargo");
        std::fs::create_dir_all(&shims).unwrap();
        std::fs::create_dir_all(cargo.join("bin")).unwrap();
        let path = format!(
            "{}:{}:/usr/bin:/bin:/swerve-env/bin:relative:{}",
            shims.display(),
            cargo.join("bin").display(),
            dir.path().join("missing").display()
        );
        let view = HostView::new(
            &SandboxConfig::default(),
            &env(&[
                ("PATH", &path),
                ("PYENV_ROOT", pyenv.to_str().unwrap()),
                ("CARGO_HOME", cargo.to_str().unwrap()),
            ]),
            &[PathBuf::from("/swerve-env")],
            None,
        )
        .unwrap();
        assert_eq!(view.exposures, vec![(cargo.clone(), false), (pyenv, false)]);
        assert!(view.env.is_empty());
        assert_eq!(
            view.masked_files,
            vec![cargo.join("credentials"), cargo.join("credentials.toml")]
        );
        let none = HostView::new(
            &SandboxConfig {
                expose_toolchains: false,
                ..SandboxConfig::default()
            },
            &env(&[("PATH", &path)]),
            &[],
            None,
        )
        .unwrap();
        assert!(none.exposures.is_empty());
    }

    #[test]
    fn toolchains_at_their_default_places_are_exposed_and_named() {
        let home = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        for dir in [".cargo/bin", ".rustup/toolchains", ".pyenv/versions"] {
            std::fs::create_dir_all(home.path().join(dir)).unwrap();
        }
        let path = format!("{}:/usr/bin", home.path().join(".cargo/bin").display());
        let view = HostView::new(
            &SandboxConfig::default(),
            &env(&[("PATH", &path)]),
            &[],
            Some(home.path()),
        )
        .unwrap();
        let cargo = home.path().join(".cargo");
        let rustup = home.path().join(".rustup");
        assert_eq!(
            view.exposures,
            vec![(cargo.clone(), false), (rustup.clone(), false)]
        );
        assert_eq!(
            view.env,
            vec![
                ("RUSTUP_HOME".to_owned(), rustup.display().to_string()),
                ("CARGO_HOME".to_owned(), cargo.display().to_string()),
            ]
        );
    }

    #[test]
    fn a_configured_exposure_must_exist() {
        let config = SandboxConfig {
            expose: vec![Exposure::read_only("/no/such/dir/for/swerve")],
            ..SandboxConfig::default()
        };
        let error = HostView::new(&config, &[], &[], None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("sandbox.expose: /no/such/dir/for/swerve does not exist"),
            "{error}"
        );
    }
}
