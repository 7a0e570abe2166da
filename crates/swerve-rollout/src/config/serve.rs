//! The `[serve]` section: how `swerve serve` listens, authenticates, limits its work and
//! where it keeps rollouts (see `docs/serve.md`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Settings of the rollout service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeSection {
    /// The address to listen on (`host:port`; port 0 picks a free one).
    pub listen: String,
    /// The environment variable holding the bearer token clients must send; the service
    /// refuses to start when it is unset or empty.
    pub token_env: String,
    /// The task file that `task_id` in requests is looked up in (its directory also locates
    /// repositories, as for `swerve run --tasks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<PathBuf>,
    /// Where rollouts write `trajectories/<id>.jsonl` and `logs/<id>.log`.
    pub out: PathBuf,
    /// Rollouts (and reward gradings) running at once.
    pub max_rollouts: usize,
    /// Rollout requests that may wait for a free slot; more are answered 429.
    pub queue: usize,
    /// Gym-style environments open at once.
    pub max_envs: usize,
    /// An environment unused for this long is destroyed.
    pub env_ttl_secs: f64,
    /// The largest request body accepted, in bytes (larger ones are answered 413).
    pub max_body_bytes: usize,
    /// On SIGINT or SIGTERM, how long in-flight work may take to finish before it is
    /// stopped and recorded as interrupted.
    pub shutdown_grace_secs: f64,
    /// The `Retry-After` of a 429, in seconds.
    pub retry_after_secs: u64,
    /// Finished rollouts whose results `GET /v1/rollouts/{id}` still returns.
    pub keep_results: usize,
    /// The configuration keys (and the tables under them) a request's `overrides` may set.
    /// None of the defaults holds a path or reaches outside the sandbox.
    pub overridable: Vec<String>,
}

impl Default for ServeSection {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8765".into(),
            token_env: "SWERVE_SERVE_TOKEN".into(),
            tasks: None,
            out: PathBuf::from("runs/serve"),
            max_rollouts: 8,
            queue: 0,
            max_envs: 32,
            env_ttl_secs: 600.0,
            max_body_bytes: 8 << 20,
            shutdown_grace_secs: 30.0,
            retry_after_secs: 5,
            keep_results: 1024,
            overridable: [
                "agent",
                "prompts",
                "tools",
                "patch",
                "run.format",
                "run.env",
                "model.mode",
                "model.sampling",
                "model.extra_body",
                "model.timeout_secs",
                "model.max_retries",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

impl ServeSection {
    /// Whether a request may override the dotted `key`: it is, or lies under, one of
    /// [`ServeSection::overridable`].
    pub fn may_override(&self, key: &str) -> bool {
        self.overridable.iter().any(|allowed| {
            key == allowed
                || key
                    .strip_prefix(allowed.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_allowed_by_whole_key_parts() {
        let serve = ServeSection::default();
        assert!(serve.may_override("agent.max_steps"));
        assert!(serve.may_override("model.sampling.temperature"));
        assert!(serve.may_override("run.format"));
        assert!(!serve.may_override("run.formats"));
        assert!(!serve.may_override("agentx.max_steps"));
        assert!(!serve.may_override("cache_dir"));
        assert!(!serve.may_override("sandbox.network"));
        assert!(!serve.may_override("model.api_key_env"));
        assert!(!serve.may_override("serve.listen"));
    }
}
