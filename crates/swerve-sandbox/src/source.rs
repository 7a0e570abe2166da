//! Where a task's repository comes from: a local clone, a bare repository, a git bundle, or a URL.
//!
//! Lookup order for a repository `owner/name`: an explicit mapping (config `[repos]`), the
//! task's own `local_repo_path`, then `DIR/owner/name`, `DIR/owner/name.git` and
//! `DIR/owner/name.bundle` under each repositories directory in turn (`--repos` first).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use swerve_core::task::Task;

use crate::SandboxError;

/// A place `git clone` can copy a repository from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoSource {
    /// A working clone, a bare repository, or a bundle file on this machine.
    Local(PathBuf),
    /// A URL git understands (`https://…`, `ssh://…`, `file://…`).
    Url(String),
}

impl RepoSource {
    /// Parses a mapping value: a URL if it has a scheme, else a local path.
    pub fn parse(text: &str) -> Self {
        if text.contains("://") || text.starts_with("git@") {
            Self::Url(text.to_owned())
        } else {
            Self::Local(PathBuf::from(text))
        }
    }

    /// The text given to `git clone`.
    pub fn as_clone_arg(&self) -> String {
        match self {
            Self::Local(path) => path.display().to_string(),
            Self::Url(url) => url.clone(),
        }
    }
}

impl std::fmt::Display for RepoSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_clone_arg())
    }
}

/// How repository names map to sources.
#[derive(Debug, Clone, Default)]
pub struct RepoMap {
    /// Directories holding repositories as `owner/name`, searched in order.
    pub repos_dirs: Vec<PathBuf>,
    /// Explicit `owner/name` → path or URL mappings.
    pub explicit: BTreeMap<String, String>,
}

impl RepoMap {
    /// Finds the source of `task`'s repository: the explicit mapping, the task's
    /// `local_repo_path`, then the repositories directories.
    pub fn resolve(&self, task: &Task) -> Result<RepoSource, SandboxError> {
        let repo = task.repo.as_str();
        if let Some(target) = self.explicit.get(repo) {
            return Ok(RepoSource::parse(target));
        }
        let mut looked = vec!["no [repos] mapping".to_owned()];
        if let Some(path) = task.local_repo_path() {
            if Path::new(path).exists() {
                return Ok(RepoSource::Local(PathBuf::from(path)));
            }
            looked.push(format!("local_repo_path {path} does not exist"));
        }
        self.find_in_dirs(repo, looked)
    }

    /// Finds the source of the repository `repo` (`owner/name`) that no task names (a
    /// submodule's): the explicit mapping, then the repositories directories.
    pub fn resolve_name(&self, repo: &str) -> Result<RepoSource, SandboxError> {
        if let Some(target) = self.explicit.get(repo) {
            return Ok(RepoSource::parse(target));
        }
        self.find_in_dirs(repo, vec!["no [repos] mapping".to_owned()])
    }

    /// `DIR/repo`, `DIR/repo.git` or `DIR/repo.bundle` in the first repositories directory
    /// holding one; else an error listing `looked` and every place tried.
    fn find_in_dirs(
        &self,
        repo: &str,
        mut looked: Vec<String>,
    ) -> Result<RepoSource, SandboxError> {
        for dir in &self.repos_dirs {
            for candidate in [
                dir.join(repo),
                dir.join(format!("{repo}.git")),
                dir.join(format!("{repo}.bundle")),
            ] {
                if candidate.exists() {
                    return Ok(RepoSource::Local(candidate));
                }
                looked.push(format!("no {}", candidate.display()));
            }
        }
        if self.repos_dirs.is_empty() {
            looked.push("no --repos directory given".to_owned());
        }
        Err(SandboxError::RepoNotFound {
            repo: repo.to_owned(),
            looked: looked.join(", "),
        })
    }
}
