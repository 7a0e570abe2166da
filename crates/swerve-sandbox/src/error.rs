//! Errors of the sandbox layer, each saying what failed and what to do about it.

use std::path::PathBuf;

/// An error preparing a base, creating a workspace or starting a sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// No local copy or URL is known for a task's repository.
    #[error(
        "repository \"{repo}\" not found: {looked}\nhint: Pass --repos DIR (holding DIR/{repo}), set the task's \"local_repo_path\", or map the repository in the config's [repos] table"
    )]
    RepoNotFound {
        /// The repository, as the task names it (`owner/name`).
        repo: String,
        /// Where swerve looked, for the message.
        looked: String,
    },
    /// A submodule of a base is neither under the repositories directories nor allowed from
    /// the network.
    #[error(
        "submodule {submodule} not found: {looked}\nhint: lay its repository out as DIR/{repo} under a --repos directory (or map \"{repo}\" in the config's [repos] table), or let environment builds use the network"
    )]
    SubmoduleNotFound {
        /// Which: its path, its superproject's checkout, its URL and recorded commit.
        submodule: String,
        /// The `owner/name` looked up.
        repo: String,
        /// Where swerve looked, for the message.
        looked: String,
    },
    /// The base commit is not in the repository.
    #[error(
        "commit {commit} is not in repository {repository}\nhint: fetch it (git -C {repository} fetch origin {commit}) or point swerve at a full clone"
    )]
    CommitMissing {
        /// The task's base commit.
        commit: String,
        /// The local repository it was looked up in.
        repository: String,
    },
    /// Objects the base commit needs are missing (e.g. a partial clone).
    #[error(
        "repository {repository} lacks objects needed to check out {commit} (a partial or shallow clone?): {detail}\nhint: Use a full clone (git clone --no-filter) or run `git -C {repository} fetch --refetch`"
    )]
    ObjectsMissing {
        /// The task's base commit.
        commit: String,
        /// The local repository.
        repository: String,
        /// Git's complaint.
        detail: String,
    },
    /// A git command failed.
    #[error("git {args} failed in {dir}: {stderr}")]
    Git {
        /// The git arguments, space-separated.
        args: String,
        /// The directory git ran in.
        dir: PathBuf,
        /// What git wrote to stderr, trimmed.
        stderr: String,
    },
    /// The sandbox could not be set up.
    #[error("cannot set up the sandbox: {0}")]
    Setup(String),
    /// A task's starting patch (a SWE-smith row's bug) does not apply to its image's code, so
    /// the task's starting state cannot be made, whatever is later tested in it.
    #[error(
        "the task's starting patch does not apply to image {image}: {detail}\nhint: the row's patch was made for other code than its image's; check the row's image_name"
    )]
    StartingPatch {
        /// The image, as referenced.
        image: String,
        /// Git's complaint.
        detail: String,
    },
    /// The base userland cannot be built or used.
    #[error("base userland: {0}")]
    Userland(String),
    /// The sandbox's init process ended before reporting success or failure.
    #[error("cannot start the sandbox: {0}")]
    InitDied(String),
    /// The requested mode is not available here.
    #[error("{0}")]
    Unsupported(String),
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `creating /cache/bases`.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl SandboxError {
    /// A closure turning an `io::Error` into [`SandboxError::Io`] with `context`.
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| Self::Io { context, source }
    }
}
