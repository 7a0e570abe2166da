//! SWE-AGILE's training side, over recorded trajectories: exact token accounting per step
//! and the compression rate ([`accounting`], measured with a model's chat template through
//! [`tokens`]), the context-size figure ([`plot`]), a trajectory measured for them ([`measure`]), snapshot SFT samples ([`snapshots`]),
//! the rate measured as a rollout ends ([`online`]) and the window of a recorded
//! trajectory ([`window`]). The compression-aware reward is [`crate::reward`]'s. Every one
//! starts from [`Trajectory::conversation`](swerve_core::trajectory::Trajectory::conversation)
//! and sees a step's context through the agent's own
//! [`ContextPolicy`](swerve_agent::agile::ContextPolicy), with kept reasoning inline
//! as the `agile` preset sends it. See `docs/agile.md`.

pub mod accounting;
pub mod measure;
pub mod online;
pub mod plot;
pub mod snapshots;
pub mod tokens;
pub mod window;
