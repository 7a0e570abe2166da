//! swerve-sandbox's integration tests: base checkouts, workspaces, output caps, the adversarial security suite and the base userland.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-sandbox --test sandbox`), one module
//! per area; `cargo test -p swerve-sandbox --test sandbox <module>::` runs one area.

mod common;

mod base;
mod output_cap;
mod security;
mod userland;
mod workspace;
