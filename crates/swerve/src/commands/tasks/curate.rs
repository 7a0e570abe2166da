//! `swerve tasks curate`: the tasks of a task file worth training on
//! ([`swerve_train::curate`]), with evidence read from `swerve eval --gold --repeat N`
//! (determinism) and `swerve run --eval` directories (past success rates). Writes the kept
//! tasks and one JSON line per task with the reasons it was dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use swerve_core::task::{TaskFileFormat, save_tasks};
use swerve_core::trajectory::import::load_all;
use swerve_train::curate::{self, Evidence, Filters, SuccessCount, curate, read_determinism};

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
        determinism: args
            .determinism
            .as_deref()
            .map(read_determinism)
            .transpose()?,
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
    let mut loaded = Vec::new();
    for run in runs {
        loaded.extend(load_all(&trajectory_files(Some(run), &[])?)?);
    }
    let (counts, ungraded) = curate::success_counts(&loaded);
    if ungraded > 0 {
        eprintln!(
            "warning: {ungraded} trajectories of --runs are unfinished or ungraded (run with \
             --eval) and were not counted"
        );
    }
    Ok(counts)
}
