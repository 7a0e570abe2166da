//! The swerve binary end to end: every command run as a user runs it, against real
//! repositories, real sandboxes and the shared loopback model server.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-cli --test cli`), one module
//! per area; `cargo test -p swerve-cli --test cli <module>::` runs one area.

mod common;
/// The test images and a registry on loopback, shared with swerve-image's tests.
#[path = "../../../swerve-image/tests/image/support/mod.rs"]
mod image_support;
/// The fetched tokenizers, shared with swerve-chat's tests.
#[path = "../../../swerve-chat/tests/chat/common/mod.rs"]
mod tokenizers;

mod agile;
mod backfill;
mod commands;
mod context;
mod datasets;
mod edit;
mod edit_bench;
mod edit_viewers;
mod embedded;
mod eval;
mod examples;
mod gym;
mod help;
mod images;
mod prompt_mode;
mod replay;
mod run;
mod run_config;
mod select;
mod serve;
mod task_env;
mod training;
mod view;
mod world;
