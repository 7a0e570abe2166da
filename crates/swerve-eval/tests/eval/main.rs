//! swerve-eval's integration tests: the patch apply cascade, test environments, log parsers and grading against golden reports, the spec recipes, and that one factory makes every workspace outside the sandbox crate.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-eval --test eval`), one module
//! per area; `cargo test -p swerve-eval --test eval <module>::` runs one area.

mod apply_cascade;
mod environment;
mod grading_families;
mod grading_golden;
mod grading_report;
mod grading_rules;
mod parsers_proptest;
mod patch_reverse;
mod reward_hacks;
mod spec_eval_script;
mod spec_props;
mod spec_recipes;
mod spec_resolve;
mod workspace_factory;
