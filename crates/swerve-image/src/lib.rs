//! OCI images without a Docker daemon.
//!
//! A [`Store`] pulls images from any OCI distribution registry ([`registry`]: anonymous,
//! basic and bearer-token authentication, credentials from the configuration or a Docker
//! `config.json`, HTTPS with the system's roots plus a configured CA, plain HTTP for loopback
//! and insecure registries) or imports them from OCI layouts and `docker save` archives
//! ([`archive`]); keeps their blobs content-addressed and verified, shared by all images
//! ([`blob`]: concurrent fetches of one blob done once, interrupted ones resumed); and
//! unpacks each layer once per id mapping ([`unpack`]) into directories the sandbox stacks as
//! an image's root ([`ImageRoot`]). [`dockerfile`] builds images from Dockerfiles, with no
//! daemon, in swerve's sandbox. See `docs/images.md`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod archive;
pub mod auth;
pub mod blob;
pub mod config;
pub mod dockerfile;
mod error;
pub mod manifest;
pub mod reference;
pub mod registry;
pub mod store;
pub mod unpack;

pub use config::{ImagesConfig, Naming, Rewrite};
pub use error::ImageError;
pub use reference::Reference;
pub use store::{ImageRecord, Store, disk_usage};
pub use swerve_sandbox::ImageRoot;
pub use unpack::IdMapping;

/// Removes a tree, ignoring errors (staging directories).
pub(crate) fn remove_tree(path: &std::path::Path) {
    let _ = std::fs::remove_dir_all(path);
}
