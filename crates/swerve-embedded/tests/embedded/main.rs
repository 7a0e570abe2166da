//! swerve-embedded's integration tests: the real default model, Hugging Face model directories, load errors and the tokenizer builder.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-embedded --test embedded`), one module
//! per area; `cargo test -p swerve-embedded --test embedded <module>::` runs one area.

mod common;

mod embedded;
mod hf_dir;
mod load_errors;
mod tokenizer_builder;
