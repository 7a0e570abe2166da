//! swerve-core's integration tests: task files (loading, saving, errors, validation,
//! properties) and trajectories (reading, writing, importing foreign formats, properties).
//!
//! One integration-test binary for the crate (`cargo test -p swerve-core --test data_model`),
//! one module per area; `cargo test -p swerve-core --test data_model <module>::` runs one area.

mod task;
mod trajectory_import;
mod trajectory_io;
mod trajectory_props;
