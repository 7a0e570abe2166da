//! SWE-AGILE's compression rate measured as a rollout ends, so that `swerve run --eval` and
//! `swerve serve` can add the compression bonus (paper Eq. 4) to the reward online: the
//! same rate `swerve context reward --write` records afterwards, from the model's tokenizer
//! and chat template (`reward.tokenizer`, else `run.tokenizer`).
//!
//! Only the two counts the rate needs are taken: the final conversation under the run's
//! window and with all reasoning (the code's definition), or the per-step tuples (the
//! paper's Eq. 3), not the per-step contexts `swerve context stats` adds up.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::reward::CompressionRate;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use swerve_chat::ChatModel;
use swerve_core::trajectory::Trajectory;

use super::accounting::rates;
use super::tokens::{Tokens, load_model};
use super::window;

/// Loaded models, one per tokenizer directory and template: loading a real tokenizer takes
/// a while, and every rollout of a run uses the same.
type ModelCache = Mutex<HashMap<(PathBuf, Option<PathBuf>), Arc<ChatModel>>>;

static MODELS: std::sync::LazyLock<ModelCache> = std::sync::LazyLock::new(Default::default);

/// The model of `dir` (with `template`), loaded once per process.
pub fn chat_model(dir: &Path, template: Option<&Path>) -> Result<Arc<ChatModel>> {
    let key = (dir.to_owned(), template.map(Path::to_owned));
    if let Some(model) = MODELS.lock().expect("not poisoned").get(&key) {
        return Ok(model.clone());
    }
    let model = Arc::new(load_model(dir, template)?);
    MODELS
        .lock()
        .expect("not poisoned")
        .insert(key, model.clone());
    Ok(model)
}

/// The record of `trajectory`'s compression rate under the window its run recorded
/// (`header.extra.reasoning_window`), for the outcome's `extra.compression_reward`.
pub fn compression_record(
    model: &ChatModel,
    trajectory: &Trajectory,
    definition: CompressionRate,
) -> Result<Value> {
    let header = &trajectory.header;
    let window = window::of(None, 0, header).context(
        "reward.compression_weight needs a run with a reasoning window (agent.reasoning.window \
         = N or [a, b], as the agile presets set)",
    )?;
    let tokens = Tokens::new(model, header)?;
    let conversation = trajectory.conversation()?;
    let (code, paper) = rates(
        &tokens,
        trajectory,
        &conversation,
        window,
        definition == CompressionRate::Paper,
    )?;
    let (rate, name) = match definition {
        CompressionRate::Code => (code, "code"),
        CompressionRate::Paper => (paper.unwrap_or(0.0), "paper"),
    };
    Ok(json!({
        "compression_rate": rate,
        "rate": name,
        "window": window::turns(window),
        "online": true,
    }))
}
