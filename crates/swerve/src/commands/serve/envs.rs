//! Gym-style environments over HTTP (each a [`swerve_rollout::gym::GymEnv`]): `POST
//! /v1/envs` opens a task's sandboxed workspace and toolbox and answers with the opening
//! messages and tool specs; `POST /v1/envs/{id}/step` runs a tool call (given, or parsed
//! from a model's reply with the configured format); `POST /v1/envs/{id}/evaluate` grades
//! the current patch and shapes the reward by `[reward]`; `DELETE /v1/envs/{id}` destroys it. An environment idle for
//! `serve.env_ttl_secs` is destroyed by the reaper.
//!
//! Each environment is the whole agent minus the policy: the step answers with the next
//! prompt under the configured context policy, and `evaluate` with the shaped reward.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use serde_json::{Value, json};
use swerve_agent::prompt::Prompts;
use swerve_rollout::gym::{Action, GymEnv, Reply, StepError};

use super::env_table::{Slot, destroy};
use super::errors::{ApiError, read_json};
use super::requests::{EnvRequest, StepRequest, overridden};
use super::service::Service;

/// `POST /v1/envs`.
pub async fn create(
    State(service): State<Arc<Service>>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let request: EnvRequest = service.new_work(body).await?;
    let task = service
        .tasks
        .resolve(request.task.as_ref(), request.task_id.as_deref())?;
    let config = overridden(&service.config, &service.serve, &request.overrides)?;
    // Checked here so that a bad override is the client's error, not the service's.
    config
        .format()
        .map_err(|error| ApiError::bad_field("overrides", format!("{error:#}")))?;
    Prompts::new(&config.prompts)
        .map_err(|error| ApiError::bad_field("overrides", error.to_string()))?;
    let id = service.session_id(request.session_id.as_deref(), "env")?;
    let envs = &service.envs;
    let slot = Arc::new(Slot {
        env: Arc::default(),
        last_used: Mutex::new(Instant::now()),
    });
    // Held while the workspace is made, so a step sent meanwhile waits for it.
    let mut env = slot
        .env
        .clone()
        .try_lock_owned()
        .expect("a new lock is free");
    {
        let mut open = envs.lock();
        if open.contains_key(&id) {
            return Err(ApiError::conflict(format!(
                "an environment with id {id:?} is open already"
            )));
        }
        if open.len() >= envs.max {
            return Err(ApiError::busy(
                &format!("{} environments", envs.max),
                envs.retry_after,
            ));
        }
        open.insert(id.clone(), slot.clone());
    }
    // No await from here on: the request cannot be dropped half-way.
    let opened =
        tokio::task::block_in_place(|| GymEnv::open(id.clone(), config, &service.task_file, task));
    let opened = match opened {
        Ok(opened) => opened,
        Err(error) => {
            envs.lock().remove(&id);
            return Err(ApiError::internal(&error));
        }
    };
    let answer = opened.opening().clone();
    *env = Some(opened);
    slot.touch();
    Ok(Json(answer))
}

/// `POST /v1/envs/{id}/step`.
pub async fn step(
    State(service): State<Arc<Service>>,
    UrlPath(id): UrlPath<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let request: StepRequest = read_json(body, service.serve.max_body_bytes).await?;
    let slot = service.envs.get(&id)?;
    let action = match (request.call, request.text) {
        (Some(call), None) if request.tool_calls.is_empty() => Action::Call(call),
        (None, Some(text)) => Action::Reply(Reply {
            text,
            tool_calls: request.tool_calls,
            reasoning: request.reasoning_content,
            response_ids: request.response_ids,
            logprobs: request.logprobs,
        }),
        _ => {
            return Err(ApiError::bad_field(
                "call",
                "give either `call` ({\"name\", \"arguments\"}) or `text` (a model reply, with \
                 `tool_calls` for native calls), not both",
            ));
        }
    };
    let mut guard = slot.env.lock().await;
    let env = guard
        .as_mut()
        .ok_or_else(|| ApiError::not_found(&format!("environment {id:?}")))?;
    let stepped =
        tokio::task::block_in_place(|| env.step(action)).map_err(|error| match error {
            StepError::Done { .. } => ApiError::conflict(error.to_string()),
            StepError::Action(what) => ApiError::bad_field("logprobs", what),
            StepError::Failed(error) => ApiError::internal(&error),
        })?;
    slot.touch();
    Ok(Json(stepped))
}

/// `POST /v1/envs/{id}/evaluate`: grades the workspace's current patch by SWE-bench's rules
/// (in a fresh workspace; the environment stays as it is) and answers with the reward
/// `[reward]` shapes from the episode's record, and its terms.
pub async fn evaluate(
    State(service): State<Arc<Service>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let slot = service.envs.get(&id)?;
    let _permit = service.slots.acquire().await?;
    let guard = slot.env.lock().await;
    let env = guard
        .as_ref()
        .ok_or_else(|| ApiError::not_found(&format!("environment {id:?}")))?;
    let prepared = tokio::task::block_in_place(|| -> anyhow::Result<_> {
        Ok((env.evaluation()?, service.grader(env.config())?))
    });
    let (evaluation, grader) = prepared.map_err(|error| ApiError::internal(&error))?;
    let graded = evaluation
        .grade(grader.as_ref())
        .await
        .map_err(|error| ApiError::internal(&error))?;
    slot.touch();
    Ok(Json(graded.result))
}

/// `DELETE /v1/envs/{id}`.
pub async fn delete(
    State(service): State<Arc<Service>>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let slot = service
        .envs
        .lock()
        .remove(&id)
        .ok_or_else(|| ApiError::not_found(&format!("environment {id:?}")))?;
    let env = slot.env.lock().await.take();
    destroy(&id, env);
    Ok(Json(json!({"id": id, "deleted": true})))
}
