//! swerve-edit's integration tests: SEARCH/REPLACE blocks, difflib parity, metrics, the llm_editor tool, viewers and the PR-Edit bench.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-edit --test edit`), one module
//! per area; `cargo test -p swerve-edit --test edit <module>::` runs one area.

mod bench;
mod blocks;
mod difflib_parity;
mod metrics;
mod props;
mod tool;
mod viewers;
