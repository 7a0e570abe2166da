//! The service's rollouts: which are running, which ended lately and with what answer, and
//! their trajectories' records, as the `/v1/rollouts` handlers ([`super::rollouts`]) and the
//! shutdown read them. Apart from the handlers so the service's state does not depend on its
//! routes.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::task::AbortHandle;

use super::errors::ApiError;

/// The rollouts running and those that ended lately.
pub struct Rollouts {
    registry: Mutex<Registry>,
    /// Ended rollouts kept for `GET`.
    keep: usize,
}

#[derive(Default)]
struct Registry {
    running: HashMap<String, Running>,
    ended: HashMap<String, Arc<Value>>,
    /// Ended ids, oldest first.
    order: VecDeque<String>,
}

struct Running {
    instance_id: String,
    trajectory: PathBuf,
    started: Instant,
    abort: Option<AbortHandle>,
}

impl Rollouts {
    pub fn new(keep: usize) -> Self {
        Self {
            registry: Mutex::default(),
            keep,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims `id` for a new rollout writing `trajectory`: a 409 when the id is taken.
    pub(super) fn reserve(
        &self,
        id: &str,
        instance_id: &str,
        trajectory: &Path,
    ) -> Result<(), ApiError> {
        let mut registry = self.lock();
        if registry.running.contains_key(id)
            || registry.ended.contains_key(id)
            || trajectory.exists()
        {
            return Err(ApiError::conflict(format!(
                "a rollout with id {id:?} exists already; give a new session_id"
            )));
        }
        registry.running.insert(
            id.to_owned(),
            Running {
                instance_id: instance_id.to_owned(),
                trajectory: trajectory.to_path_buf(),
                started: Instant::now(),
                abort: None,
            },
        );
        Ok(())
    }

    /// Gives running rollout `id` the handle that cancels it.
    pub(super) fn attach(&self, id: &str, abort: AbortHandle) {
        if let Some(running) = self.lock().running.get_mut(id) {
            running.abort = Some(abort);
        }
    }

    /// Records that rollout `id` ended with `answer`.
    pub(super) fn end(&self, id: &str, answer: Value) -> Arc<Value> {
        let answer = Arc::new(answer);
        let mut registry = self.lock();
        registry.running.remove(id);
        registry.ended.insert(id.to_owned(), answer.clone());
        registry.order.push_back(id.to_owned());
        while registry.order.len() > self.keep {
            if let Some(oldest) = registry.order.pop_front() {
                registry.ended.remove(&oldest);
            }
        }
        answer
    }

    /// Rollout `id`'s status: running (with its steps so far) or its answer.
    pub(super) fn status(&self, id: &str) -> Option<Value> {
        let registry = self.lock();
        if let Some(answer) = registry.ended.get(id) {
            return Some(answer.as_ref().clone());
        }
        let running = registry.running.get(id)?;
        Some(json!({
            "id": id,
            "status": "running",
            "instance_id": running.instance_id,
            "elapsed_seconds": running.started.elapsed().as_secs_f64(),
            "steps": step_records(&running.trajectory).len(),
        }))
    }

    /// Rollouts running now.
    pub fn running(&self) -> usize {
        self.lock().running.len()
    }

    /// Cancels every running rollout; returns their ids.
    pub fn abort_all(&self) -> Vec<String> {
        let registry = self.lock();
        for running in registry.running.values() {
            if let Some(abort) = &running.abort {
                abort.abort();
            }
        }
        registry.running.keys().cloned().collect()
    }
}

/// The records of a trajectory file (header, steps, outcome), as written so far.
pub(super) fn trajectory_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

pub(super) fn step_records(path: &Path) -> Vec<Value> {
    trajectory_records(path)
        .into_iter()
        .filter(|record| record["type"] == "step")
        .collect()
}
