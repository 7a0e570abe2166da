//! SWE-bench-compatible evaluation without Docker.
//!
//! A [`spec::TestSpec`] says how to test a task (command, test files, log parser, eval type,
//! environment recipe); [`parsers`] turn test logs into per-test statuses; [`grading`] applies
//! SWE-bench 5.x's rules to produce a [`report::InstanceReport`]. [`grader::Grader`] is the
//! seam every command grades through: [`grader::TestGrader`] runs the tests, SWE-World's
//! reward model predicts the grade. [`prepare::TaskEnvironments`] prepares a task's
//! environment and [`workspaces::create`] makes every workspace, a rollout's and a grade's
//! alike. [`guard`] keeps a patch from changing how its tests judge it: the test machinery
//! is put back before the tests run, and canary tests catch a run whose report was
//! rewritten.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod apply;
pub mod check;
pub mod conda;
pub mod environment;
pub mod evaluate;
pub mod fixtures;
pub mod grader;
pub mod grading;
pub mod guard;
pub mod offline;
pub mod parsers;
pub mod predictions;
pub mod prepare;
pub mod r2e_gym_commit;
pub mod report;
pub mod reverse;
pub mod rule;
pub mod spec;
pub mod status;
pub mod workspaces;

pub use status::{EvalType, TestStatus};
