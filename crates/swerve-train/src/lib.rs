//! Training data from swerve trajectories, for the trainers people already run (SkyRL,
//! verl, TRL, OpenRLHF, LLaMA-Factory; FORMATS.md §g). swerve does not train: it scores
//! rollouts and writes what a trainer reads.
//!
//! - [`reward`]: the composable reward of one trajectory ([`reward::reward`]): resolved,
//!   SWE-World's α for rollouts that did not submit, SWE-AGILE's compression bonus, the
//!   step-count penalty of the long-context RL seed, format-error penalties; every part kept.
//! - [`advantage`]: group-relative advantages (GRPO, Dr.GRPO, RLOO), DAPO's dynamic
//!   sampling, unbiased pass@k and group statistics.
//! - [`rft`]: rejection fine-tuning: which trajectories to keep, which turns to train.
//! - [`tts`]: test-time scaling: which of K candidate rollouts of a task to submit.
//! - [`agile`]: SWE-AGILE's exact token accounting, compression rate, context plot and
//!   snapshot samples, counted with a model's chat template.
//! - [`export`]: trainer records: SkyRL step-wise generator output, verl agent-loop output,
//!   TRL prompt/completion, messages with per-message weights.
//! - [`curate`]: task curation: gold patch size, determinism, difficulty, duplicates.
//! - [`stats`]: mean, standard deviation and standard error over repeated runs.
//! - [`rows`]: dataset files, JSON lines or Parquet (feature `parquet`).
//!
//! Everything here is computation over `swerve-core` data and the files it reads and writes;
//! reading run directories is `swerve-rollout`'s job.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod advantage;
pub mod agile;
pub mod curate;
pub mod export;
pub mod reward;
pub mod rft;
pub mod rows;
pub mod stats;
pub mod tts;
