//! `swerve demo`: replays each bundled task's solution demonstration through the native
//! tools in a sandboxed workspace, takes the workspace's patch, and checks the task's tests
//! on a fresh workspace with that patch applied.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use swerve_core::Task;
use swerve_core::atomic::write_atomically;
use swerve_core::demonstration::Demonstration;
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::grading::TestResults;
use swerve_eval::report::InstanceReport;
use swerve_eval::spec::RecipeTable;

use crate::cli::DemoArgs;
use crate::config::Config;
use crate::open;

/// What replaying one demonstration produced.
pub struct Replay {
    /// Observation texts, one per call.
    pub observations: Vec<String>,
    /// The workspace's patch after the calls.
    pub patch: String,
}

pub fn run(config: &Config, args: DemoArgs) -> Result<ExitCode> {
    let tasks = open::tasks(&args.tasks)?;
    let selected: Vec<&Task> = tasks
        .iter()
        .filter(|task| args.ids.is_empty() || args.ids.contains(&task.instance_id))
        .filter(|task| demo_path(&args.demos, task).exists())
        .collect();
    if selected.is_empty() {
        bail!(
            "no task of {} has a demonstration in {}",
            args.tasks.display(),
            args.demos.display()
        );
    }
    if let Some(output) = &args.output {
        std::fs::create_dir_all(output)
            .with_context(|| format!("cannot create {}", output.display()))?;
    }
    let mut resolved = 0;
    for task in &selected {
        let started = Instant::now();
        let demonstration = Demonstration::load(&demo_path(&args.demos, task))?;
        if demonstration.instance_id != task.instance_id {
            bail!(
                "{}: field \"instance_id\" is \"{}\" but the file is named for task \"{}\"",
                demo_path(&args.demos, task).display(),
                demonstration.instance_id,
                task.instance_id
            );
        }
        let replay = replay(config, &args.tasks, task, &demonstration)?;
        let report = check(config, &args.tasks, task, &replay.patch)?;
        let status = report.tests_status.as_ref();
        let (f2p, f2p_total, f2p_failing) = tally(status.map(|status| &status.fail_to_pass));
        let (p2p, p2p_total, p2p_failing) = tally(status.map(|status| &status.pass_to_pass));
        if report.resolved {
            resolved += 1;
        }
        println!(
            "{:<32} {:>2} calls  patch {:>5} B  FAIL_TO_PASS {}/{}  PASS_TO_PASS {}/{}  {}  {:.1} s",
            task.instance_id,
            demonstration.calls.len(),
            replay.patch.len(),
            f2p,
            f2p_total,
            p2p,
            p2p_total,
            if report.resolved {
                "RESOLVED"
            } else {
                "NOT RESOLVED"
            },
            started.elapsed().as_secs_f64()
        );
        for test in f2p_failing.iter().chain(&p2p_failing) {
            println!("    not passing: {test}");
        }
        if let Some(output) = &args.output {
            write_outputs(output, task, &replay)?;
        }
    }
    println!(
        "{resolved}/{} tasks resolved by their demonstrations",
        selected.len()
    );
    Ok(if resolved == selected.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn demo_path(dir: &Path, task: &Task) -> PathBuf {
    dir.join(format!("{}.json", task.instance_id))
}

/// Replays `demonstration` in a fresh workspace of `task` and returns observations and patch.
pub fn replay(
    config: &Config,
    task_file: &Path,
    task: &Task,
    demonstration: &Demonstration,
) -> Result<Replay> {
    let workspace = open::workspace(config, &config.cache()?, task_file, task)?;
    let mut toolbox = open::toolbox(config, &workspace);
    let mut observations = Vec::new();
    for call in &demonstration.calls {
        let result = toolbox.call(call);
        observations.push(result.observation);
        if result.done {
            break;
        }
    }
    let patch = workspace.patch(&config.patch)?.diff;
    workspace.destroy()?;
    Ok(Replay {
        observations,
        patch,
    })
}

/// Grades `patch` for `task` (loaded from `task_file`) with the evaluation harness.
pub fn check(
    config: &Config,
    task_file: &Path,
    task: &Task,
    patch: &str,
) -> Result<InstanceReport> {
    let cache = config.cache()?;
    let repos = config.repo_map(task_file);
    let recipes = RecipeTable::shipped();
    let mut settings = EvalSettings {
        use_cache: false,
        ..EvalSettings::default()
    };
    settings.workspace.sandbox = config.sandbox.clone();
    settings.workspace.sandbox.output_cap_bytes =
        settings.workspace.sandbox.output_cap_bytes.max(64 << 20);
    let evaluator = Evaluator {
        cache: &cache,
        repos: &repos,
        recipes: &recipes,
        settings,
        images: None,
    };
    let report = evaluator.evaluate(task, Some(patch));
    if let (Some(class), Some(error)) = (report.error_class, &report.error) {
        bail!(
            "task {}: evaluation failed ({class:?}): {error}",
            task.instance_id
        );
    }
    Ok(report)
}

/// How many of `tests` passed, and the ones that did not, from a graded report.
pub fn tally(results: Option<&TestResults>) -> (usize, usize, Vec<String>) {
    match results {
        Some(results) => (
            results.success.len(),
            results.success.len() + results.failure.len(),
            results.failure.clone(),
        ),
        None => (0, 0, Vec::new()),
    }
}

/// Writes `<id>.patch` and `<id>.observations.jsonl`, each all or nothing.
fn write_outputs(dir: &Path, task: &Task, replay: &Replay) -> Result<()> {
    let observations: String = replay
        .observations
        .iter()
        .map(|observation| format!("{}\n", serde_json::json!({ "observation": observation })))
        .collect();
    for (suffix, content) in [
        ("patch", &replay.patch),
        ("observations.jsonl", &observations),
    ] {
        let path = dir.join(format!("{}.{suffix}", task.instance_id));
        write_atomically(&path, |out| out.write_all(content.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
