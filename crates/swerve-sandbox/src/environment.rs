//! The [`Environment`] seam: what a rollout (and, through its patch, an evaluation) needs
//! from the place a task lives: the files the tools read and write, a shell, the
//! repository at the base commit, the patch against it, and teardown.
//!
//! Today's implementation is the [`Workspace`], made over a cached base checkout (with the
//! task's environment layered in) or rooted in the task's image; `swerve_rollout::open`
//! chooses between them from the configuration and the task. A remote worker or a
//! container runtime would be another implementation.

use std::path::Path;
use std::sync::Arc;

use swerve_core::{FileOwner, Shell};

use crate::{Patch, PatchOptions, SandboxError, Workspace};

/// A place where one task lives for one rollout.
pub trait Environment: Send + Sync {
    /// The directory on the host holding the repository as the sandbox shows it at its
    /// mount point: the root of the tools' filesystem.
    fn host_root(&self) -> &Path;

    /// Who files the tools create must belong to (`None`: this process's user).
    fn file_owner(&self) -> Option<FileOwner>;

    /// A shell running commands inside, at the repository.
    fn shell(&self) -> Arc<dyn Shell>;

    /// The repository at the base commit, read-only: the originals of modified files.
    fn base_root(&self) -> &Path;

    /// The changes to the repository so far, as a diff against the base commit.
    fn patch(&self, options: &PatchOptions) -> Result<Patch, SandboxError>;

    /// Ends every process and removes what the environment made.
    fn destroy(self: Box<Self>) -> Result<(), SandboxError>;
}

impl Environment for Workspace {
    fn host_root(&self) -> &Path {
        Workspace::host_root(self)
    }

    fn file_owner(&self) -> Option<FileOwner> {
        self.sandbox().file_owner()
    }

    fn shell(&self) -> Arc<dyn Shell> {
        Workspace::shell(self)
    }

    fn base_root(&self) -> &Path {
        &self.base().path
    }

    fn patch(&self, options: &PatchOptions) -> Result<Patch, SandboxError> {
        Workspace::patch(self, options)
    }

    fn destroy(self: Box<Self>) -> Result<(), SandboxError> {
        Workspace::destroy(*self)
    }
}
