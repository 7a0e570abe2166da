//! `POST /v1/rollouts` and `GET /v1/rollouts/{id}`: one rollout of `swerve run`'s (the
//! same workspace, agent loop, trajectory and grading) per request, run as its own task so
//! its status can be read while it runs, and cancelled (its sandbox destroyed) when the
//! client goes away or the service stops.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use serde_json::{Value, json};
use swerve_core::Task;
use swerve_core::trajectory::Outcome;
use tokio::task::AbortHandle;

use super::errors::ApiError;
use super::requests::{RolloutRequest, overridden};
use super::reward;
use super::rollout_table::trajectory_records;
use super::service::Service;
use swerve_rollout::models::EMBEDDED;
use swerve_rollout::models::{ModelSource, REPLAY};
use swerve_rollout::rollout::{Rollout, RunContext};

/// `POST /v1/rollouts`: runs a rollout to its end and answers with its trajectory, reward,
/// token ids and logprobs (when captured) and patch.
pub async fn create(
    State(service): State<Arc<Service>>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let request: RolloutRequest = service.new_work(body).await?;
    let task = service
        .tasks
        .resolve(request.task.as_ref(), request.task_id.as_deref())?;
    let (shared, model) = prepare(&service, &request, &task)?;
    let id = service.session_id(request.session_id.as_deref(), "rollout")?;
    let permit = service.slots.acquire().await?;
    let rollout = Rollout::named(&service.serve.out, &task, 0, id.clone());
    service
        .rollouts
        .reserve(&id, &task.instance_id, &rollout.path)?;
    let ended = EndGuard {
        service: service.clone(),
        id: id.clone(),
        instance_id: task.instance_id.clone(),
        armed: true,
    };
    let handle = tokio::spawn(async move {
        let _permit = permit;
        let result = match model.for_task(&rollout.task) {
            Ok(model) => rollout.run(&shared, model.as_ref()).await,
            Err(error) => Err(error),
        };
        let answer = match result {
            Ok(outcome) => finished(&rollout, &outcome),
            Err(error) => json!({
                "id": rollout.id(),
                "status": "failed",
                "instance_id": rollout.task.instance_id,
                "error": format!("{error:#}"),
                "log": rollout.log,
            }),
        };
        ended.record(answer)
    });
    service.rollouts.attach(&id, handle.abort_handle());
    // Dropped when the client goes away: the rollout is cancelled with it.
    let mut cancel = CancelOnDrop(Some(handle.abort_handle()));
    let joined = handle.await;
    cancel.0 = None;
    let answer = joined.map_err(|_| ApiError::shutting_down())?;
    if answer["status"] == "failed" {
        return Err(ApiError::internal(&anyhow::anyhow!(
            "rollout {id} failed: {}",
            answer["error"].as_str().unwrap_or("")
        )));
    }
    Ok(Json(answer.as_ref().clone()))
}

/// `GET /v1/rollouts/{id}`.
pub async fn status(
    State(service): State<Arc<Service>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    service
        .rollouts
        .status(&id)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(&format!("rollout {id:?}")))
}

/// What a rollout runs with: its configuration (the request's model, sampling, grading and
/// overrides) and its model.
fn prepare(
    service: &Service,
    request: &RolloutRequest,
    task: &Task,
) -> Result<(RunContext, ModelSource), ApiError> {
    let mut config = overridden(&service.config, &service.serve, &request.overrides)?;
    if request.model.trim().is_empty() {
        return Err(ApiError::bad_field("model", "`model` is empty"));
    }
    if request.model == EMBEDDED {
        return Err(ApiError::bad_field(
            "model",
            "the embedded model is not served: run a model server (vLLM, llama.cpp, …) and \
             give its name and base_url",
        ));
    }
    config.model.model = request.model.clone();
    config.model.base_url = request.base_url.clone();
    config.model.sampling = request.sampling.or(&config.model.sampling);
    config.run.eval = request.evaluate;
    let field = match request.model == REPLAY {
        true => "model",
        false => "base_url",
    };
    let model = ModelSource::new(&config, std::slice::from_ref(task))
        .map_err(|error| ApiError::bad_field(field, format!("{error:#}")))?;
    let shared = RunContext::new(&config, &service.task_file, service.eval_logs())
        .map_err(|error| ApiError::bad_field("overrides", format!("{error:#}")))?;
    Ok((shared, model))
}

/// The answer for a rollout that ended with `outcome`.
fn finished(rollout: &Rollout, outcome: &Outcome) -> Value {
    let records = trajectory_records(&rollout.path);
    let tokens: Vec<Value> = records
        .iter()
        .filter(|record| record["type"] == "step" && record["tokens"].is_object())
        .map(|record| {
            let tokens = &record["tokens"];
            json!({
                "step": record["index"],
                "prompt_ids": tokens["prompt_ids"],
                "completion_ids": tokens["completion_ids"],
                "logprobs": tokens["logprobs"],
            })
        })
        .collect();
    let (reward, reward_parts) = reward::rollout_reward(outcome);
    json!({
        "id": rollout.id(),
        "status": "finished",
        "instance_id": rollout.task.instance_id,
        "exit_reason": outcome.exit_reason.as_str(),
        "exit_detail": outcome.exit_detail,
        "reward": reward,
        "reward_parts": reward_parts,
        "patch": outcome.patch,
        "steps": records.iter().filter(|record| record["type"] == "step").count(),
        "tokens": tokens,
        "usage": outcome.usage,
        "cost": outcome.cost,
        "trajectory_path": rollout.path,
        "trajectory": records,
    })
}

/// Records a rollout's end: its answer, or, when its task is dropped before (client gone,
/// shutdown), that it was interrupted.
struct EndGuard {
    service: Arc<Service>,
    id: String,
    instance_id: String,
    /// Whether the end is still to be recorded.
    armed: bool,
}

impl EndGuard {
    fn record(mut self, answer: Value) -> Arc<Value> {
        self.armed = false;
        self.service.rollouts.end(&self.id, answer)
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        tracing::warn!(id = %self.id, "rollout interrupted before its end");
        self.service.rollouts.end(
            &self.id,
            json!({
                "id": self.id,
                "status": "interrupted",
                "instance_id": self.instance_id,
                "error": "the rollout was cancelled (its client went away or the service stopped); \
                          its sandbox was destroyed and its trajectory has no outcome",
            }),
        );
    }
}

/// Aborts a task when dropped, unless its handle was taken out.
struct CancelOnDrop(Option<AbortHandle>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}
