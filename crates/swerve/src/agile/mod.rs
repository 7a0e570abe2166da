//! SWE-AGILE's training side, over recorded trajectories: exact token accounting per step
//! and the compression rate ([`accounting`], measured with a model's chat template through
//! [`tokens`]), the context-size figure ([`plot`]), the compression-aware reward
//! ([`reward`]) and snapshot SFT samples ([`snapshots`]). Every one starts from
//! [`Trajectory::conversation`](swerve_core::trajectory::Trajectory::conversation) and
//! sees a step's context through the agent's own
//! [`ContextPolicy`](swerve_agent::reasoning::ContextPolicy), with kept reasoning inline
//! as the `agile` preset sends it. See `docs/agile.md`.

pub mod accounting;
pub mod online;
pub mod plot;
pub mod reward;
pub mod snapshots;
pub mod tokens;
pub mod window;
