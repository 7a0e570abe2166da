//! From a configuration and a task to a graded, rewarded rollout and its run directory:
//! everything a front end (the `swerve` command line, its HTTP service, a Python binding)
//! needs to run rollouts without reaching into a CLI.
//!
//! Start from [`rollout::RunContext`] (what every rollout of a run shares, built from a
//! [`config::Config`]) and [`rollout::Rollout::run`]:
//!
//! 1. [`open::environment`] makes the task's environment (the one factory of
//!    `swerve_sandbox::Environment`, its workspace made by `swerve_eval::workspaces::create`
//!    as grading's are) and [`open::toolbox`] the tools over it; [`rollout`]
//!    adds SWE-World's and SWE-Edit's interceptors as the configuration asks ([`world`],
//!    [`edit`]);
//! 2. `swerve_agent::episode::Agent::run` writes each step, and the trajectory writer keeps
//!    them in memory;
//! 3. the environment's patch is graded by the run's one `Grader` ([`grading`]);
//! 4. the edit metrics and the training reward are computed from the trajectory in memory
//!    ([`reward`]) and the outcome written.
//!
//! [`gym`] is the gym-style environment driven one step at a time from outside (`swerve
//! serve`'s `/v1/envs`, Python's `swerve.Env`); [`prompt_rows`] writes trainers' prompt
//! datasets for it.
//!
//! [`run`] is a whole run over a task file into a run directory (resume, summary).
//! [`demo`] replays recorded solutions; [`replay`] re-executes recorded trajectories in
//! fresh workspaces. [`models`] is the one model factory (agent, SWE-World, SWE-Edit, edit-bench, backfill
//! teacher, embedded); [`run_dir`] is the layout of run directories (resuming, the
//! trajectories of a run, the candidates of test-time selection); [`summary`] is what a run's
//! `summary.json` and `preds.jsonl` hold ([`resources`]: what the process used). [`batch`]
//! runs a batch of jobs a given number at a time and reports their progress to the front end;
//! [`backfill`] is SWE-AGILE's backfill over files of trajectories, resumable.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod backfill;
pub mod batch;
pub mod config;
pub mod demo;
pub mod edit;
pub mod grading;
pub mod gym;
pub mod models;
pub mod open;
pub mod prompt_rows;
pub mod replay;
pub mod resources;
pub mod reward;
pub mod rollout;
pub mod run;
pub mod run_dir;
pub mod summary;
pub mod world;
