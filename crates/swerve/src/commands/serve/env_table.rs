//! The service's open environments: the table the `/v1/envs` handlers ([`super::envs`])
//! and the reaper share (each a `swerve_rollout::gym::GymEnv`), and their teardown. Apart
//! from the handlers so the service's state does not depend on its routes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use swerve_rollout::gym::GymEnv;

use super::errors::ApiError;

/// The open environments.
pub struct Envs {
    open: Mutex<HashMap<String, Arc<Slot>>>,
    /// At most this many open at once.
    pub(super) max: usize,
    ttl: Duration,
    /// Seconds a client is told to wait when `max` are open.
    pub(super) retry_after: u64,
}

/// One environment and when it was last used.
pub(super) struct Slot {
    /// The environment; `None` once destroyed.
    pub(super) env: Arc<tokio::sync::Mutex<Option<GymEnv>>>,
    /// When a request last used it.
    pub(super) last_used: Mutex<Instant>,
}

impl Slot {
    /// Marks it used now.
    pub(super) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }
}

impl Envs {
    pub fn new(max: usize, ttl: Duration, retry_after: u64) -> Self {
        Self {
            open: Mutex::default(),
            max,
            ttl,
            retry_after,
        }
    }

    /// The open environments by id.
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Slot>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Environment `id`, or a 404.
    pub(super) fn get(&self, id: &str) -> Result<Arc<Slot>, ApiError> {
        self.lock().get(id).cloned().ok_or_else(|| {
            ApiError::not_found(&format!("environment {id:?} (deleted or expired?)"))
        })
    }

    /// Environments open now.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    /// Destroys the environments idle for longer than the time to live; returns how many.
    pub fn reap(&self) -> usize {
        let expired: Vec<(String, Arc<Slot>)> = self
            .lock()
            .iter()
            .filter(|(_, slot)| slot.idle() > self.ttl)
            .map(|(id, slot)| (id.clone(), slot.clone()))
            .collect();
        let mut reaped = 0;
        for (id, slot) in expired {
            // One in use is not idle; it is looked at again next time.
            let Ok(mut env) = slot.env.clone().try_lock_owned() else {
                continue;
            };
            self.lock().remove(&id);
            destroy(&id, env.take());
            tracing::info!(id = %id, "environment expired");
            reaped += 1;
        }
        reaped
    }

    /// Destroys every environment (at shutdown), waiting for steps in progress.
    pub async fn close_all(&self) -> usize {
        let all: Vec<(String, Arc<Slot>)> = self.lock().drain().collect();
        let closed = all.len();
        for (id, slot) in all {
            let env = slot.env.lock().await.take();
            destroy(&id, env);
        }
        closed
    }

    /// How often the reaper looks: a quarter of the time to live, within 50 ms and 5 s.
    pub fn reap_interval(&self) -> Duration {
        (self.ttl / 4).clamp(Duration::from_millis(50), Duration::from_secs(5))
    }
}

/// Destroys `env`'s workspace (logged when that fails).
pub(super) fn destroy(id: &str, env: Option<GymEnv>) {
    if let Some(env) = env
        && let Err(error) = tokio::task::block_in_place(|| env.destroy())
    {
        tracing::warn!(id = %id, "destroying the environment's workspace: {error}");
    }
}
