//! Base checkouts: one cached, verified checkout per (repository, commit), reused by runs.
//!
//! A base is prepared once: cloned from its source without checkout, the commit verified with
//! lazy fetching disabled (so a partial clone's missing blobs are an error, not a network
//! fetch), then made to look like the repository in SWE-bench's evaluation images, which clone
//! the default branch, reset it to the base commit, remove the remote and delete the tags newer
//! than the base commit (`git_clone_timesafe` in SWE-bench's
//! `swebench/image_builder/docker_utils.py`; tags pruned since SWE-bench 4.1, PR #471):
//!
//! - the commit is checked out on the branch the clone made, the one the source's `HEAD` names
//!   (e.g. `main`), or detached when the source's `HEAD` is detached;
//! - a tag is kept when the commit it names (directly, or through annotated tag objects, which
//!   are kept so `git describe` answers as in the images) is the base commit or one of its
//!   ancestors, and that commit's committer time is not later than the base commit's
//!   (SWE-bench's rule, plus ancestry: see `scrub::tags_to_keep`);
//! - everything else is scrubbed (`scrub`): the remote, every other ref, the reflogs, and
//!   every object the kept refs do not reach. The object store is one pack written fresh, so
//!   the base shares nothing with its source (a local clone hard-links the source's packs)
//!   and holds no later commit, tree or blob: the fix is not in it.
//!
//! Preparation happens in a temporary directory renamed into place under a lock, so
//! concurrent runs and crashes never see half a base. `<commit>.v3.ready` (the number is
//! [`BASE_FORMAT`]) marks a finished base; `<commit>.ready` is written too, for older swerve
//! versions sharing the cache. A base of an older format (no tags, or later history in its
//! object store) is rebuilt, and the old one moved to the cache's `retired/` directory rather
//! than deleted, so workspaces layered over it keep working; retired bases are deleted when
//! the cache is opened with no workspace in use.

use std::path::{Path, PathBuf};

use crate::{Cache, RepoSource, SandboxError, git};

/// The format of base checkouts, raised whenever what a base contains changes, so that bases
/// of an older format are rebuilt and caches derived from a base (evaluation environments)
/// can key on it. 1: no tags; 2: the tags SWE-bench's images keep (see the module doc); 3:
/// scrubbed, only the kept history's objects (see `scrub`).
pub const BASE_FORMAT: u32 = 3;

/// A prepared, verified checkout of one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseCheckout {
    /// The checkout directory (with its `.git`).
    pub path: PathBuf,
    /// The full commit id checked out.
    pub commit: String,
}

impl Cache {
    /// Returns the cached checkout of `commit` from `source`, preparing it on first use (or
    /// again when it was prepared in an older [`BASE_FORMAT`]). `repo` (`owner/name`) names
    /// the cache directory.
    pub fn prepare_base(
        &self,
        repo: &str,
        source: &RepoSource,
        commit: &str,
    ) -> Result<BaseCheckout, SandboxError> {
        let commit = commit.trim();
        if commit.is_empty() || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SandboxError::CommitMissing {
                commit: commit.to_owned(),
                repository: source.to_string(),
            });
        }
        let parent = self.bases_dir().join(slug(repo));
        std::fs::create_dir_all(&parent)
            .map_err(SandboxError::io(format!("creating {}", parent.display())))?;
        let path = parent.join(commit);
        let ready = parent.join(format!("{commit}.v{BASE_FORMAT}.ready"));
        if let Some(base) = finished(&path, &ready)? {
            return Ok(base);
        }
        let lock_path = parent.join(format!("{commit}.lock"));
        let _lock = crate::cache::lock_exclusive(&lock_path)?;
        if let Some(base) = finished(&path, &ready)? {
            return Ok(base);
        }
        let staging = parent.join(format!(".staging-{commit}-{}", std::process::id()));
        let _ = crate::tree::remove_tree(&staging);
        let full = build(source, commit, &staging).inspect_err(|_| {
            let _ = crate::tree::remove_tree(&staging);
        })?;
        if path.exists() {
            // An older format's base (or a crash's leftover): workspaces may be layered over it.
            self.retire(&path)?;
        }
        std::fs::rename(&staging, &path).map_err(SandboxError::io(format!(
            "moving base into {}",
            path.display()
        )))?;
        // Atomically: a concurrent `finished` must never read a marker that exists but is
        // still empty.
        for marker in [parent.join(format!("{commit}.ready")), ready] {
            swerve_core::atomic::write_atomically(&marker, |out| {
                std::io::Write::write_all(out, full.as_bytes())
            })
            .map_err(SandboxError::io(format!("writing {}", marker.display())))?;
        }
        Ok(BaseCheckout { path, commit: full })
    }

    /// Moves the base at `path` into the `retired/` directory, where it stays until
    /// [`Cache::remove_retired_bases`] finds no workspace that could be using it.
    fn retire(&self, path: &Path) -> Result<(), SandboxError> {
        let retired = self.retired_dir();
        std::fs::create_dir_all(&retired)
            .map_err(SandboxError::io(format!("creating {}", retired.display())))?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or(0);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let target = retired.join(format!("{name}-{}-{nanos}", std::process::id()));
        std::fs::rename(path, &target).map_err(SandboxError::io(format!(
            "moving the outdated base {} to {}",
            path.display(),
            target.display()
        )))
    }

    /// Deletes the retired bases if no workspace is in use: a workspace made before its base
    /// was retired may still be layered over it.
    pub(crate) fn remove_retired_bases(&self) {
        let Ok(retired) = std::fs::read_dir(self.retired_dir()) else {
            return;
        };
        let in_use = std::fs::read_dir(self.workspaces_dir())
            .map(|mut entries| entries.next().is_some())
            .unwrap_or(true);
        if in_use {
            return;
        }
        for entry in retired.flatten() {
            let _ = crate::tree::remove_tree(&entry.path());
        }
    }
}

/// The base at `path` if `ready` marks it finished.
fn finished(path: &Path, ready: &Path) -> Result<Option<BaseCheckout>, SandboxError> {
    if !(ready.exists() && path.is_dir()) {
        return Ok(None);
    }
    let commit = std::fs::read_to_string(ready)
        .map_err(SandboxError::io(format!("reading {}", ready.display())))?;
    let commit = commit.trim();
    if commit.is_empty() {
        // A marker left empty by an older swerve that crashed while writing it.
        return Ok(None);
    }
    Ok(Some(BaseCheckout {
        path: path.to_path_buf(),
        commit: commit.to_owned(),
    }))
}

/// Clones, verifies and checks out `commit` into `dir`; returns the full commit id.
pub(crate) fn build(source: &RepoSource, commit: &str, dir: &Path) -> Result<String, SandboxError> {
    let source_text = match source {
        RepoSource::Local(path) => std::fs::canonicalize(path)
            .map_err(|_| SandboxError::RepoNotFound {
                repo: path.display().to_string(),
                looked: "the path does not exist".into(),
            })?
            .display()
            .to_string(),
        RepoSource::Url(url) => url.clone(),
    };
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let mut clone = git::command(parent);
    let args: Vec<std::ffi::OsString> = ["clone", "--quiet", "--no-checkout", &source_text]
        .iter()
        .map(Into::into)
        .chain([dir.as_os_str().to_owned()])
        .collect();
    clone.args(&args);
    git::checked(clone, parent, &args)?;
    let full = git::run(
        dir,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{commit}^{{commit}}"),
        ],
    )
    .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    .map_err(|_| SandboxError::CommitMissing {
        commit: commit.to_owned(),
        repository: source_text.clone(),
    })?;
    let missing = git::run(
        dir,
        [
            "rev-list",
            "--objects",
            "--no-walk",
            "--missing=print",
            &full,
        ],
    )?;
    let missing: Vec<String> = String::from_utf8_lossy(&missing.stdout)
        .lines()
        .filter_map(|line| line.strip_prefix('?').map(str::to_owned))
        .collect();
    if !missing.is_empty() {
        return Err(SandboxError::ObjectsMissing {
            commit: full,
            repository: source_text,
            detail: format!("{} missing, e.g. {}", missing.len(), missing[0]),
        });
    }
    // The branch the clone checked out (the source's HEAD), reset to the commit; none when
    // the source's HEAD is detached.
    let branch = git::run(dir, ["symbolic-ref", "--quiet", "HEAD"])
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|name| name.starts_with("refs/heads/"));
    let mut checkout = vec!["-c", "advice.detachedHead=false", "checkout", "--quiet"];
    match &branch {
        Some(name) => checkout.extend(["-B", &name["refs/heads/".len()..]]),
        None => checkout.push("--detach"),
    }
    checkout.push(&full);
    git::run(dir, &checkout).map_err(|error| SandboxError::ObjectsMissing {
        commit: full.clone(),
        repository: source_text.clone(),
        detail: error.to_string(),
    })?;
    crate::scrub::scrub(&crate::scrub::RepoAt::Host(dir), &full, branch.as_deref())?;
    Ok(full)
}

/// A filesystem-safe directory path for `owner/name`.
fn slug(repo: &str) -> PathBuf {
    repo.split('/')
        .filter(|part| !part.is_empty() && *part != "." && *part != "..")
        .map(|part| {
            part.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect()
}
