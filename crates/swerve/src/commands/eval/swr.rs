//! `swerve eval --evaluator swr`: the reward model grades the patches instead of their
//! tests, nothing runs but git. Writes what real evaluation writes (`results.json`,
//! `report.json`, `logs/<id>/`), each report marked `"evaluator": "swr"` with its votes.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};
use swerve_core::Task;
use swerve_eval::report::InstanceReport;

use super::{Mode, exit_code, summarize, write_json};
use crate::cli::EvalArgs;
use crate::config::Config;
use crate::world::analysis::Analyses;
use crate::world::grading::{EvaluationContexts, SwrGrader, SwrReport};

/// Grades `patches` (per task as [`super::patches`] gives them) with the reward model.
pub fn run(
    config: &Config,
    args: &EvalArgs,
    mode: Mode,
    tasks: &[Task],
    patches: &[Option<Option<String>>],
) -> Result<ExitCode> {
    if args.repeat > 1 {
        bail!("--repeat finds flaky tests by running them; --evaluator swr runs none");
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let _entered = runtime.enter();
    let analyses = Arc::new(Analyses::new(&config.world, config.cache()?.root())?);
    let contexts = Arc::new(EvaluationContexts::new(config, &args.tasks, analyses)?);
    let grader = Arc::new(SwrGrader::new(
        config,
        contexts,
        Some(args.out.join("logs")),
    )?);
    let permits = Arc::new(tokio::sync::Semaphore::new(args.workers.max(1)));
    let handles: Vec<_> = tasks
        .iter()
        .zip(patches)
        .map(|(task, patch)| {
            let patch = patch.clone()?;
            let (grader, permits, task) = (grader.clone(), permits.clone(), task.clone());
            Some(runtime.spawn(async move {
                let _permit = permits.acquire_owned().await;
                grader.grade(&task, patch.as_deref(), None).await
            }))
        })
        .collect();
    let total = handles.iter().flatten().count();
    let mut reports: Vec<(String, Option<SwrReport>)> = Vec::new();
    for (task, handle) in tasks.iter().zip(handles) {
        let report = match handle {
            Some(handle) => Some(runtime.block_on(handle)?),
            None => None,
        };
        if let Some(report) = &report {
            eprintln!(
                "[{}/{total}] {:<40} {}",
                reports.iter().filter(|(_, r)| r.is_some()).count() + 1,
                task.instance_id,
                verdict(report)
            );
        }
        reports.push((task.instance_id.clone(), report));
    }
    let ids: Vec<String> = tasks.iter().map(|task| task.instance_id.clone()).collect();
    let results: serde_json::Map<String, serde_json::Value> = reports
        .iter()
        .filter_map(|(id, report)| Some((id.clone(), serde_json::to_value(report.as_ref()?).ok()?)))
        .collect();
    let plain: Vec<(String, Option<InstanceReport>)> = reports
        .into_iter()
        .map(|(id, report)| (id, report.map(|report| report.report)))
        .collect();
    write_json(&args.out.join("results.json"), &results)?;
    write_json(
        &args.out.join("report.json"),
        &swerve_eval::report::RunReport::new(&ids, &plain),
    )?;
    summarize(&plain, mode);
    println!("(predicted by the reward model: no test ran)");
    Ok(exit_code(&plain, mode))
}

fn verdict(report: &SwrReport) -> String {
    let score = report
        .swr
        .score
        .map_or("no usable vote".to_owned(), |score| {
            format!("score {score:.2}")
        });
    match (&report.report.error, report.report.resolved) {
        (Some(error), _) => format!("ERROR ({error})"),
        (None, true) => format!("PREDICTED RESOLVED ({score})"),
        (None, false) => format!("PREDICTED NOT RESOLVED ({score})"),
    }
}
