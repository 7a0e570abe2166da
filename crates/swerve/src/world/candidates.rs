//! The candidates of `swerve select`: the finished rollouts of run directories, each with
//! the grade its run recorded (the reward model's score from a predicted report, the real
//! grade from a real one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swerve_core::trajectory::{Outcome, read_trajectory};
use swerve_train::tts::Candidate;
use swerve_world::swr::grader::EVALUATOR;

/// The candidate of a finished rollout: the SWR score from a predicted report, the real
/// grade from a real one.
pub fn candidate(run: &Path, rollout: &str, instance_id: &str, outcome: &Outcome) -> Candidate {
    let report = outcome.eval_report.as_ref();
    let predicted = report.is_some_and(|report| report["evaluator"] == EVALUATOR);
    let real = report.filter(|_| !predicted);
    Candidate {
        run: run.to_owned(),
        rollout: rollout.to_owned(),
        instance_id: instance_id.to_owned(),
        patch: outcome.patch.clone(),
        swr: report
            .filter(|_| predicted)
            .and_then(|report| report["swr"]["score"].as_f64()),
        tests: real.map(passing_share),
        resolved: real.map(|report| report["resolved"] == true),
    }
}

/// The share of the FAIL_TO_PASS and PASS_TO_PASS tests that pass in a real report (0
/// when nothing was graded).
fn passing_share(report: &serde_json::Value) -> f64 {
    let status = &report["tests_status"];
    let count = |list: &str, result: &str| {
        status[list][result]
            .as_array()
            .map_or(0, |tests| tests.len())
    };
    let passed = count("FAIL_TO_PASS", "success") + count("PASS_TO_PASS", "success");
    let total = passed + count("FAIL_TO_PASS", "failure") + count("PASS_TO_PASS", "failure");
    if total == 0 {
        f64::from(u8::from(report["resolved"] == true))
    } else {
        passed as f64 / total as f64
    }
}

/// The candidates of the finished rollouts in `runs`, grouped by task (in id order), each
/// task's in run order then sample order. Unfinished rollouts are skipped with a warning.
pub fn read_candidates(runs: &[PathBuf]) -> Result<BTreeMap<String, Vec<Candidate>>> {
    let mut tasks: BTreeMap<String, Vec<(usize, usize, Candidate)>> = BTreeMap::new();
    for (run_index, run) in runs.iter().enumerate() {
        let dir = run.join("trajectories");
        let entries = std::fs::read_dir(&dir).with_context(|| {
            format!(
                "{}: not a run directory (no trajectories/ inside; give directories written \
                 by `swerve run --out`)",
                run.display()
            )
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(|entry| Some(entry.ok()?.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let read = read_trajectory(&file).map_err(|error| anyhow::anyhow!("{error}"))?;
            let header = &read.trajectory.header;
            let Some(outcome) = &read.trajectory.outcome else {
                eprintln!(
                    "warning: {}: the rollout did not finish; it is not a candidate",
                    file.display()
                );
                continue;
            };
            let sample = header
                .id
                .rsplit_once("__")
                .and_then(|(_, sample)| sample.parse().ok())
                .unwrap_or(0);
            let candidate = candidate(run, &header.id, &header.instance_id, outcome);
            tasks
                .entry(header.instance_id.clone())
                .or_default()
                .push((run_index, sample, candidate));
        }
    }
    if tasks.is_empty() {
        bail!("no finished rollouts in the runs given");
    }
    Ok(tasks
        .into_iter()
        .map(|(id, mut candidates)| {
            candidates.sort_by_key(|(run, sample, _)| (*run, *sample));
            (id, candidates.into_iter().map(|(_, _, c)| c).collect())
        })
        .collect())
}
