//! `swerve data world`: the SFT rows of recorded world-model samples, SWT, SWR or both,
//! optionally with the SWR reward labels balanced 1:1, each prompt rendered with the
//! `world.prompts` templates. Answer-only rows are written all at once; with
//! `--reasoning`, a teacher writes a reverse-reasoning CoT per sample (SWE-World §4.2.2,
//! Fig. G.4), a leak check and the judge filter it, and the rows are appended as they are
//! done, so that a rerun resumes: accepted rows to `--out`, rejected ones with their
//! reasons to the rejected file.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use swerve_core::atomic::write_atomically;
use swerve_world::samples::WorldSample;
use swerve_world::samples::distill::{DistillFiles, distill_into, pending, rejected_file};

use crate::cli::{DataWorldArgs, WorldKindArg};
use swerve_rollout::config::Config;
use swerve_rollout::models;
use swerve_world::samples::files::{balance, read_samples, restyled, sft_row};

pub fn run(config: &Config, args: &DataWorldArgs) -> Result<ExitCode> {
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
        .map(|sample| restyled(sample, config.world.prompts))
        .collect();
    let read = samples.len();
    let samples = match args.balance {
        true => balance(samples, args.seed),
        false => samples,
    };
    if args.reasoning {
        return reasoning(config, args, samples, read);
    }
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

fn reasoning(
    config: &Config,
    args: &DataWorldArgs,
    samples: Vec<WorldSample>,
    read: usize,
) -> Result<ExitCode> {
    let cot = &config.world.cot;
    let mut judge_config = cot.judge.clone();
    if judge_config.base_url.is_empty() {
        judge_config.base_url.clone_from(&cot.teacher.base_url);
    }
    let rejected = args
        .rejected
        .clone()
        .unwrap_or_else(|| rejected_file(&args.out));
    let mut files = DistillFiles {
        accepted: &args.out,
        rejected: &rejected,
        concurrency: cot.concurrency,
        max_attempts: cot.max_attempts,
        teacher_name: &cot.teacher.model,
        judge_name: None,
    };
    files.check()?;
    let teacher = models::require(
        &cot.teacher,
        "world.cot.teacher",
        "--reasoning (give --teacher MODEL --base-url URL)",
    )?;
    let judge = models::optional(&judge_config, "world.cot.judge")?;
    if judge.is_some() {
        files.judge_name = Some(&judge_config.model);
    }
    let (pending, done) = pending(samples, &files)?;
    eprintln!(
        "{} samples to distill, {done} already done; teacher {}, judge {}, {} at once",
        pending.len(),
        cot.teacher.model,
        files.judge_name.unwrap_or("none (leak check only)"),
        cot.concurrency
    );
    let counts = distill_into(teacher, judge, pending, &files)?;
    println!(
        "{} samples with reasoning written to {}, {} rejected (reasons in {}); \
         {done} done before, {read} read",
        counts.accepted,
        args.out.display(),
        counts.rejected,
        rejected.display(),
    );
    Ok(ExitCode::SUCCESS)
}
