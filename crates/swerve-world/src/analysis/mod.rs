//! The initial analysis: a few bullets on a task's bug, its fix and its tests, written
//! once per task by a model from the issue, hints, gold patch, test patch and test lists,
//! and shown to both world models. This module asks for it and reads the reply; [`cache`]
//! keeps each task's analysis on disk so that it is written once.

pub mod cache;

use serde::{Deserialize, Serialize};
use swerve_core::Task;
use swerve_llm::{Model, ModelRequest, ModelResponse, Sampling};

use crate::context::{ContextConfig, analysis_messages};
use crate::reply::{ReplyError, split_reasoning};
use crate::tokens::TokenCounter;

/// Settings of the analysis model's call (the `[world.analysis]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisConfig {
    /// Sampling of the call (temperature 0 by default: one analysis per task, reused).
    pub sampling: Sampling,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        Self {
            sampling: Sampling {
                temperature: Some(0.0),
                ..Sampling::default()
            },
        }
    }
}

/// The analysis in a reply: the text after any `<think>…</think>`, trimmed; an error when
/// nothing is left.
pub fn parse_analysis(text: &str) -> Result<String, ReplyError> {
    let (_, answer) = split_reasoning(text);
    let answer = answer.trim();
    if answer.is_empty() {
        return Err(ReplyError::Empty);
    }
    Ok(answer.to_owned())
}

/// A generated analysis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The bullets.
    pub text: String,
    /// The model's answer (usage, cost).
    pub response: ModelResponse,
}

/// Asks `model` for `task`'s initial analysis. The error says what went wrong (the call
/// failed, or the reply was empty).
pub async fn generate_analysis(
    model: &dyn Model,
    task: &Task,
    context: &ContextConfig,
    config: &AnalysisConfig,
    counter: &dyn TokenCounter,
) -> Result<Analysis, String> {
    let request = ModelRequest::chat(analysis_messages(task, context, counter))
        .with_sampling(config.sampling.clone());
    let response = model
        .complete(&request)
        .await
        .map_err(|error| format!("the analysis model call failed: {error}"))?;
    let text = parse_analysis(&response.content)
        .map_err(|error| format!("the analysis model's reply cannot be used: {error}"))?;
    Ok(Analysis { text, response })
}
