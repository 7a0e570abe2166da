//! swerve-replay's integration tests: each scaffold's shell semantics over real processes
//! and a real git repository, runs replayed to their submissions, timeouts, the shared
//! foreign samples, and property tests of every reader of foreign files.
//!
//! One integration-test binary for the crate (`cargo test -p swerve-replay --test replay`).

mod engine;
