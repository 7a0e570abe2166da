//! The HTTP surface: routes, the bearer-token check in front of every route but
//! `/v1/health`, and JSON 404s.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::errors::ApiError;
use super::service::Service;
use super::{envs, reward, rollouts};

/// The reward endpoint's path; it also takes the token as `?access_token=`.
pub const REWARD_PATH: &str = "/v1/reward";

/// The service's routes.
pub fn router(service: Arc<Service>) -> Router {
    Router::new()
        .route("/v1/rollouts", post(rollouts::create))
        .route("/v1/rollouts/{id}", get(rollouts::status))
        .route("/v1/envs", post(envs::create))
        .route("/v1/envs/{id}", axum::routing::delete(envs::delete))
        .route("/v1/envs/{id}/step", post(envs::step))
        .route("/v1/envs/{id}/evaluate", post(envs::evaluate))
        .route(REWARD_PATH, post(reward::openrlhf))
        .route("/v1/edit/reward", post(reward::edit))
        .route_layer(middleware::from_fn_with_state(service.clone(), authorize))
        .route("/v1/health", get(health))
        .fallback(not_found)
        .with_state(service)
}

/// Lets a request through only with the token.
async fn authorize(State(service): State<Arc<Service>>, request: Request, next: Next) -> Response {
    if service.authorized(request.headers(), request.uri(), REWARD_PATH) {
        next.run(request).await
    } else {
        ApiError::unauthorized().into_response()
    }
}

/// `GET /v1/health`: up, and how busy.
async fn health(State(service): State<Arc<Service>>) -> Json<Value> {
    Json(json!({
        "status": if service.check_open().is_ok() { "ok" } else { "shutting_down" },
        "rollouts_running": service.rollouts.running(),
        "slots_in_use": service.slots.in_use(),
        "max_rollouts": service.serve.max_rollouts,
        "envs_open": service.envs.count(),
        "max_envs": service.serve.max_envs,
    }))
}

async fn not_found(request: Request) -> ApiError {
    ApiError::not_found(&format!(
        "route {} {}; see docs/serve.md for the API",
        request.method(),
        request.uri().path()
    ))
}
