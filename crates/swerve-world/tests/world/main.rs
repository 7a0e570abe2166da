//! swerve-world's integration tests: the router, the shell parser, SWT/SWR contexts, models and data.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-world --test world`), one module
//! per area; `cargo test -p swerve-world --test world <module>::` runs one area.

mod context;
mod data;
mod models;
mod props;
mod router;
mod shell;
