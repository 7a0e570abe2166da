//! `swerve tasks check FILE`: certify a task file before training on it
//! ([`swerve_eval::check`] checks each task: gold must resolve, an empty patch must not,
//! each in a fresh workspace, every phase timed). Prints a table and writes
//! `<out>/check.json` (one record per task) and the evaluations' logs under
//! `<out>/logs/{gold,empty}/<instance_id>/`. The exit status is 1 if any task is
//! `gold_unresolved`, `empty_resolved` or `error`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use swerve_core::atomic::write_json_atomically;
use swerve_eval::check::{TaskCheck, check_task};
use swerve_eval::evaluate::{EvalSettings, Evaluator};
use swerve_eval::spec::RecipeTable;

use crate::cli::CheckArgs;
use swerve_rollout::config::Config;
use swerve_rollout::open;

pub fn run(config: &Config, args: &CheckArgs) -> Result<ExitCode> {
    let tasks = open::selected_tasks(&args.file, &args.ids)?;
    let out = args.out.clone().unwrap_or_else(|| default_out(&args.file));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let recipes =
        RecipeTable::shipped_with(args.recipes.as_deref().or(config.run.recipes.as_deref()))
            .map_err(|error| anyhow::anyhow!("{error}"))?;
    let cache = config.cache()?;
    let repos = config.repo_map(&args.file);
    let images = swerve_rollout::open::TaskImages(config.clone());
    let evaluator = |kind: &str| {
        let mut settings: EvalSettings = config.eval_settings(out.join("logs").join(kind));
        settings.use_cache = false;
        if let Some(seconds) = args.timeout {
            settings.test_timeout = Duration::from_secs_f64(seconds);
        }
        Evaluator {
            cache: &cache,
            repos: &repos,
            recipes: &recipes,
            settings,
            images: Some(&images),
        }
    };
    let (gold, empty) = (evaluator("gold"), evaluator("empty"));
    let checks: Mutex<Vec<Option<TaskCheck>>> = Mutex::new(vec![None; tasks.len()]);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.workers.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(index) else { break };
                    let check = check_task(task, &gold, &empty);
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    eprintln!(
                        "[{finished}/{}] {:<40} {}  {:.1} s",
                        tasks.len(),
                        task.instance_id,
                        check.status,
                        started.elapsed().as_secs_f64()
                    );
                    checks.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(check);
                }
            });
        }
    });
    let checks: Vec<TaskCheck> = checks
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect();
    let json = out.join("check.json");
    write_json_atomically(&json, &checks)
        .with_context(|| format!("cannot write {}", json.display()))?;
    print!("{}", table(&checks));
    let count = |status: &str| checks.iter().filter(|check| check.status == status).count();
    let failed = checks
        .iter()
        .filter(|check| !matches!(check.status, "ok" | "offline" | "dataset"))
        .count();
    println!(
        "{} tasks: {} ok, {} cannot be validated offline, {} with broken expected test ids, {failed} failed; details in {}",
        checks.len(),
        count("ok"),
        count("offline"),
        count("dataset"),
        json.display()
    );
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The table printed at the end: one row per task.
pub fn table(checks: &[TaskCheck]) -> String {
    let mut out = format!(
        "{:<40} {:<16} {:>6} {:>7} {:>7} {:>7} {:>7} {:>7}  reason\n",
        "instance", "status", "base", "env", "gold", "tests", "empty", "tests"
    );
    for check in checks {
        let s = &check.seconds;
        out.push_str(&format!(
            "{:<40} {:<16} {:>6.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1}  {}\n",
            check.instance_id,
            check.status,
            s.base,
            s.environment,
            s.gold,
            s.gold_tests,
            s.empty,
            s.empty_tests,
            check.reason.as_deref().unwrap_or("")
        ));
    }
    out
}

/// The default output directory for `file`: `<stem>.check` in the working directory.
pub fn default_out(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    PathBuf::from(format!("{stem}.check"))
}
