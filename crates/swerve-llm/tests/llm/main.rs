//! swerve-llm's integration tests: the HTTP model against the shared loopback model server (faults, retries, API keys, TLS, embeddings).
//!
//! One integration-test binary for the crate (`cargo test -p swerve-llm --test llm`), one module
//! per area; `cargo test -p swerve-llm --test llm <module>::` runs one area.

mod support;

mod api_key;
mod embeddings;
mod http;
mod tls;
