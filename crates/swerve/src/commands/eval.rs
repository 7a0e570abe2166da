//! `swerve eval`: grade predictions (or the gold / empty patches) by SWE-bench's rules, in
//! sandboxes, with a worker pool; `--repeat N` finds flaky tests; `--regrade DIR` re-grades
//! saved logs without running anything.
//!
//! Writes `<out>/results.json` (instance id → report), `<out>/report.json` (SWE-bench's run
//! report), `<out>/logs/<instance_id>/` (patch, eval script, apply log, test output, report)
//! and, with `--repeat`, `<out>/flaky.json`. `--evaluator swr` has the reward model grade
//! instead (each report then marked `"evaluator": "swr"` with its votes): both are one
//! `Grader`, from `swerve_rollout::grading`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use swerve_cluster::grading::ClusterGrader;
use swerve_cluster::protocol::GradingSetup;
use swerve_core::Task;
use swerve_core::atomic::write_json_atomically;
use swerve_eval::evaluate::grade_guarded;
use swerve_eval::grader::{Grade, Grader};
use swerve_eval::offline::NeedsNetwork;
use swerve_eval::predictions::load_predictions;
use swerve_eval::report::{InstanceReport, ReportFile, RunReport};

use crate::cli::EvalArgs;
use swerve_rollout::config::cluster::Backend;
use swerve_rollout::config::{Config, EvaluatorKind};
use swerve_rollout::{grading, open};

pub fn run(config: &Config, args: EvalArgs) -> Result<ExitCode> {
    let task_file = open::chosen_task_file(&args.tasks.choice(), &args.out)?;
    let tasks = open::selected_tasks(&task_file, &args.ids)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    if let Some(dir) = &args.regrade {
        return regrade(&tasks, dir, &args.out);
    }
    let patches = patches(&args, &tasks)?;
    let mut config = config.clone();
    if let Some(recipes) = &args.recipes {
        config.run.recipes = Some(recipes.clone());
    }
    let mut settings = config.eval_settings(args.out.join("logs"));
    settings.use_cache = !args.no_cache && args.repeat <= 1;
    if let Some(seconds) = args.timeout {
        settings.test_timeout = Duration::from_secs_f64(seconds);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let _entered = runtime.enter();
    let (grader, workers) = match config.cluster.backend {
        Backend::Local => {
            let grader = grading::grader(
                &config,
                args.evaluator,
                &task_file,
                settings,
                &grading::analyses(&config)?,
            )?;
            (grader, args.workers)
        }
        Backend::Ray => {
            let setup = GradingSetup {
                evaluator: args.evaluator,
                use_cache: settings.use_cache,
                test_timeout_secs: args.timeout,
            };
            let cluster = crate::cluster::start(&config, &task_file, &args.out, Some(setup))?;
            let workers = cluster.jobs_at_once();
            let grader: Arc<dyn Grader> = Arc::new(ClusterGrader {
                cluster: Arc::new(cluster),
                config: config.clone(),
                out: args.out.clone(),
                runs_tests: args.evaluator == EvaluatorKind::Tests,
                count: AtomicUsize::new(0),
            });
            (grader, workers)
        }
    };
    if args.repeat > 1 && !grader.runs_tests() {
        bail!("--repeat finds flaky tests by running them; --evaluator swr runs none");
    }
    let runs = args.repeat.max(1);
    let jobs: Vec<(usize, usize)> = (0..tasks.len())
        .filter(|&task| patches[task].is_some())
        .flat_map(|task| (0..runs).map(move |run| (task, run)))
        .collect();
    let total = jobs.len();
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    let graded = runtime.block_on(grading::grade_all(
        grader.clone(),
        jobs.iter()
            .map(|&(task, _)| (tasks[task].clone(), patches[task].clone().flatten()))
            .collect(),
        workers,
        move |task, grade| {
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            eprintln!(
                "[{finished}/{total}] {:<40} {}  {:.1} s",
                task.instance_id,
                verdict(grade),
                started.elapsed().as_secs_f64()
            );
        },
    ))?;
    let mut results: Vec<Vec<Option<Grade>>> = vec![vec![None; runs]; tasks.len()];
    for (&(task_index, run), (_, grade)) in jobs.iter().zip(graded) {
        results[task_index][run] = Some(grade);
    }
    let first: Vec<(String, Option<Grade>)> = tasks
        .iter()
        .zip(&results)
        .map(|(task, runs)| (task.instance_id.clone(), runs[0].clone()))
        .collect();
    let saved: BTreeMap<&str, serde_json::Value> = first
        .iter()
        .filter_map(|(id, grade)| Some((id.as_str(), grade.as_ref()?.to_json())))
        .collect();
    write_json(&args.out.join("results.json"), &saved)?;
    let first: Vec<(String, Option<InstanceReport>)> = first
        .into_iter()
        .map(|(id, grade)| (id, grade.map(|grade| grade.report)))
        .collect();
    let ids: Vec<String> = tasks.iter().map(|task| task.instance_id.clone()).collect();
    write_json(&args.out.join("report.json"), &RunReport::new(&ids, &first))?;
    if runs > 1 {
        let flaky = flaky_tests(&tasks, &results);
        write_json(&args.out.join("flaky.json"), &flaky)?;
        if flaky.is_empty() {
            println!("no flaky test in {runs} runs of each task");
        }
        for (id, tests) in &flaky {
            println!(
                "FLAKY {id}: {}",
                tests.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    summarize(&first, args.mode());
    if !grader.runs_tests() {
        println!("(predicted by the reward model: no test ran)");
    }
    Ok(exit_code(&first, args.mode()))
}

/// The patch to grade per task: `None` = not submitted; `Some(None)` = submitted without one.
fn patches(args: &EvalArgs, tasks: &[Task]) -> Result<Vec<Option<Option<String>>>> {
    match args.mode() {
        // A family's gold: SWE-smith's is the reverse of its bug.
        Mode::Gold => tasks
            .iter()
            .map(|task| {
                swerve_eval::rule::gold_patch(task)
                    .map(Some)
                    .with_context(|| format!("task {}", task.instance_id))
            })
            .collect(),
        Mode::Empty => Ok(tasks.iter().map(|_| Some(Some(String::new()))).collect()),
        Mode::Predictions => {
            let file = args
                .predictions
                .as_ref()
                .context("give --predictions FILE, --gold or --empty")?;
            let loaded = load_predictions(file).map_err(|error| anyhow::anyhow!("{error}"))?;
            for error in &loaded.errors {
                eprintln!("error: {error} (skipped)");
            }
            let by_id: BTreeMap<&str, &Option<String>> = loaded
                .predictions
                .iter()
                .map(|prediction| (prediction.instance_id.as_str(), &prediction.model_patch))
                .collect();
            Ok(tasks
                .iter()
                .map(|task| {
                    by_id
                        .get(task.instance_id.as_str())
                        .map(|patch| (*patch).clone())
                })
                .collect())
        }
    }
}

/// Which patches are graded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Predictions,
    Gold,
    Empty,
}

impl EvalArgs {
    fn mode(&self) -> Mode {
        if self.gold {
            Mode::Gold
        } else if self.empty {
            Mode::Empty
        } else {
            Mode::Predictions
        }
    }
}

/// One grade, as the progress line shows it.
fn verdict(grade: &Grade) -> String {
    if grade.prediction.is_none() {
        return test_verdict(&grade.report);
    }
    let score = grade.score.map_or("no usable vote".to_owned(), |score| {
        format!("score {score:.2}")
    });
    match (&grade.report.error, grade.resolved()) {
        (Some(error), _) => format!("ERROR ({error})"),
        (None, true) => format!("PREDICTED RESOLVED ({score})"),
        (None, false) => format!("PREDICTED NOT RESOLVED ({score})"),
    }
}

fn test_verdict(report: &InstanceReport) -> String {
    match (report.error_class, report.resolved) {
        (Some(class), _) => format!(
            "ERROR ({})",
            serde_json::to_value(class)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
        (None, true) => "RESOLVED".into(),
        (None, false) => "NOT RESOLVED".into(),
    }
}

/// Tests whose result differs between runs of the same task.
fn flaky_tests(
    tasks: &[Task],
    results: &[Vec<Option<Grade>>],
) -> BTreeMap<String, BTreeSet<String>> {
    let mut flaky = BTreeMap::new();
    for (task, runs) in tasks.iter().zip(results) {
        let mut seen: BTreeMap<&str, BTreeSet<bool>> = BTreeMap::new();
        for status in runs
            .iter()
            .flatten()
            .filter_map(|grade| grade.report.tests_status.as_ref())
        {
            for results in [
                &status.fail_to_pass,
                &status.pass_to_pass,
                &status.fail_to_fail,
                &status.pass_to_fail,
            ] {
                for test in &results.success {
                    seen.entry(test).or_default().insert(true);
                }
                for test in &results.failure {
                    seen.entry(test).or_default().insert(false);
                }
            }
        }
        let varying: BTreeSet<String> = seen
            .into_iter()
            .filter(|(_, outcomes)| outcomes.len() > 1)
            .map(|(test, _)| test.to_owned())
            .collect();
        if !varying.is_empty() {
            flaky.insert(task.instance_id.clone(), varying);
        }
    }
    flaky
}

/// Re-grades `<dir>/logs/<id>/test_output.txt` with the parser and eval type recorded in
/// the saved report, under the guard's findings it recorded (canaries left out and judged,
/// markers checked against the saved `eval.sh`), without running anything.
fn regrade(tasks: &[Task], dir: &Path, out: &Path) -> Result<ExitCode> {
    let mut results = Vec::new();
    for task in tasks {
        let logs = dir.join("logs").join(&task.instance_id);
        let saved: Option<InstanceReport> = std::fs::read(logs.join("report.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<ReportFile>(&bytes).ok())
            .and_then(|mut file| file.remove(&task.instance_id));
        let Some(mut report) = saved else {
            results.push((task.instance_id.clone(), None));
            continue;
        };
        if let (Ok(log), Some(spec)) = (
            std::fs::read_to_string(logs.join("test_output.txt")),
            report.spec.clone(),
        ) {
            let script = std::fs::read_to_string(logs.join("eval.sh")).ok();
            grade_guarded(
                &mut report,
                &log,
                &spec.log_parser,
                spec.eval_type,
                task,
                script.as_deref(),
            );
        }
        eprintln!("{:<40} {}", task.instance_id, test_verdict(&report));
        results.push((task.instance_id.clone(), Some(report)));
    }
    write_reports(out, tasks, &results)?;
    summarize(&results, Mode::Predictions);
    Ok(ExitCode::SUCCESS)
}

fn write_reports(
    out: &Path,
    tasks: &[Task],
    results: &[(String, Option<InstanceReport>)],
) -> Result<()> {
    let ids: Vec<String> = tasks.iter().map(|task| task.instance_id.clone()).collect();
    let file: ReportFile = results
        .iter()
        .filter_map(|(id, report)| report.clone().map(|report| (id.clone(), report)))
        .collect();
    write_json(&out.join("results.json"), &file)?;
    write_json(&out.join("report.json"), &RunReport::new(&ids, results))
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<()> {
    write_json_atomically(path, value).with_context(|| format!("cannot write {}", path.display()))
}

fn summarize(results: &[(String, Option<InstanceReport>)], mode: Mode) {
    let graded: Vec<&InstanceReport> = results
        .iter()
        .filter_map(|(_, report)| report.as_ref())
        .collect();
    let resolved = graded.iter().filter(|report| report.resolved).count();
    let errors = graded
        .iter()
        .filter(|report| report.error_class.is_some())
        .count();
    let label = match mode {
        Mode::Gold => "gold patches resolve their task",
        Mode::Empty => "tasks resolved with an empty patch (should be 0)",
        Mode::Predictions => "resolved",
    };
    println!(
        "{resolved}/{} {label}; {errors} errors; {} not submitted",
        graded.len(),
        results.len() - graded.len()
    );
    if mode == Mode::Gold {
        let offline: Vec<(&String, &NeedsNetwork)> = results
            .iter()
            .filter_map(|(id, report)| Some((id, report.as_ref()?.needs_network.as_ref()?)))
            .collect();
        if !offline.is_empty() {
            println!(
                "{} tasks cannot be validated offline (needs_network in results.json):",
                offline.len()
            );
            for (id, needs) in offline {
                println!("  {id}: {needs}");
            }
        }
    }
}

/// `--gold` fails unless every gold patch resolves; `--empty` fails if any empty patch does.
fn exit_code(results: &[(String, Option<InstanceReport>)], mode: Mode) -> ExitCode {
    let reports = || results.iter().filter_map(|(_, report)| report.as_ref());
    let failed = match mode {
        Mode::Gold => reports().any(|report| !report.resolved),
        Mode::Empty => reports().any(|report| report.resolved),
        Mode::Predictions => false,
    };
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
