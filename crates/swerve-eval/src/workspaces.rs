//! The one workspace factory: every workspace swerve makes outside `swerve-sandbox`'s own
//! tests is made by [`create`].
//!
//! A task's workspace is made over one of two [`Origin`]s: a cached base checkout of its
//! repository, or the container image it names (whose repository the sandbox scrubs of
//! everything after `HEAD`, once per image). What the workspace sees besides (the task's
//! environment: prefix, repository layer, interpreter, `PATH`, variables) is in the
//! [`WorkspaceOptions`], which [`TaskEnvironments`](crate::prepare::TaskEnvironments) layers
//! the environment into. Callers: rollouts, the gym, replays and `swerve env` (through
//! `swerve_rollout::open::workspace`), grading by tests ([`crate::evaluate`]), SWE-World's SWR
//! grader, and the environment builds ([`crate::environment`]). Keeping them all here is what
//! makes an agent's workspace and its grade's the same; `tests/eval/workspace_factory.rs`
//! fails when code elsewhere calls `Workspace::create*` itself.

use swerve_sandbox::{BaseCheckout, Cache, ImageRoot, SandboxError, Workspace, WorkspaceOptions};

/// What a workspace is made over.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A cached base checkout: the repository at the task's base commit, shown at the
    /// sandbox's mount point; its commit is the base of patches.
    Checkout(&'a BaseCheckout),
    /// An image unpacked for the sandbox: its layers are the sandbox's root, the repository
    /// (scrubbed, the scrub cached per image) is where the image has it, its `HEAD` is the
    /// base of patches. Needs namespaces and refuses repository layers.
    Image {
        /// The image's unpacked root.
        root: &'a ImageRoot,
        /// The patch that makes the task's starting state from the image's code
        /// ([`crate::rule::starting_patch`]: a SWE-smith row's bug), committed as the
        /// repository's only commit; `None` for the image's `HEAD` as it is.
        starting_patch: Option<&'a str>,
    },
}

/// A fresh workspace over `origin` in `cache`, with `options` (the task's environment, when
/// it has one, already layered in).
pub fn create(
    cache: &Cache,
    origin: Origin<'_>,
    options: &WorkspaceOptions,
) -> Result<Workspace, SandboxError> {
    match origin {
        Origin::Checkout(base) => Workspace::create(cache, base, options),
        Origin::Image {
            root,
            starting_patch,
        } => Workspace::create_from_image(cache, root, options, starting_patch),
    }
}
