//! swerve-tools' integration tests: each native tool, the toolbox and the tool-call text formats.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-tools --test tools`), one module
//! per area; `cargo test -p swerve-tools --test tools <module>::` runs one area.

mod common;

mod bash;
mod file_editor;
mod formats_hermes;
mod formats_native;
mod formats_props;
mod formats_xml;
mod fs;
mod parse;
mod search;
mod swe_agent;
mod toolbox;
