//! Gym-style environments: `POST /v1/envs` opens a task's sandboxed workspace and toolbox
//! and answers with the opening messages and tool specs; `POST /v1/envs/{id}/step` runs a
//! tool call (given, or parsed from a model's reply with the configured format);
//! `POST /v1/envs/{id}/evaluate` grades the current patch; `DELETE /v1/envs/{id}` destroys
//! it. An environment idle for `serve.env_ttl_secs` is destroyed by the reaper.
//!
//! Commands always run in the sandbox here (`run.env = "world"` applies to rollouts only).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path as UrlPath, State};
use serde_json::{Value, json};
use swerve_agent::episode::opening;
use swerve_agent::prompt::Prompts;
use swerve_core::ToolCall;
use swerve_tools::formats::{ModelOutput, NativeToolCall};

use super::env_table::{Env, Slot, destroy};
use super::errors::{ApiError, read_json};
use super::requests::{EnvRequest, StepRequest, overridden};
use super::service::Service;
use swerve_rollout::open;

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
    let format = config
        .format()
        .map_err(|error| ApiError::bad_field("overrides", format!("{error:#}")))?;
    let prompts = Prompts::new(&config.prompts)
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
    let opened = tokio::task::block_in_place(|| -> anyhow::Result<_> {
        let cache = config.cache()?;
        let workspace = open::workspace(&config, &cache, &service.task_file, &task)?;
        let toolbox = open::toolbox(&config, &workspace);
        let tools = swerve_tools::tool_specs(toolbox.config());
        let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
        let messages = opening(
            format.as_ref(),
            &prompts,
            &config.agent,
            &task,
            &tools,
            &mount_point,
        )?;
        Ok((workspace, toolbox, tools, messages))
    });
    let (workspace, toolbox, tools, messages) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            envs.lock().remove(&id);
            return Err(ApiError::internal(&error));
        }
    };
    let rendered = format.render(&tools);
    let answer = json!({
        "id": id,
        "instance_id": task.instance_id,
        "format": format.name(),
        "messages": messages,
        "tools": rendered.tools,
        "tool_specs": tools,
        "max_steps": config.agent.max_steps,
    });
    *env = Some(Env {
        task,
        config,
        format,
        workspace,
        toolbox,
        done: false,
    });
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
    let mut guard = slot.env.lock().await;
    let env = guard
        .as_mut()
        .ok_or_else(|| ApiError::not_found(&format!("environment {id:?}")))?;
    if env.done {
        return Err(ApiError::conflict(format!(
            "environment {id:?} is done (the agent called finish): evaluate or delete it"
        )));
    }
    let (call, call_id) = match (request.call, request.text) {
        (Some(call), None) if request.tool_calls.is_empty() => (call, None),
        (None, Some(text)) => {
            let output = ModelOutput {
                text,
                tool_calls: request
                    .tool_calls
                    .iter()
                    .map(NativeToolCall::from_openai)
                    .collect(),
            };
            match env.format.parse(&output) {
                Ok(parsed) => (parsed.call, parsed.call_id),
                Err(error) => {
                    let told = env.format.render_error(&error);
                    slot.touch();
                    return Ok(Json(json!({
                        "observation": told.content,
                        "done": false,
                        "format_error": error.to_string(),
                        "call": null,
                        "message": told.to_openai(),
                    })));
                }
            }
        }
        _ => {
            return Err(ApiError::bad_field(
                "call",
                "give either `call` ({\"name\", \"arguments\"}) or `text` (a model reply, with \
                 `tool_calls` for native calls), not both",
            ));
        }
    };
    let result = tokio::task::block_in_place(|| env.toolbox.call(&call));
    env.done = result.done;
    let rendered = env
        .format
        .render_result(&result.observation, call_id.as_deref());
    slot.touch();
    Ok(Json(json!({
        "observation": result.observation,
        "done": result.done,
        "is_error": result.is_error,
        "format_error": null,
        "call": call_json(&call),
        "message": rendered.to_openai(),
    })))
}

/// `POST /v1/envs/{id}/evaluate`: grades the workspace's current patch by SWE-bench's rules
/// (in a fresh workspace; the environment stays as it is).
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
        let patch = env.workspace.patch(&env.config.patch)?.diff;
        Ok((patch, service.grader(&env.config)?))
    });
    let (patch, grader) = prepared.map_err(|error| ApiError::internal(&error))?;
    let grade = grader
        .grade(
            &env.task,
            Some(patch.as_str()).filter(|patch| !patch.is_empty()),
            Some(&id),
        )
        .await;
    slot.touch();
    Ok(Json(json!({
        "id": id,
        "instance_id": env.task.instance_id,
        "reward": grade.score.unwrap_or(0.0),
        "resolved": grade.resolved(),
        "patch": patch,
        "report": grade.to_json(),
    })))
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

fn call_json(call: &ToolCall) -> Value {
    json!({"name": call.name, "arguments": call.arguments})
}
