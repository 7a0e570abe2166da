//! The cache directory: base checkouts and rollout layers.
//!
//! Layout (all under one directory, `~/.cache/swerve` unless configured):
//! `bases/<owner>/<name>/<commit>/` (a checkout, read-only by convention) with
//! `<commit>.v3.ready` and `<commit>.ready` markers beside it; `retired/` (bases of an older
//! format, deleted once no workspace is in use); `scrubbed/<key>/` (an image's repository
//! scrubbed, a layer stacked over the image's: see `scrub`); `workspaces/<id>/` (one
//! rollout's layer, removed on destroy, stale ones pruned when their owning process is
//! gone).

use std::path::{Path, PathBuf};

use crate::SandboxError;

/// A cache directory shared by runs.
#[derive(Debug)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// The default location: `$SWERVE_CACHE_DIR`, else `$XDG_CACHE_HOME/swerve`, else `~/.cache/swerve`.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("SWERVE_CACHE_DIR") {
            return PathBuf::from(dir);
        }
        if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
            return PathBuf::from(dir).join("swerve");
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        home.join(".cache").join("swerve")
    }

    /// Opens (creating if needed) the cache at `root`, prunes layers of dead processes and,
    /// if no workspace is left, deletes retired bases.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, SandboxError> {
        let root = root.into();
        for dir in ["bases", "workspaces"] {
            std::fs::create_dir_all(root.join(dir)).map_err(SandboxError::io(format!(
                "creating cache directory {}",
                root.join(dir).display()
            )))?;
        }
        let root = std::fs::canonicalize(&root)
            .map_err(SandboxError::io(format!("resolving {}", root.display())))?;
        let cache = Self { root };
        cache.prune_stale_workspaces();
        cache.remove_retired_bases();
        Ok(cache)
    }

    /// The cache's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn bases_dir(&self) -> PathBuf {
        self.root.join("bases")
    }

    pub(crate) fn retired_dir(&self) -> PathBuf {
        self.root.join("retired")
    }

    pub(crate) fn workspaces_dir(&self) -> PathBuf {
        self.root.join("workspaces")
    }

    /// Removes workspace layers whose owning process no longer exists (left by a crash).
    /// A layer without an `owner` file may be one another thread is creating right now, so it
    /// is removed only once it is a minute old.
    fn prune_stale_workspaces(&self) {
        let Ok(entries) = std::fs::read_dir(self.workspaces_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            let stale = match std::fs::read_to_string(entry.path().join("owner")) {
                Ok(owner) => owner
                    .trim()
                    .parse::<u32>()
                    .is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()),
                Err(_) => entry
                    .metadata()
                    .and_then(|metadata| metadata.modified())
                    .is_ok_and(|modified| {
                        modified
                            .elapsed()
                            .is_ok_and(|age| age > std::time::Duration::from_secs(60))
                    }),
            };
            if stale {
                let _ = crate::tree::remove_tree(&entry.path());
            }
        }
    }
}

/// Creates `path` if needed and holds an exclusive lock on it until the returned guard drops:
/// how concurrent processes prepare one cached thing (a base, a scrubbed layer, a base root)
/// only once.
pub(crate) fn lock_exclusive(
    path: &std::path::Path,
) -> Result<nix::fcntl::Flock<std::fs::File>, crate::SandboxError> {
    let file = std::fs::File::create(path).map_err(crate::SandboxError::io(format!(
        "creating {}",
        path.display()
    )))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, errno)| {
        crate::SandboxError::io(format!("locking {}", path.display()))(errno.into())
    })
}
