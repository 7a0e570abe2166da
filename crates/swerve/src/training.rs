//! The `swerve` side of training data (`swerve_train`): the rewards of trajectory files,
//! with errors naming the file; recording a rollout's reward in its outcome; finding a
//! run's trajectories; re-tokenizing steps with a model's chat template when asked to. See
//! `docs/training.md`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swerve_core::trajectory::{Message, Outcome, read_trajectory};
use swerve_train::export::Retokenize;
use swerve_train::reward::{RewardBreakdown, RewardConfig, reward};

use crate::agile::Loaded;
use crate::agile::tokens::Tokens;

/// The key of a rollout outcome's `extra` that holds its reward and parts.
pub const REWARD_KEY: &str = "reward";

/// Checks the `[reward]` settings for `swerve run`, which records each graded rollout's
/// reward as it ends: the compression bonus needs a rate measured after the run.
pub fn check_run_reward(config: &RewardConfig) -> Result<()> {
    config.validate()?;
    if config.uses_compression() {
        bail!(
            "reward.compression_weight is {} but `swerve run` cannot measure compression rates; \
             run with reward.compression_weight = 0, then record the rates with `swerve context \
             reward FILES --tokenizer DIR --write` and compute rewards with `swerve data \
             advantages --set reward.compression_weight=…`",
            config.compression_weight
        );
    }
    Ok(())
}

/// The reward of the rollout whose steps are in the trajectory file `path` and which ended
/// with `outcome` (not yet written), as JSON for the outcome's `extra.reward`.
pub fn rollout_reward(
    path: &Path,
    outcome: &Outcome,
    config: &RewardConfig,
) -> Result<serde_json::Value> {
    let mut read = read_trajectory(path).map_err(|error| anyhow::anyhow!("{error}"))?;
    read.trajectory.outcome = Some(outcome.clone());
    let breakdown = reward(&read.trajectory, config)
        .with_context(|| format!("{}: cannot compute the reward", path.display()))?;
    Ok(serde_json::to_value(breakdown)?)
}

/// The reward of a loaded trajectory; the error names its file.
pub fn reward_of(loaded: &Loaded, config: &RewardConfig) -> Result<RewardBreakdown> {
    reward(&loaded.trajectory, config).with_context(|| loaded.path.display().to_string())
}

/// The trajectory files to read: `run`'s `trajectories/*.jsonl` (sorted) and `files`.
pub fn trajectory_files(run: Option<&Path>, files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if let Some(run) = run {
        let dir = run.join("trajectories");
        let entries = std::fs::read_dir(&dir).with_context(|| {
            format!(
                "cannot read {}: --run takes the --out directory of `swerve run`",
                dir.display()
            )
        })?;
        for entry in entries {
            let path = entry?.path();
            if path.extension().is_some_and(|ext| ext == "jsonl") {
                found.push(path);
            }
        }
        found.sort();
    }
    found.extend(files.iter().cloned());
    if found.is_empty() {
        bail!("no trajectories: give --run DIR or trajectory files");
    }
    Ok(found)
}

/// Re-tokenizes a step with a model's chat template: the prompt rendered with the
/// generation prompt, and the reply as the template renders it after that prompt (its
/// end-of-turn tokens included). Only on explicit request: the ids may differ from those
/// the model saw and wrote.
pub struct TemplateTokens<'a>(pub Tokens<'a>);

impl Retokenize for TemplateTokens<'_> {
    fn step(&self, sent: &[Message], reply: &Message) -> Result<(Vec<u32>, Vec<u32>), String> {
        let tokens = &self.0;
        let prompt = tokens.render(sent, true).map_err(|e| format!("{e:#}"))?;
        let mut whole_messages = sent.to_vec();
        whole_messages.push(reply.clone());
        let whole = tokens
            .render(&whole_messages, false)
            .map_err(|e| format!("{e:#}"))?;
        let Some(reply_text) = whole.strip_prefix(prompt.as_str()) else {
            return Err(
                "the chat template renders the prompt differently once the reply follows it, \
                 so the reply's tokens cannot be told apart"
                    .into(),
            );
        };
        let encode = |text: &str| tokens.encode_text(text).map_err(|e| format!("{e:#}"));
        Ok((encode(&prompt)?, encode(reply_text)?))
    }
}

/// Writes `rows` to `path` as JSON lines, or as Parquet when its name ends in `.parquet`
/// ([`crate::rows`]), atomically: all of them or, on error, nothing.
pub fn write_lines<T: serde::Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    crate::rows::write_rows(path, |out| {
        for row in rows {
            serde_json::to_writer(&mut *out, row)?;
            out.write_all(b"\n")?;
        }
        Ok(())
    })
}
