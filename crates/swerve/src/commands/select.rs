//! `swerve select`: test-time scaling over the candidates of one or more runs. Writes
//! `<out>/selection.json` (every candidate with its scores, each task's pick, TTS@k and
//! pass@k per k) and `<out>/preds.jsonl` (the picked patches, SWE-bench predictions), and
//! prints the table of k. With `--by swr`, candidates without an SWR score are scored by
//! the reward model when `--tasks` is given.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use swerve_core::atomic::write_atomically;
use swerve_eval::predictions::Prediction;
use swerve_train::stats::render_rate;

use crate::cli::SelectArgs;
use swerve_rollout::config::{Config, EvaluatorKind};
use swerve_rollout::grading;
use swerve_rollout::open;
use swerve_train::tts::{Candidate, SelectBy, Selection, select};

use swerve_rollout::run_dir::read_candidates;

pub fn run(config: &Config, args: SelectArgs) -> Result<ExitCode> {
    let by = SelectBy::from(args.by);
    let candidates = read_candidates(&args.runs)?;
    for file in &candidates.unfinished {
        eprintln!(
            "warning: {}: the rollout did not finish; it is not a candidate",
            file.display()
        );
    }
    let mut tasks = candidates.tasks;
    let unscored = |tasks: &BTreeMap<String, Vec<Candidate>>| {
        tasks
            .values()
            .flatten()
            .filter(|candidate| candidate.score(by).is_none())
            .count()
    };
    if by == SelectBy::Swr && unscored(&tasks) > 0 {
        match &args.tasks {
            Some(file) => score_missing(config, file, &args.out, args.concurrency, &mut tasks)?,
            None => bail!(
                "{} candidates have no SWR score: give --tasks FILE to score them with the \
                 reward model ([world.reward_model]), or run with --eval swr",
                unscored(&tasks)
            ),
        }
    }
    if matches!(by, SelectBy::Tests | SelectBy::Oracle) && unscored(&tasks) > 0 {
        eprintln!(
            "warning: {} candidates have no real evaluation (run with --eval); they rank last",
            unscored(&tasks)
        );
    }
    let selection = select(tasks, by, args.seed);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    write(
        &args.out.join("selection.json"),
        &serde_json::to_string_pretty(&selection)?,
    )?;
    let model = format!("swerve-select-{}", by_name(by));
    let mut preds = String::new();
    for task in &selection.tasks {
        let prediction = Prediction {
            instance_id: task.instance_id.clone(),
            model_name_or_path: model.clone(),
            model_patch: Some(task.candidates[task.selected].patch.clone()),
        };
        preds.push_str(&serde_json::to_string(&prediction)?);
        preds.push('\n');
    }
    write(&args.out.join("preds.jsonl"), &preds)?;
    print!("{}", render(&selection));
    Ok(ExitCode::SUCCESS)
}

fn by_name(by: SelectBy) -> &'static str {
    match by {
        SelectBy::Swr => "swr",
        SelectBy::Tests => "tests",
        SelectBy::Oracle => "oracle",
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    write_atomically(path, |out| out.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Scores every candidate without an SWR score with the reward model, `concurrency` at once.
fn score_missing(
    config: &Config,
    task_file: &Path,
    out: &Path,
    concurrency: usize,
    tasks: &mut BTreeMap<String, Vec<Candidate>>,
) -> Result<()> {
    let by_id: BTreeMap<String, swerve_core::Task> = open::tasks(task_file)?
        .into_iter()
        .map(|task| (task.instance_id.clone(), task))
        .collect();
    if let Some(missing) = tasks.keys().find(|id| !by_id.contains_key(*id)) {
        bail!(
            "{}: no task {missing}, which the runs have candidates for",
            task_file.display()
        );
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let _entered = runtime.enter();
    let grader = grading::grader(
        config,
        EvaluatorKind::Swr,
        task_file,
        config.eval_settings(out.join("swr-logs")),
        &grading::analyses(config)?,
    )?;
    let permits = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let jobs: Vec<(String, usize)> = tasks
        .iter()
        .flat_map(|(id, candidates)| {
            candidates
                .iter()
                .enumerate()
                .filter(|(_, candidate)| candidate.swr.is_none())
                .map(move |(index, _)| (id.clone(), index))
        })
        .collect();
    eprintln!("scoring {} candidates with the reward model", jobs.len());
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|(id, index)| {
            let (grader, permits) = (grader.clone(), permits.clone());
            let task = by_id[&id].clone();
            let patch = tasks[&id][index].patch.clone();
            let handle = runtime.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let patch = Some(patch.as_str()).filter(|patch| !patch.is_empty());
                grader.grade(&task, patch, None).await
            });
            (id, index, handle)
        })
        .collect();
    for (id, index, handle) in handles {
        let grade = runtime.block_on(handle)?;
        if let Some(error) = &grade.report.error {
            eprintln!("warning: {id} candidate {index}: {error}");
        }
        tasks.get_mut(&id).expect("a task of the runs")[index].swr = grade.score;
    }
    Ok(())
}

/// The table of k: TTS@k beside pass@k, and the resolve rate of all candidates.
fn render(selection: &Selection) -> String {
    let percent =
        |value: Option<f64>| value.map_or("n/a".to_owned(), |v| format!("{:.1}%", v * 100.0));
    let mut text = format!(
        "{} tasks, up to {} candidates each; picked by {} (seed {})\n{:>3}  {:>8}  {:>8}  {:>12}  {:>6}\n",
        selection.tasks.len(),
        selection.max_k,
        by_name(selection.by),
        selection.seed,
        "k",
        "TTS@k",
        "pass@k",
        "picked SWR",
        "tasks"
    );
    for at in &selection.metrics {
        text.push_str(&format!(
            "{:>3}  {:>8}  {:>8}  {:>12}  {:>6}\n",
            at.k,
            percent(at.tts),
            percent(at.pass_at_k),
            at.mean_selected_swr
                .map_or("n/a".to_owned(), |v| format!("{v:.3}")),
            at.tasks_with_k
        ));
    }
    text.push_str(&format!(
        "resolve rate of all candidates (real evaluation): {}\n",
        percent(selection.resolve_rate)
    ));
    for (what, rates) in [
        ("runs", &selection.across_runs),
        ("samples", &selection.across_samples),
    ] {
        if let Some(spread) = rates.spread.as_ref().filter(|spread| spread.n > 1) {
            let each: Vec<String> = rates
                .repeats
                .iter()
                .map(|repeat| format!("{} {:.1}%", repeat.repeat, repeat.rate * 100.0))
                .collect();
            text.push_str(&format!(
                "across {what}: {} [{}]\n",
                render_rate(spread),
                each.join(", ")
            ));
        }
    }
    text
}
