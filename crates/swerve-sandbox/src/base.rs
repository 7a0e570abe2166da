//! Base checkouts: one cached, verified checkout per (repository, commit), reused by runs.
//!
//! A base is prepared once: cloned from its source without checkout, the commit verified,
//! checked out detached with lazy fetching disabled (so a partial clone's missing blobs are
//! an error, not a network fetch), then every ref and reflog is deleted so history after the
//! base commit is unreachable to the agent. Preparation happens in a temporary directory
//! renamed into place under a lock, so concurrent runs and crashes never see half a base.

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use swerve_core::task::Task;

use crate::{Cache, RepoMap, RepoSource, SandboxError, git};

/// A prepared, verified checkout of one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseCheckout {
    /// The checkout directory (with its `.git`).
    pub path: PathBuf,
    /// The full commit id checked out.
    pub commit: String,
}

impl Cache {
    /// The cached checkout of `task`'s base commit, its repository found through `repos`;
    /// see [`Cache::prepare_base`].
    pub fn prepare_task_base(
        &self,
        repos: &RepoMap,
        task: &Task,
    ) -> Result<BaseCheckout, SandboxError> {
        let source = repos.resolve(task)?;
        self.prepare_base(&task.repo, &source, &task.base_commit)
    }

    /// Returns the cached checkout of `commit` from `source`, preparing it on first use.
    /// `repo` (`owner/name`) names the cache directory.
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
        let ready = parent.join(format!("{commit}.ready"));
        if ready.exists() && path.is_dir() {
            return Ok(BaseCheckout {
                path,
                commit: read_ready(&ready)?,
            });
        }
        let lock_path = parent.join(format!("{commit}.lock"));
        let lock_file = File::create(&lock_path).map_err(SandboxError::io(format!(
            "creating {}",
            lock_path.display()
        )))?;
        let _lock = Flock::lock(lock_file, FlockArg::LockExclusive).map_err(|(_, errno)| {
            SandboxError::io(format!("locking {}", lock_path.display()))(errno.into())
        })?;
        if ready.exists() && path.is_dir() {
            return Ok(BaseCheckout {
                path,
                commit: read_ready(&ready)?,
            });
        }
        let staging = parent.join(format!(".staging-{commit}-{}", std::process::id()));
        let _ = crate::workspace::remove_tree(&staging);
        let _ = crate::workspace::remove_tree(&path);
        let full = build(source, commit, &staging).inspect_err(|_| {
            let _ = crate::workspace::remove_tree(&staging);
        })?;
        std::fs::rename(&staging, &path).map_err(SandboxError::io(format!(
            "moving base into {}",
            path.display()
        )))?;
        std::fs::write(&ready, &full)
            .map_err(SandboxError::io(format!("writing {}", ready.display())))?;
        Ok(BaseCheckout { path, commit: full })
    }
}

fn read_ready(ready: &Path) -> Result<String, SandboxError> {
    std::fs::read_to_string(ready)
        .map(|text| text.trim().to_owned())
        .map_err(SandboxError::io(format!("reading {}", ready.display())))
}

/// Clones, verifies and checks out `commit` into `dir`; returns the full commit id.
fn build(source: &RepoSource, commit: &str, dir: &Path) -> Result<String, SandboxError> {
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
    git::run(
        dir,
        [
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "--detach",
            &full,
        ],
    )
    .map_err(|error| SandboxError::ObjectsMissing {
        commit: full.clone(),
        repository: source_text.clone(),
        detail: error.to_string(),
    })?;
    hide_later_history(dir)?;
    Ok(full)
}

/// Deletes every ref, the remote and the reflogs, so only the base commit's history is reachable.
fn hide_later_history(dir: &Path) -> Result<(), SandboxError> {
    let _ = git::run(dir, ["remote", "remove", "origin"]);
    let refs = git::run(dir, ["for-each-ref", "--format=%(refname)"])?;
    let refs = String::from_utf8_lossy(&refs.stdout).into_owned();
    if !refs.trim().is_empty() {
        let mut command = git::command(dir);
        command
            .args(["update-ref", "--no-deref", "--stdin"])
            .stdin(std::process::Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(SandboxError::io("running git update-ref"))?;
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("piped");
            for name in refs.lines() {
                writeln!(stdin, "delete {name}")
                    .map_err(SandboxError::io("writing to git update-ref"))?;
            }
        }
        let status = child
            .wait()
            .map_err(SandboxError::io("waiting for git update-ref"))?;
        if !status.success() {
            return Err(SandboxError::Git {
                args: "update-ref --stdin".into(),
                dir: dir.to_path_buf(),
                stderr: String::new(),
            });
        }
    }
    git::run(dir, ["reflog", "expire", "--expire=now", "--all"])?;
    Ok(())
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
