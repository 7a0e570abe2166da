//! swerve-chat's integration tests: real tokenizers and chat templates against the reference renderings, and their properties.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-chat --test chat`), one module
//! per area; `cargo test -p swerve-chat --test chat <module>::` runs one area.

mod common;

mod properties;
mod reference;
