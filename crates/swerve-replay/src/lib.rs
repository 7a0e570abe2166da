//! Re-executing recorded agent trajectories in a fresh workspace of their task, to prove an
//! environment against real agents' runs and to mine real observations from them.
//!
//! - [`Scaffold`] tells which agent recorded a trajectory (swerve, mini-swe-agent,
//!   SWE-agent, R2E-Gym, OpenHands) and its execution [`Semantics`]: a fresh `bash` per
//!   action or one persistent session, timeout, variables, the repository's directory.
//! - [`ScaffoldShell`] runs commands with those semantics over a workspace's shell.
//! - [`Action`] and [`Recorded`] read each step's action and recorded answer; [`hazards`]
//!   names actions no environment replays faithfully (network, wall clock, randomness).
//! - [`Replayer`] runs the actions through a [`swerve_tools::Toolbox`] and compares each
//!   answer ([`StepReport`]); [`TrajectoryReport`] and [`ReplayReport`] aggregate the
//!   fidelity report per trajectory and per repository.
//! - [`results`] keeps each trajectory's result in the output directory as it ends, so a
//!   replay of a whole dataset resumes, and builds the report from them in the order given.
//!
//! The command line (`swerve replay`) prepares the workspace and grades; `docs/replay.md`
//! describes the report and the differences from each scaffold that cannot be reproduced.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod action;
pub mod engine;
pub mod hazards;
pub mod report;
pub mod results;
pub mod scaffold;
pub mod shell;

pub use action::{Action, Recorded};
pub use engine::Replayer;
pub use hazards::{Hazard, hazards};
pub use report::{
    Divergence, GradeComparison, PatchComparison, ReplayReport, ReplayRun, StepAgreement,
    StepOutcome, StepReport, Summary, Throughput, TrajectoryReport,
};
pub use results::TrajectoryResult;
pub use scaffold::{Scaffold, Semantics, Session};
pub use shell::{LastOutcome, ScaffoldShell};
