//! Tests of `swerve_core::task`: loading and saving task files, round trips, error
//! messages, validation, and properties (no panics, arbitrary tasks round-trip).

mod errors;
mod files;
mod props;
mod validate;

use std::path::PathBuf;

/// A file under `tests/fixtures/`.
fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}
