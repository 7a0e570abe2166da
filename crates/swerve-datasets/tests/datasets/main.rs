//! swerve-datasets' integration tests: Parquet written by the real `datasets` package
//! (fixtures made by `scripts/make-dataset-fixtures.py` from real rows), a loopback hub
//! answering as the hub's file API does, and the Hugging Face cache.

mod hub;
mod parquet_rows;
mod selection;

use std::path::PathBuf;

/// `tests/fixtures/NAME`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The fixture hub's directory of repositories.
pub fn hub_root() -> PathBuf {
    fixture("hub")
}
