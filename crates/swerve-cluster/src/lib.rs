//! Scale-out on Ray: `swerve run --ray ADDRESS` and `swerve eval --ray ADDRESS` (or
//! `[cluster] backend = "ray"`).
//!
//! Ray is Python, so the driver ([`driver::Cluster`]) runs the Ray driver script
//! `python/swerve/ray.py` (embedded in this crate, [`driver::RAY_DRIVER`]) with the
//! configured Python and talks JSON lines with it. The script connects to the cluster,
//! places one actor per node, and each actor owns a local `swerve worker` process
//! ([`worker::serve`]) that gets the run's configuration and tasks once ([`protocol::Setup`]),
//! then jobs ([`protocol::Job`]: a rollout, a grading), runs them in a node-local scratch
//! run directory and answers with the finished files and outcome ([`protocol::Reply`]).
//!
//! This process keeps the run directory: [`rollouts::run`] writes each finished rollout's
//! trajectory, log and evaluation logs atomically where a local run writes them, so
//! `preds.jsonl`, `summary.json` and resuming work unchanged; [`grading::ClusterGrader`] is
//! the `Grader` `swerve eval` uses on a cluster. A job whose node died is started again on
//! another node by the script, and its files are written once, when it finishes.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod driver;
pub mod grading;
pub mod protocol;
pub mod rollouts;
pub mod worker;
