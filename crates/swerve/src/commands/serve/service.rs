//! The service's state: the configuration every request starts from, the token, the task
//! index, the slots, the rollouts and environments, and whether it is shutting down.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use axum::body::Body;
use axum::http::{HeaderMap, Uri, header};
use serde::de::DeserializeOwned;

use super::env_table::Envs;
use super::errors::{ApiError, read_json};
use super::requests::{TaskIndex, checked_id};
use super::rollout_table::Rollouts;
use super::slots::Slots;
use swerve_eval::grader::Grader;

use swerve_rollout::config::Config;
use swerve_rollout::config::serve::ServeSection;

/// Everything the handlers share.
pub struct Service {
    /// The configuration requests start from (their `overrides` go over it).
    pub config: Config,
    pub serve: ServeSection,
    /// The bearer token; compared in constant time and never logged.
    token: String,
    pub tasks: TaskIndex,
    /// The file tasks' repositories are found from (`serve.tasks`, else the current
    /// directory's `tasks.jsonl`, which need not exist).
    pub task_file: PathBuf,
    /// Slots for rollouts and gradings.
    pub slots: Slots,
    pub rollouts: Rollouts,
    pub envs: Envs,
    shutting_down: AtomicBool,
    next_id: AtomicU64,
}

impl Service {
    /// The service `config` describes, its token read from `serve.token_env`; creates the
    /// output directories.
    pub fn new(config: &Config) -> Result<Self> {
        let serve = config.serve.clone();
        let token = std::env::var(&serve.token_env).unwrap_or_default();
        if token.trim().is_empty() {
            bail!(
                "swerve serve needs a bearer token: set ${} (serve.token_env) to the secret \
                 clients send as `Authorization: Bearer <token>`",
                serve.token_env
            );
        }
        if serve.max_rollouts == 0 || serve.max_envs == 0 {
            bail!("serve.max_rollouts and serve.max_envs must be at least 1");
        }
        if !(serve.env_ttl_secs > 0.0 && serve.shutdown_grace_secs >= 0.0) {
            bail!("serve.env_ttl_secs must be positive and serve.shutdown_grace_secs not negative");
        }
        swerve_rollout::reward::check_run_reward(config)?;
        for dir in ["trajectories", "logs"] {
            let path = serve.out.join(dir);
            std::fs::create_dir_all(&path)
                .with_context(|| format!("cannot create {} (serve.out)", path.display()))?;
        }
        let tasks = TaskIndex::load(serve.tasks.as_deref())?;
        Ok(Self {
            task_file: serve
                .tasks
                .clone()
                .unwrap_or_else(|| PathBuf::from("tasks.jsonl")),
            tasks,
            slots: Slots::new(
                "rollouts",
                serve.max_rollouts,
                serve.queue,
                serve.retry_after_secs,
            ),
            rollouts: Rollouts::new(serve.keep_results),
            envs: Envs::new(
                serve.max_envs,
                Duration::from_secs_f64(serve.env_ttl_secs),
                serve.retry_after_secs,
            ),
            config: config.clone(),
            serve,
            token,
            shutting_down: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
        })
    }

    /// Whether a request carries the token: `Authorization: Bearer <token>`, or for
    /// `reward_path` (OpenRLHF sends no headers) an `access_token` query parameter.
    pub fn authorized(&self, headers: &HeaderMap, uri: &Uri, reward_path: &str) -> bool {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token);
        if let Some(given) = bearer {
            return same_secret(given.trim(), &self.token);
        }
        uri.path() == reward_path
            && uri.query().is_some_and(|query| {
                query.split('&').any(|pair| {
                    pair.strip_prefix("access_token=")
                        .is_some_and(|given| same_secret(given, &self.token))
                })
            })
    }

    /// Refuses new work from now on.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }

    /// A 503 once shutdown has begun.
    pub fn check_open(&self) -> Result<(), ApiError> {
        match self.shutting_down.load(Ordering::SeqCst) {
            true => Err(ApiError::shutting_down()),
            false => Ok(()),
        }
    }

    /// The body of a request for new work, read as JSON into `T` (errors name the field);
    /// a 503 once shutdown has begun.
    pub async fn new_work<T: DeserializeOwned>(&self, body: Body) -> Result<T, ApiError> {
        self.check_open()?;
        read_json(body, self.serve.max_body_bytes).await
    }

    /// The id of a new rollout or environment: the request's `session_id`, checked, else a
    /// [new id](Self::new_id) of `kind`.
    pub fn session_id(&self, given: Option<&str>, kind: &str) -> Result<String, ApiError> {
        match given {
            Some(id) => checked_id(id, "session_id"),
            None => Ok(self.new_id(kind)),
        }
    }

    /// A new id, `<kind>-<milliseconds since 1970>-<counter>`.
    pub fn new_id(&self, kind: &str) -> String {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis());
        let counter = self.next_id.fetch_add(1, Ordering::SeqCst);
        format!("{kind}-{millis}-{counter}")
    }

    /// Where graded patches' logs go.
    pub fn eval_logs(&self) -> PathBuf {
        self.serve.out.join("eval-logs")
    }

    /// The grader `config` (the service's, or an environment's) names, its logs in
    /// [`Service::eval_logs`]. Blocks (it reads the cache directory).
    pub fn grader(&self, config: &Config) -> anyhow::Result<Arc<dyn Grader>> {
        swerve_rollout::grading::grader(
            config,
            config.run.evaluator,
            &self.task_file,
            config.eval_settings(self.eval_logs()),
            &swerve_rollout::grading::analyses(config)?,
        )
    }
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
fn same_secret(given: &str, token: &str) -> bool {
    let (given, token) = (given.as_bytes(), token.as_bytes());
    let mut difference = given.len() ^ token.len();
    for (index, byte) in token.iter().enumerate() {
        difference |= usize::from(byte ^ given.get(index).copied().unwrap_or(0));
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("s3cret", "s3cret"));
        assert!(!same_secret("s3cre", "s3cret"));
        assert!(!same_secret("s3cret!", "s3cret"));
        assert!(!same_secret("", "s3cret"));
        assert!(!same_secret("S3cret", "s3cret"));
    }
}
