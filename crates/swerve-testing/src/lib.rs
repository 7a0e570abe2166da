//! Test and bench support shared by every crate of the workspace (dev-only, never published).
//!
//! Each crate's integration tests are one binary (`tests/<name>/main.rs` with a module per
//! area) that uses this crate instead of copies of its own:
//!
//! - [`process`]: run a shell command in a directory ([`sh`], [`sh_exact`]) and read what a
//!   command printed ([`stdout`], [`stderr`], [`succeeded`], [`failed`]);
//! - [`repo`]: small git fixture repositories ([`repo::init`], [`repo::commit_all`]);
//! - [`server`]: **the** loopback OpenAI-compatible model server ([`ModelServer`]): scripted
//!   faults at the byte level (a lying `Content-Length`, a body cut short, no answer), or an
//!   answer computed from each request, and every request recorded;
//! - [`hub`]: a loopback Hugging Face hub ([`HubServer`]) serving a directory of dataset
//!   repositories through the hub's file API;
//! - [`shell`]: a real-process `Shell` on the host ([`HostShell`]) for the layers above
//!   the sandbox;
//! - [`trajectory`]: JSON-lines readers ([`json_lines`]);
//! - [`snapshot`]: pinned command output, exit code + stdout + stderr, with filters for temp
//!   paths, timings and hashes ([`assert_cmd_snapshot!`]);
//! - [`bench`]: timing, percentiles and the Markdown table the benchmarks print;
//! - [`browser`]: a headless Chromium driven over the DevTools protocol ([`Browser`],
//!   [`browser::Page`]), for tests of web pages.
//!
//! Snapshots are [insta](https://insta.rs) files under the test binary's `snapshots/`
//! directory. A mismatch fails the test (in CI, `CI=true`, nothing is written). To accept a
//! change without `cargo insta`: `INSTA_UPDATE=always cargo test -p <crate> --test <name>`,
//! then review the `.snap` diff with git.

#![deny(missing_docs)]

pub mod bench;
pub mod browser;
pub mod hub;
pub mod process;
pub mod repo;
pub mod server;
pub mod shell;
pub mod snapshot;
pub mod trajectory;

pub use browser::Browser;
pub use hub::HubServer;
pub use process::{failed, sh, sh_exact, stderr, stdout, succeeded};
pub use server::{ModelServer, Reply, Request};
pub use shell::HostShell;
pub use trajectory::json_lines;

/// insta, for [`assert_cmd_snapshot!`] and tests that pin other text.
pub use insta;
