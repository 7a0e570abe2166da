//! Rewards under the configuration (`swerve_train::reward`): checking `[reward]` before a
//! run, recording a rollout's reward in its outcome, and finding a run's trajectories. See
//! `docs/training.md`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swerve_core::trajectory::{Outcome, Trajectory};
use swerve_train::agile::online;
use swerve_train::reward::reward;

use crate::config::Config;
use crate::models;

/// The key of a rollout outcome's `extra` that holds its reward and parts.
pub const REWARD_KEY: &str = "reward";

/// Checks the `[reward]` settings for `swerve run` and `swerve serve`, which record each
/// graded rollout's reward as it ends. The compression bonus needs the model's tokenizer
/// (`reward.tokenizer`, else `run.tokenizer`, else the embedded model's GGUF file when the
/// agent is the embedded model), which is loaded here once.
pub fn check_run_reward(config: &Config) -> Result<()> {
    config.reward.validate()?;
    if config.reward.uses_compression() {
        let Some((dir, template)) = reward_tokenizer(config)? else {
            bail!(
                "reward.compression_weight is {} but no tokenizer is configured to measure \
                 compression rates: set reward.tokenizer (or run.tokenizer) to the model's \
                 directory (tokenizer.json, tokenizer_config.json), or run with \
                 reward.compression_weight = 0 and record the rates afterwards with `swerve \
                 context reward FILES --tokenizer DIR --write`",
                config.reward.compression_weight
            );
        };
        online::chat_model(&dir, template).with_context(|| {
            format!(
                "reward.tokenizer {} (the compression bonus counts tokens with it)",
                dir.display()
            )
        })?;
    }
    Ok(())
}

/// The tokenizer (a model directory or a GGUF file) and chat template the compression rate
/// is counted with: `reward.tokenizer`, else `run.tokenizer`, else the embedded model's file
/// when the agent is the embedded model.
fn reward_tokenizer(config: &Config) -> Result<Option<(PathBuf, Option<&Path>)>> {
    let configured = config
        .reward
        .tokenizer
        .as_deref()
        .or(config.run.tokenizer.as_deref());
    let dir = match configured {
        Some(dir) => dir.to_path_buf(),
        None if config.model.model == models::EMBEDDED => models::embedded_file(&config.model)?,
        None => return Ok(None),
    };
    Ok(Some((dir, config.reward.chat_template.as_deref())))
}

/// The reward of the rollout `recorded` (its header and steps, as written to the file
/// `path`) which ended with `outcome` (not yet written), as JSON for the outcome's
/// `extra.reward`. With the compression bonus on and a positive outcome, the rollout's
/// compression rate is measured first and recorded in the outcome's
/// `extra.compression_reward`. Computed in memory; `path` only names the rollout in errors.
pub fn rollout_reward(
    recorded: &Trajectory,
    path: &Path,
    outcome: &mut Outcome,
    config: &Config,
) -> Result<serde_json::Value> {
    if swerve_train::reward::earns_no_reward(outcome) {
        return Ok(serde_json::Value::Null);
    }
    let mut trajectory = recorded.clone();
    trajectory.outcome = Some(outcome.clone());
    if config.reward.uses_compression()
        && outcome.reward.is_some_and(|reward| reward > 0.0)
        && let Some((dir, template)) = reward_tokenizer(config)?
    {
        let model = online::chat_model(&dir, template)?;
        let record =
            online::compression_record(&model, &trajectory, config.reward.compression_rate)
                .with_context(|| {
                    format!("{}: cannot measure the compression rate", path.display())
                })?;
        outcome.extra.insert("compression_reward".into(), record);
        trajectory.outcome = Some(outcome.clone());
    }
    let breakdown = reward(&trajectory, &config.reward)
        .with_context(|| format!("{}: cannot compute the reward", path.display()))?;
    Ok(serde_json::to_value(breakdown)?)
}
