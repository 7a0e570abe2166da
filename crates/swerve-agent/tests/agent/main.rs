//! swerve-agent's integration tests: the agent loop, backfill and the reasoning structure over real repositories and a scripted model.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-agent --test agent`), one module
//! per area; `cargo test -p swerve-agent --test agent <module>::` runs one area.

mod agile_loop;
mod agile_props;
mod backfill;
mod given_calls;
