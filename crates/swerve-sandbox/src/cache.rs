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

    /// Removes workspace layers whose owning process no longer exists (left by a crash or a
    /// kill). The owner is the pid in the layer's `owner` file or, before that file is
    /// written, the pid its name starts with (`<pid>-…`, see `Workspace::create`). A dead
    /// owner's sandboxes may still be exiting and writing into the layer for a moment, so a
    /// removal that fails is retried for up to five seconds; what still cannot be removed is left
    /// with a warning for the next open. The retries share one deadline, so a cache holding
    /// layers that can never be removed delays an open by at most that, not that per layer.
    fn prune_stale_workspaces(&self) {
        let Ok(entries) = std::fs::read_dir(self.workspaces_dir()) else {
            return;
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(owner) = layer_owner(&path) else {
                continue;
            };
            if Path::new(&format!("/proc/{owner}")).exists() {
                continue;
            }
            while let Err(error) = crate::tree::remove_tree(&path) {
                if std::time::Instant::now() >= deadline {
                    tracing::warn!(
                        "cannot remove {}, a layer of the finished process {owner}: {error}",
                        path.display()
                    );
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
    }
}

/// The pid that owns the workspace layer at `layer`: its `owner` file's, else the one its
/// name starts with. `None` for an entry that is not a layer.
fn layer_owner(layer: &Path) -> Option<u32> {
    match std::fs::read_to_string(layer.join("owner")) {
        Ok(owner) => owner.trim().parse().ok(),
        Err(_) => layer.file_name()?.to_str()?.split('-').next()?.parse().ok(),
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
