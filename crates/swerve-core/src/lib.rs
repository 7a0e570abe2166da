//! The data model every swerve layer speaks.
//!
//! `swerve-core` holds plain data and the seams between layers: task instances
//! ([`task`]), tool calls ([`tool_call`]), the result of running a command ([`exec`]) and
//! trajectories with their importers from other agents' formats ([`trajectory`]). Its only
//! I/O is reading and writing files: task files, trajectories, the all-or-nothing writes
//! ([`atomic`]) every output of swerve goes through, and creating files as a sandbox's
//! owner ([`owner`]). Besides data: the [`tokens::TokenCounter`] seam, recorded solutions
//! ([`demonstration`]) and the seeded draw ([`seeded`]) every reproducible choice uses.
//! Errors across swerve put their next step on a `hint:` line of its own ([`hint`]).
//! Closed sets of named choices are listed once ([`registry`]).

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod atomic;
pub mod demonstration;
pub mod exec;
pub mod grading;
pub mod hint;
pub mod json_kind;
pub mod owner;
pub mod registry;
pub mod seeded;
pub mod task;
pub mod tokens;
pub mod tool_call;
pub mod trajectory;

pub use exec::{ExecOutcome, Shell};
pub use owner::FileOwner;
pub use task::Task;
pub use tokens::TokenCounter;
pub use tool_call::ToolCall;
