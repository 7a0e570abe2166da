//! Reading recorded world-model samples back ([`read_samples`]), balancing the reward
//! labels of SWR samples 1:1 ([`balance`], as SWE-World's SFT data), and the rows of the
//! SFT export ([`sft_row`]), each prompt rendered in a chosen style ([`restyled`]).

use std::path::{Path, PathBuf};

use super::WorldSample;
use crate::context::PromptStyle;
use anyhow::{Context, Result, bail};
use swerve_core::seeded::draw;

/// The recorded samples under `paths`: a recording directory (its `swt/` and `swr/`
/// files, in name order) or a JSON-lines file of samples. A line that is not a sample is an
/// error naming the file and line; a last line without its newline (a write cut off by a
/// crash) is skipped with a warning.
pub fn read_samples(paths: &[PathBuf]) -> Result<Vec<WorldSample>> {
    let mut samples = Vec::new();
    for path in paths {
        for file in sample_files(path)? {
            read_file(&file, &mut samples)?;
        }
    }
    Ok(samples)
}

/// The sample files a path stands for.
fn sample_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        if !path.exists() {
            bail!(
                "{}: no such file or directory (give a directory written with \
                 --record-world-data, or one of its .jsonl files)",
                path.display()
            );
        }
        return Ok(vec![path.to_owned()]);
    }
    let mut files = Vec::new();
    for kind in ["swt", "swr"] {
        let dir = path.join(kind);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|file| file.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        found.sort();
        files.extend(found);
    }
    if files.is_empty() {
        bail!(
            "{}: no recorded samples (expected swt/*.jsonl or swr/*.jsonl, as `swerve run \
             --record-world-data {}` writes them)",
            path.display(),
            path.display()
        );
    }
    Ok(files)
}

fn read_file(file: &Path, samples: &mut Vec<WorldSample>) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<WorldSample>(line) {
            Ok(sample) => samples.push(sample),
            Err(_) if index + 1 == lines.len() && !complete => {
                tracing::warn!(
                    "{}:{}: skipping an incomplete last line",
                    file.display(),
                    index + 1
                );
            }
            Err(error) => bail!(
                "{}:{}: not a world-model sample ({error}); samples are the lines `swerve run \
                 --record-world-data` writes",
                file.display(),
                index + 1
            ),
        }
    }
    Ok(())
}

/// `samples` with the SWR ones subsampled to as many reward-1 as reward-0 samples: every
/// sample of the rarer label is kept, and of the other label the ones first in a seeded
/// order (by `seed` and each sample's rollout and position). SWT samples are all kept.
/// Order is otherwise preserved.
pub fn balance(samples: Vec<WorldSample>, seed: u64) -> Vec<WorldSample> {
    let label = |sample: &WorldSample| match sample {
        WorldSample::Swr(sample) => Some(sample.real.reward),
        WorldSample::Swt(_) => None,
    };
    let count = |reward: u8| {
        samples
            .iter()
            .filter(|sample| label(sample) == Some(reward))
            .count()
    };
    let keep_each = count(0).min(count(1));
    let rank = |index: usize, sample: &WorldSample| {
        let key = match sample {
            WorldSample::Swr(sample) => format!("{}#{index}", sample.rollout),
            WorldSample::Swt(_) => String::new(),
        };
        draw(seed, &key, 0, u32::MAX)
    };
    let mut kept = vec![true; samples.len()];
    for reward in [0u8, 1] {
        let mut of_label: Vec<(u32, usize)> = samples
            .iter()
            .enumerate()
            .filter(|(_, sample)| label(sample) == Some(reward))
            .map(|(index, sample)| (rank(index, sample), index))
            .collect();
        of_label.sort();
        for &(_, index) in &of_label[keep_each..] {
            kept[index] = false;
        }
    }
    samples
        .into_iter()
        .zip(kept)
        .filter_map(|(sample, keep)| keep.then_some(sample))
        .collect()
}

/// The SFT row of a sample: its messages (system, user, the real answer as the assistant),
/// with the kind, task and rollout for filtering.
pub fn sft_row(sample: &WorldSample) -> serde_json::Value {
    let (kind, rollout) = match sample {
        WorldSample::Swt(sample) => ("swt", &sample.rollout),
        WorldSample::Swr(sample) => ("swr", &sample.rollout),
    };
    serde_json::json!({
        "messages": sample.messages(),
        "kind": kind,
        "instance_id": sample.instance_id(),
        "rollout": rollout,
    })
}

/// `sample` with its prompt rendered in `style` (the recorded answer kept as the target).
pub fn restyled(sample: WorldSample, style: PromptStyle) -> WorldSample {
    let target = sample.messages().last().cloned();
    match sample {
        WorldSample::Swt(mut sample) => {
            sample.context = sample.context.with_prompts(style);
            sample.messages = sample.context.messages();
            sample.messages.extend(target);
            WorldSample::Swt(sample)
        }
        WorldSample::Swr(mut sample) => {
            sample.context = sample.context.with_prompts(style);
            sample.messages = sample.context.messages();
            sample.messages.extend(target);
            WorldSample::Swr(sample)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::TransitionContext;
    use crate::context::{ContextConfig, IssueInputs, Sources, SwrContext};
    use crate::fidelity::CommandResult;
    use crate::samples::{RealGrade, SwrSample, SwtSample};
    use crate::tokens::ApproxTokens;
    use swerve_core::Task;
    use swerve_tools::WorkspaceFs;

    use super::*;

    /// Three reward-1 SWR samples, one reward-0 and one SWT sample.
    fn samples() -> Vec<WorldSample> {
        let dir = tempfile::tempdir().unwrap();
        let fs = WorkspaceFs::new(dir.path());
        let sources = Sources {
            workspace: &fs,
            original: &fs,
            counter: &ApproxTokens,
        };
        let task = Task::new("o__r-1", "o/r", "abc", "It breaks.");
        let inputs = IssueInputs {
            task: &task,
            initial_analysis: None,
            agent_patch: "diff",
        };
        let config = ContextConfig::default();
        let grade = |rollout: usize, reward: u8| {
            WorldSample::Swr(SwrSample::new(
                &format!("o__r-1__{rollout}"),
                SwrContext::assemble(&inputs, "pytest", &sources, &config),
                RealGrade {
                    reward,
                    test_report: String::new(),
                },
            ))
        };
        let command = WorldSample::Swt(SwtSample::new(
            "o__r-1__0",
            TransitionContext::assemble(&inputs, "python t.py", &sources, &config),
            CommandResult {
                stdout: String::new(),
                stderr: String::new(),
                exit_code: 0,
            },
        ));
        vec![grade(0, 1), command, grade(1, 1), grade(2, 0), grade(3, 1)]
    }

    fn rewards(samples: &[WorldSample]) -> Vec<Option<u8>> {
        samples
            .iter()
            .map(|sample| match sample {
                WorldSample::Swr(sample) => Some(sample.real.reward),
                WorldSample::Swt(_) => None,
            })
            .collect()
    }

    #[test]
    fn balancing_keeps_one_of_each_label_and_every_command() {
        let mut kept_rollouts = std::collections::BTreeSet::new();
        for seed in 0..32 {
            let balanced = balance(samples(), seed);
            let mut labels = rewards(&balanced);
            labels.sort();
            assert_eq!(labels, [None, Some(0), Some(1)], "seed {seed}");
            assert_eq!(rewards(&balance(samples(), seed)), rewards(&balanced));
            for sample in &balanced {
                if let WorldSample::Swr(sample) = sample
                    && sample.real.reward == 1
                {
                    kept_rollouts.insert(sample.rollout.clone());
                }
            }
        }
        // Each reward-1 sample is kept for some seed.
        assert_eq!(kept_rollouts.len(), 3, "{kept_rollouts:?}");
        // Already balanced, or without SWR samples: nothing changes.
        let one_each: Vec<WorldSample> = samples().into_iter().skip(1).take(3).collect();
        assert_eq!(balance(one_each.clone(), 0), one_each);
    }

    #[test]
    fn bad_lines_are_located_and_a_cut_last_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let line = serde_json::to_string(&samples()[0]).unwrap();
        std::fs::write(&file, format!("{line}\n{}", &line[..line.len() / 2])).unwrap();
        assert_eq!(read_samples(std::slice::from_ref(&file)).unwrap().len(), 1);
        std::fs::write(&file, format!("{line}\nnot json\n{line}\n")).unwrap();
        let error = read_samples(std::slice::from_ref(&file))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("s.jsonl:2: not a world-model sample"),
            "{error}"
        );
        let error = read_samples(&[dir.path().to_owned()])
            .unwrap_err()
            .to_string();
        assert!(error.contains("no recorded samples"), "{error}");
    }

    proptest::proptest! {
        #[test]
        fn reading_any_file_never_panics(text in proptest::prelude::any::<String>()) {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("any.jsonl");
            std::fs::write(&file, text).unwrap();
            let _ = read_samples(&[file]);
        }
    }
}
