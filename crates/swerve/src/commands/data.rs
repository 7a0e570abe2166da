//! `swerve data …`: training data from trajectories. One function per subcommand:
//! `snapshots` (SWE-AGILE snapshot SFT samples, [`crate::agile::snapshots`]) and `backfill`
//! (SWE-AGILE reasoning written into existing trajectories by a teacher, [`backfill`]).

mod backfill;

use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use swerve_core::atomic::write_atomically;

use crate::agile::snapshots::{SampleFormat, write_trajectory};
use crate::agile::tokens::{Tokens, load_model};
use crate::agile::{read, window};
use crate::cli::{DataCommand, SampleFormatArg, SnapshotArgs};
use crate::config::Config;

pub fn run(config: &Config, command: DataCommand) -> Result<ExitCode> {
    match command {
        DataCommand::Snapshots(args) => snapshots(&args),
        DataCommand::Backfill(args) => backfill::run(config, &args),
    }
}

/// Writes the samples of every trajectory of `args.files` to `args.out`, which is replaced
/// only once all are written.
fn snapshots(args: &SnapshotArgs) -> Result<ExitCode> {
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
    let mut failure = None;
    let (mut trajectories, mut samples, mut tokens) = (0, 0, 0);
    let written = write_atomically(&args.out, |out| {
        for path in &args.files {
            let result = (|| -> Result<()> {
                for trajectory in read(path)? {
                    let name = format!("{}: trajectory {}", path.display(), trajectory.header.id);
                    let window = window::of(Some(args.window), args.seed, &trajectory.header)
                        .context(name.clone())?;
                    let counter = model
                        .as_ref()
                        .map(|model| Tokens::new(model, &trajectory.header))
                        .transpose()
                        .context(name.clone())?;
                    let (count, length) =
                        write_trajectory(out, &trajectory, window, format, counter.as_ref())
                            .context(name)?;
                    trajectories += 1;
                    samples += count;
                    tokens += length;
                }
                Ok(())
            })();
            if let Err(error) = result {
                failure = Some(error);
                return Err(std::io::Error::other("the export failed"));
            }
        }
        Ok(())
    });
    if let Some(error) = failure {
        return Err(error.context(format!("nothing written to {}", args.out.display())));
    }
    written.map_err(|error| anyhow!("cannot write {}: {error}", args.out.display()))?;
    let tokens = if model.is_some() {
        format!(", {tokens} tokens")
    } else {
        String::new()
    };
    println!(
        "{trajectories} trajectories, {samples} samples{tokens} -> {}",
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
