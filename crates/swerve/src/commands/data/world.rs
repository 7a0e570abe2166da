//! `swerve data world`: the SFT rows of recorded world-model samples, SWT, SWR or both,
//! optionally with the SWR reward labels balanced 1:1; written all at once.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use swerve_core::atomic::write_atomically;
use swerve_world::samples::WorldSample;

use crate::cli::{DataWorldArgs, WorldKindArg};
use crate::world::data::{balance, read_samples, sft_row};

pub fn run(args: &DataWorldArgs) -> Result<ExitCode> {
    let samples: Vec<WorldSample> = read_samples(&args.paths)?
        .into_iter()
        .filter(|sample| {
            matches!(
                (args.kind, sample),
                (WorldKindArg::Both, _)
                    | (WorldKindArg::Swt, WorldSample::Swt(_))
                    | (WorldKindArg::Swr, WorldSample::Swr(_))
            )
        })
        .collect();
    let read = samples.len();
    let samples = match args.balance {
        true => balance(samples, args.seed),
        false => samples,
    };
    let mut text = String::new();
    for sample in &samples {
        text.push_str(&serde_json::to_string(&sft_row(sample))?);
        text.push('\n');
    }
    write_atomically(&args.out, |out| out.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let count = |reward: Option<u8>| {
        samples
            .iter()
            .filter(|sample| match sample {
                WorldSample::Swt(_) => reward.is_none(),
                WorldSample::Swr(sample) => reward == Some(sample.real.reward),
            })
            .count()
    };
    println!(
        "{} samples written to {} ({} SWT, {} SWR with reward 1, {} with reward 0; {} read)",
        samples.len(),
        args.out.display(),
        count(None),
        count(Some(1)),
        count(Some(0)),
        read
    );
    Ok(ExitCode::SUCCESS)
}
