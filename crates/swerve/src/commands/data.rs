//! `swerve data …`: training data from trajectories. One function per subcommand:
//! `snapshots` (SWE-AGILE snapshot SFT samples, [`crate::agile::snapshots`]), `backfill`
//! (SWE-AGILE reasoning written into existing trajectories by a teacher, [`backfill`]),
//! `advantages` (rewards and group advantages, [`advantages`]) and `export` (trainer
//! records, [`export`]), `world` (SWE-World's world-model SFT data, [`world`]) and
//! `prompts` (trainers' prompt datasets, [`prompts`]).

mod advantages;
mod backfill;
mod export;
mod prompts;
mod world;

use std::process::ExitCode;

use anyhow::{Context, Result};
use swerve_core::trajectory::import::detect_and_import;
use swerve_train::reward::{earns_no_reward, reward};
use swerve_train::rft::{keep, turn_weights};

use crate::cli::{DataCommand, SampleFormatArg, SnapshotArgs};
use swerve_rollout::config::Config;
use swerve_train::agile::snapshots::{SampleFormat, write_trajectory};
use swerve_train::agile::tokens::{Tokens, load_model};
use swerve_train::agile::window;
use swerve_train::rows::write_rows;

pub fn run(config: &Config, command: DataCommand) -> Result<ExitCode> {
    match command {
        DataCommand::Snapshots(args) => snapshots(config, &args),
        DataCommand::Backfill(args) => backfill::run(config, &args),
        DataCommand::Advantages(args) => advantages::run(config, &args),
        DataCommand::Export(args) => export::run(config, &args),
        DataCommand::World(args) => world::run(config, &args),
        DataCommand::Prompts(args) => prompts::run(config, &args),
    }
}

/// Writes the samples of every trajectory of `args.files` to `args.out`, which is replaced
/// only once all are written. With `--min-reward`, only trajectories rewarded at least that
/// (`[reward]`), without the steps that caused format errors.
fn snapshots(config: &Config, args: &SnapshotArgs) -> Result<ExitCode> {
    let format = match args.format {
        SampleFormatArg::Messages => SampleFormat::Messages,
        SampleFormatArg::Tokens => SampleFormat::Tokens,
    };
    let model = match &args.tokenizer {
        Some(dir) => Some(load_model(dir, args.chat_template.as_deref())?),
        None if format == SampleFormat::Tokens => {
            anyhow::bail!(
                "--format tokens renders samples with a chat template: give --tokenizer DIR"
            )
        }
        None => None,
    };
    let (mut trajectories, mut samples, mut tokens, mut below) = (0, 0, 0, 0);
    write_rows(&args.out, |out| {
        for path in &args.files {
            for trajectory in detect_and_import(path)? {
                let name = format!("{}: trajectory {}", path.display(), trajectory.header.id);
                let weights = match args.min_reward {
                    // Graded with an infra error: no reward, so below any minimum.
                    Some(_) if trajectory.outcome.as_ref().is_some_and(earns_no_reward) => {
                        below += 1;
                        continue;
                    }
                    Some(min) => {
                        let reward = reward(&trajectory, &config.reward)
                            .with_context(|| path.display().to_string())?;
                        if !keep(&reward, min) {
                            below += 1;
                            continue;
                        }
                        Some(turn_weights(&trajectory))
                    }
                    None => None,
                };
                let window = window::of(Some(args.window), args.seed, &trajectory.header)
                    .context(name.clone())?;
                let counter = model
                    .as_ref()
                    .map(|model| Tokens::new(model, &trajectory.header))
                    .transpose()
                    .context(name.clone())?;
                let (count, length) = write_trajectory(
                    out,
                    &trajectory,
                    window,
                    format,
                    counter.as_ref(),
                    weights.as_deref(),
                )
                .context(name)?;
                trajectories += 1;
                samples += count;
                tokens += length;
            }
        }
        Ok(())
    })
    .with_context(|| format!("nothing written to {}", args.out.display()))?;
    let tokens = if model.is_some() {
        format!(", {tokens} tokens")
    } else {
        String::new()
    };
    let below = match args.min_reward {
        Some(min) => format!(" ({below} below reward {min} left out)"),
        None => String::new(),
    };
    println!(
        "{trajectories} trajectories{below}, {samples} samples{tokens} -> {}",
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
