//! The agent: what the model is told ([`prompt`]), how its replies are read (`reply`,
//! with SWE-AGILE's reasoning structure and context policies in [`agile`]) and the loop
//! that drives it through a task, one tool call per step, recording a trajectory as it goes
//! ([`episode`]). [`backfill`] has a teacher model write SWE-AGILE reasoning and digests
//! into existing trajectories.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agile;
pub mod backfill;
pub mod episode;
pub mod prompt;
mod reply;
