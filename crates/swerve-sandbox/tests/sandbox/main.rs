//! swerve-sandbox's integration tests: base checkouts, workspaces, what a sandbox shows of its host, submodules, output caps, the adversarial security suite and the base userland.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-sandbox --test sandbox`), one module
//! per area; `cargo test -p swerve-sandbox --test sandbox <module>::` runs one area.

mod common;

mod base;
mod host_view;
mod network_fixtures;
mod output_cap;
mod security;
mod submodules;
mod userland;
mod workspace;
