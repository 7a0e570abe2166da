//! `swerve data world`: the SFT rows of recorded world-model samples, SWT, SWR or both,
//! optionally with the SWR reward labels balanced 1:1, each prompt rendered with the
//! `world.prompts` templates. Answer-only rows are written all at once; with
//! `--reasoning`, a teacher writes a reverse-reasoning CoT per sample (SWE-World §4.2.2,
//! Fig. G.4), a leak check and the judge filter it, and the rows are appended as they are
//! done, so that a rerun resumes: accepted rows to `--out`, rejected ones with their
//! reasons to the rejected file.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use swerve_core::atomic::write_atomically;
use swerve_world::cot::cot_messages;
use swerve_world::samples::WorldSample;
use swerve_world::samples::distill::{Distilled, distill, key};

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

/// The keys already in `path` (accepted or rejected rows of an earlier run). A last line
/// cut off by a crash is removed so that appending goes on cleanly.
fn done_keys(path: &Path, keys: &mut HashSet<String>) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    if complete.len() < text.len() {
        std::fs::write(path, complete)
            .with_context(|| format!("cannot repair {}", path.display()))?;
    }
    for (number, line) in complete.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Value = serde_json::from_str(line).with_context(|| {
            format!(
                "{}:{}: not a row of `swerve data world --reasoning`",
                path.display(),
                number + 1
            )
        })?;
        match row["key"].as_str() {
            Some(key) => {
                keys.insert(key.to_owned());
            }
            None => bail!(
                "{}:{}: the row has no \"key\"; --reasoning resumes only into files it wrote \
                 (give another --out)",
                path.display(),
                number + 1
            ),
        }
    }
    Ok(())
}

fn reasoning(
    config: &Config,
    args: &DataWorldArgs,
    samples: Vec<WorldSample>,
    read: usize,
) -> Result<ExitCode> {
    let cot = &config.world.cot;
    if cot.max_attempts == 0 || cot.concurrency == 0 {
        bail!("world.cot.max_attempts and world.cot.concurrency must be at least 1");
    }
    let teacher = models::require(
        &cot.teacher,
        "world.cot.teacher",
        "--reasoning (give --teacher MODEL --base-url URL)",
    )?;
    let mut judge_config = cot.judge.clone();
    if judge_config.base_url.is_empty() {
        judge_config.base_url.clone_from(&cot.teacher.base_url);
    }
    let judge = models::optional(&judge_config, "world.cot.judge")?;
    let rejected_path = args
        .rejected
        .clone()
        .unwrap_or_else(|| rejected_file(&args.out));
    let mut done = HashSet::new();
    done_keys(&args.out, &mut done)?;
    done_keys(&rejected_path, &mut done)?;
    let pending: Vec<(String, WorldSample)> = samples
        .into_iter()
        .map(|sample| (key(&sample), sample))
        .filter(|(key, _)| !done.contains(key))
        .collect();
    eprintln!(
        "{} samples to distill, {} already done; teacher {}, judge {}, {} at once",
        pending.len(),
        done.len(),
        cot.teacher.model,
        if judge.is_some() {
            judge_config.model.as_str()
        } else {
            "none (leak check only)"
        },
        cot.concurrency
    );
    let open = |path: &PathBuf| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {}", path.display()))
    };
    let mut accepted_file = open(&args.out)?;
    let mut rejected_file = open(&rejected_path)?;

    let runtime = tokio::runtime::Runtime::new()?;
    let permits = Arc::new(tokio::sync::Semaphore::new(cot.concurrency));
    let max_attempts = cot.max_attempts;
    let handles: Vec<_> = pending
        .into_iter()
        .map(|(key, sample)| {
            let (teacher, judge, permits) = (teacher.clone(), judge.clone(), permits.clone());
            runtime.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let distilled =
                    distill(teacher.as_ref(), judge.as_deref(), &sample, max_attempts).await;
                (key, sample, distilled)
            })
        })
        .collect();
    let (mut accepted, mut rejected) = (0, 0);
    for handle in handles {
        let (key, sample, distilled) = runtime.block_on(handle)?;
        let (kind, rollout) = match &sample {
            WorldSample::Swt(sample) => ("swt", sample.rollout.as_str()),
            WorldSample::Swr(sample) => ("swr", sample.rollout.as_str()),
        };
        let (file, path, row) = match distilled {
            Distilled::Accepted {
                reasoning,
                attempts,
                judge_reasons,
            } => {
                accepted += 1;
                let row = json!({
                    "messages": cot_messages(&sample, &reasoning),
                    "kind": kind,
                    "instance_id": sample.instance_id(),
                    "rollout": rollout,
                    "key": key,
                    "cot": {
                        "teacher": cot.teacher.model,
                        "judge": judge.as_ref().map(|_| judge_config.model.clone()),
                        "attempts": attempts,
                        "judge_reasons": judge_reasons,
                    },
                });
                (&mut accepted_file, &args.out, row)
            }
            Distilled::Rejected {
                reasons,
                last_reasoning,
            } => {
                rejected += 1;
                let row = json!({
                    "kind": kind,
                    "instance_id": sample.instance_id(),
                    "rollout": rollout,
                    "key": key,
                    "reasons": reasons,
                    "last_reasoning": last_reasoning,
                });
                (&mut rejected_file, &rejected_path, row)
            }
        };
        writeln!(file, "{row}")
            .and_then(|()| file.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!(
        "{accepted} samples with reasoning written to {}, {rejected} rejected (reasons in {}); \
         {} done before, {read} read",
        args.out.display(),
        rejected_path.display(),
        done.len(),
    );
    Ok(ExitCode::SUCCESS)
}

/// `OUT.rejected.jsonl` beside `OUT` (its `.jsonl` replaced).
fn rejected_file(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    out.with_file_name(format!("{stem}.rejected.jsonl"))
}
