//! swerve-image's integration tests: a real registry on loopback and layer unpacking.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-image --test image`), one module
//! per area; `cargo test -p swerve-image --test image <module>::` runs one area.

mod support;

mod build;
mod registry;
mod scrub;
mod unpack;
