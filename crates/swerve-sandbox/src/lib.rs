//! Copy-on-write workspaces over cached base checkouts, and sandboxed command execution.
//!
//! A [`Cache`] prepares one read-only base checkout per (repository, commit) and reuses it
//! across runs. A [`Workspace`] is one rollout's private, writable view of a base (an
//! overlay in a private mount namespace where the kernel allows it, else a reflink or plain
//! copy) with a [`Sandbox`] that runs shell commands in it: its own user namespace (no host
//! privilege, also when swerve runs as root), mount, PID, network, IPC, UTS and cgroup
//! namespaces, a seccomp filter, a minimal view of the host's files, cgroup limits and a
//! disk quota, the repository always at the same path (`/testbed`). A workspace's [`Patch`]
//! is its diff against the base commit. A workspace is the first implementation of the
//! [`Environment`] seam, what a rollout needs from the place a task lives. See
//! `docs/sandbox.md` and `docs/security.md`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod base;
mod cache;
mod capture;
mod cgroup;
mod config;
mod cpus;
mod doctor;
mod environment;
mod error;
mod git;
mod host;
mod hosts;
mod identity;
mod image_workspace;
mod init;
mod long_command;
mod patch;
mod protocol;
mod quota;
mod sandbox;
mod scrub;
mod source;
mod submodules;
mod tree;
mod userland;
mod view;
mod workspace;

pub use base::{BASE_FORMAT, BaseCheckout};
pub use cache::Cache;
pub use cgroup::CgroupSupport;
pub use config::{Exposure, IdRange, Isolation, Limits, SandboxConfig};
pub use doctor::{Capabilities, Confinement, probe};
pub use environment::Environment;
pub use error::SandboxError;
pub use host::{HostSystem, KERNEL_FEATURES, KernelFeature};
pub use hosts::is_host_name;
pub use identity::sandbox_ids;
pub use image_workspace::IMAGE_SCRUB_FORMAT;
pub use patch::{Patch, PatchOptions};
pub use sandbox::{IsolationInForce, Sandbox, set_init_command};
pub use source::{RepoMap, RepoSource};
pub use submodules::Submodules;
pub use userland::{
    BASE_ROOT_FORMAT, BaseRoot, BaseUserland, SWEBENCH_BASE_PACKAGES, Userland, host_glibc,
};
pub use view::is_system_path;
pub use workspace::{ExtraLayer, ImageRoot, LayerAccess, Strategy, Workspace, WorkspaceOptions};
