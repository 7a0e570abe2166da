//! Rewards: what a rollout or a graded patch is answered with, and `POST /v1/reward`, a
//! remote reward model as OpenRLHF calls it (`--reward.remote_url`): `{"query": [...],
//! "prompts": [...], "labels": [...]}` → `{"rewards": [...], "scores": [...],
//! "extra_logs": {...}}`, each label a task id and each response's patch graded by
//! SWE-bench's rules.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use serde_json::{Value, json};
use swerve_core::trajectory::Outcome;

use super::errors::ApiError;
use super::patch_text::patch_in;
use super::requests::RewardRequest;
use super::service::Service;
use swerve_rollout::reward::REWARD_KEY;

/// The reward a rollout is answered with, and its parts. This is where the composable
/// reward plugs in: the breakdown `swerve run --eval` records in the outcome
/// (`extra.reward`, configured by `[reward]`) when there is one, else the grade (1 resolved,
/// 0 not); `None` when the patch was not graded.
pub fn rollout_reward(outcome: &Outcome) -> (Option<f64>, Option<Value>) {
    let parts = outcome.extra.get(REWARD_KEY).cloned();
    let total = parts
        .as_ref()
        .and_then(|parts| parts["total"].as_f64())
        .or(outcome.reward);
    (total, parts)
}

/// `POST /v1/reward`.
pub async fn openrlhf(
    State(service): State<Arc<Service>>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let request: RewardRequest = service.new_work(body).await?;
    let samples = request.query.len();
    if request.labels.len() != samples {
        return Err(ApiError::bad_field(
            "labels",
            format!(
                "{} labels for {samples} queries: give one task id per query",
                request.labels.len()
            ),
        ));
    }
    if !request.prompts.is_empty() && request.prompts.len() != samples {
        return Err(ApiError::bad_field(
            "prompts",
            format!(
                "{} prompts for {samples} queries: give one per query, or none",
                request.prompts.len()
            ),
        ));
    }
    let tasks = request
        .labels
        .iter()
        .enumerate()
        .map(|(index, label)| service.tasks.get(label, &format!("labels[{index}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let _permit = service.slots.acquire().await?;
    let grader = tokio::task::block_in_place(|| service.grader(&service.config))
        .map_err(|error| ApiError::internal(&error))?;
    let request_id = service.new_id("reward");
    let (mut rewards, mut found, mut mismatch, mut no_reward) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (index, (query, task)) in request.query.iter().zip(&tasks).enumerate() {
        // The response is what follows the prompt. A query that does not start with its
        // prompt (the decoded tokens differ from the prompt text) is not searched whole: a
        // diff quoted in the issue would be graded as the model's. It scores 0, reported.
        let response = match request.prompts.get(index) {
            Some(prompt) => query.strip_prefix(prompt.as_str()),
            None => Some(query.as_str()),
        };
        mismatch.push(if response.is_none() { 1.0 } else { 0.0 });
        let (reward, patch_found, infra) = match response.and_then(patch_in) {
            Some(patch) => {
                let label = format!("{request_id}-{index}");
                let patch = Some(patch.as_str()).filter(|patch| !patch.is_empty());
                let grade = grader.grade(task, patch, Some(&label)).await;
                match swerve_rollout::grading::reward_of(&grade) {
                    Some(reward) => (reward, 1.0, 0.0),
                    None => {
                        tracing::warn!(
                            task = %task.instance_id,
                            "grading failed for the machinery's reason (no reward): {}",
                            grade.report.error.as_deref().unwrap_or("infra")
                        );
                        (0.0, 1.0, 1.0)
                    }
                }
            }
            None => (0.0, 0.0, 0.0),
        };
        rewards.push(reward);
        found.push(patch_found);
        no_reward.push(infra);
    }
    Ok(Json(json!({
        "rewards": rewards,
        "scores": rewards,
        "extra_logs": {"patch_found": found, "prompt_mismatch": mismatch, "no_reward": no_reward},
    })))
}

/// `POST /v1/edit/reward`: SWE-Edit's normalized-match reward of editor replies.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRewardRequest {
    /// The file before the edit.
    pub original: String,
    /// The file after the reference edit.
    pub target: String,
    /// The editor's replies, one reward each.
    pub responses: Vec<String>,
    /// The format policy (default: the service's `edit.format`).
    #[serde(default)]
    pub format: Option<swerve_edit::EditFormat>,
}

/// `POST /v1/edit/reward`: `{"rewards": [...], "details": [...]}`, one per response.
pub async fn edit(
    State(service): State<Arc<Service>>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let request: EditRewardRequest = service.new_work(body).await?;
    if request.responses.is_empty() {
        return Err(ApiError::bad_field(
            "responses",
            "give at least one reply to reward",
        ));
    }
    let format = request.format.unwrap_or(service.config.edit.format);
    let details: Vec<swerve_edit::EditReward> = request
        .responses
        .iter()
        .map(|response| {
            swerve_edit::edit_reward(
                &request.original,
                &request.target,
                response,
                format,
                &service.config.edit.matching,
            )
        })
        .collect();
    let rewards: Vec<f64> = details.iter().map(|detail| detail.reward).collect();
    Ok(Json(
        json!({"rewards": rewards, "format": format.name(), "details": details}),
    ))
}

#[cfg(test)]
mod tests {
    use swerve_core::trajectory::ExitReason;

    use super::*;

    #[test]
    fn the_recorded_breakdown_wins_over_the_grade() {
        let mut outcome = Outcome::new(ExitReason::Submitted, String::new());
        assert_eq!(rollout_reward(&outcome), (None, None));
        outcome.reward = Some(1.0);
        assert_eq!(rollout_reward(&outcome), (Some(1.0), None));
        let parts = json!({"total": 0.75, "resolved": true, "step_penalty": -0.25});
        outcome.extra.insert(REWARD_KEY.into(), parts.clone());
        assert_eq!(rollout_reward(&outcome), (Some(0.75), Some(parts)));
    }
}
