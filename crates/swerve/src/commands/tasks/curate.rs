//! `swerve tasks curate`: the tasks of a task file worth training on
//! ([`swerve_train::curate`]), with evidence read from `swerve eval --gold --repeat N`
//! (determinism) and `swerve run --eval` directories (past success rates). Writes the kept
//! tasks and one JSON line per task with the reasons it was dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use swerve_core::task::{TaskFileFormat, save_tasks};
use swerve_core::trajectory::import::load_all;
use swerve_train::curate::{Determinism, Evidence, Filters, SuccessCount, curate};
use swerve_train::reward::resolved;

use crate::cli::CurateArgs;
use swerve_rollout::open;
use swerve_train::rows::write_lines;

use swerve_rollout::run_dir::trajectory_files;

pub fn run(args: &CurateArgs) -> Result<ExitCode> {
    if !(0.0..=1.0).contains(&args.max_success_rate) {
        bail!(
            "--max-success-rate is {}; give a rate from 0 to 1",
            args.max_success_rate
        );
    }
    let tasks = open::tasks(&args.tasks)?;
    let filters = Filters {
        max_files: args.max_files,
        max_lines: args.max_lines,
        dedupe: args.dedupe,
        max_success_rate: args.max_success_rate,
        keep_unsolved: args.keep_unsolved,
    };
    let evidence = Evidence {
        outcomes: (!args.runs.is_empty())
            .then(|| success_counts(&args.runs))
            .transpose()?,
        determinism: args.determinism.as_deref().map(determinism).transpose()?,
    };
    let decisions = curate(&tasks, &filters, &evidence);
    let kept: Vec<_> = tasks
        .iter()
        .zip(&decisions)
        .filter(|(_, decision)| decision.kept)
        .map(|(task, _)| task.clone())
        .collect();
    let report = args
        .report
        .clone()
        .unwrap_or_else(|| args.out.with_extension("decisions.jsonl"));
    save_tasks(&args.out, &kept, TaskFileFormat::from_path(&args.out))
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    write_lines(&report, &decisions)?;
    for decision in decisions.iter().filter(|decision| !decision.kept) {
        println!(
            "dropped {}: {}",
            decision.instance_id,
            decision.reasons.join("; ")
        );
    }
    println!(
        "kept {} of {} tasks -> {} (decisions: {})",
        kept.len(),
        tasks.len(),
        args.out.display(),
        report.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Graded rollouts per task over the trajectories of the run directories `runs`.
fn success_counts(runs: &[PathBuf]) -> Result<BTreeMap<String, SuccessCount>> {
    let mut counts: BTreeMap<String, SuccessCount> = BTreeMap::new();
    let mut ungraded = 0;
    for run in runs {
        for loaded in load_all(&trajectory_files(Some(run), &[])?)? {
            let header = &loaded.trajectory.header;
            let Some(success) = loaded
                .trajectory
                .outcome
                .as_ref()
                .and_then(|outcome| resolved(outcome, &header.instance_id))
            else {
                ungraded += 1;
                continue;
            };
            let count = counts.entry(header.instance_id.clone()).or_default();
            count.rollouts += 1;
            count.resolved += usize::from(success);
        }
    }
    if ungraded > 0 {
        eprintln!(
            "warning: {ungraded} trajectories of --runs are unfinished or ungraded (run with \
             --eval) and were not counted"
        );
    }
    Ok(counts)
}

/// The result of `swerve eval --gold --repeat N --out dir`: `results.json` (the first
/// run's reports) and `flaky.json` (tests whose result varied).
fn determinism(dir: &Path) -> Result<Determinism> {
    let flaky_path = dir.join("flaky.json");
    if !flaky_path.exists() {
        bail!(
            "{} not found: --determinism takes the output of `swerve eval --gold --repeat N \
             --out DIR` with N of at least 2",
            flaky_path.display()
        );
    }
    let flaky: BTreeMap<String, BTreeSet<String>> = read_json(&flaky_path)?;
    let results_path = dir.join("results.json");
    let results: BTreeMap<String, Value> = read_json(&results_path)?;
    let mut resolved = BTreeMap::new();
    for (id, report) in results {
        let Some(value) = report.get("resolved").and_then(Value::as_bool) else {
            bail!(
                "{}: instance {id}: field `resolved` is missing or not true/false; grade again \
                 with swerve eval",
                results_path.display()
            );
        };
        resolved.insert(id, value);
    }
    Ok(Determinism { resolved, flaky })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not the JSON swerve eval writes; grade again with swerve eval",
            path.display()
        )
    })
}
