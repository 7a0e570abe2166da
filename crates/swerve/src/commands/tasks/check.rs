//! `swerve tasks check FILE`: certify a task file before training on it
//! ([`swerve_eval::check`] checks each task: gold must resolve, an empty patch must not,
//! each in a fresh workspace, every phase timed). Each task's record is written to
//! `<out>/checks/<instance_id>.json` as it ends (`--resume` keeps those of an interrupted
//! check); at the end it prints a table and a summary per repository and writes
//! `<out>/check.json` (every record) and the evaluations' logs under
//! `<out>/logs/{gold,empty}/<instance_id>/`. The exit status is 1 if any task is
//! `gold_unresolved`, `empty_resolved` or `error`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use swerve_core::atomic::write_json_atomically;
use swerve_eval::check::{CheckStatus, TaskCheck, check_task};
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
    let records = out.join("checks");
    std::fs::create_dir_all(&records)
        .with_context(|| format!("cannot create {}", records.display()))?;
    let earlier: Vec<Option<TaskCheck>> = tasks
        .iter()
        .map(|task| {
            args.resume
                .then(|| earlier_check(&record_path(&records, &task.instance_id)))
                .transpose()
                .map(Option::flatten)
        })
        .collect::<Result<_>>()?;
    let kept = earlier.iter().flatten().count();
    if kept > 0 {
        eprintln!(
            "{kept} of {} tasks already checked in {} (kept: --resume)",
            tasks.len(),
            records.display()
        );
    }
    let checks: Mutex<Vec<Option<TaskCheck>>> = Mutex::new(earlier);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.workers.max(1) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(task) = tasks.get(index) else { break };
                    let lock = || checks.lock().unwrap_or_else(|p| p.into_inner());
                    if lock()[index].is_some() {
                        continue;
                    }
                    let check = check_task(task, &gold, &empty);
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    eprintln!(
                        "[{finished}/{}] {:<40} {}  {:.1} s",
                        tasks.len() - kept,
                        task.instance_id,
                        check.status,
                        started.elapsed().as_secs_f64()
                    );
                    let path = record_path(&records, &task.instance_id);
                    if let Err(error) = write_json_atomically(&path, &check) {
                        eprintln!("cannot write {}: {error}", path.display());
                    }
                    lock()[index] = Some(check);
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
    print!("{}", summary(&checks));
    let count = |status| checks.iter().filter(|check| check.status == status).count();
    let failed = checks.iter().filter(|check| check.status.failed()).count();
    println!(
        "{} tasks: {} ok, {} cannot be validated offline, {} with broken expected test ids, {failed} failed; details in {}",
        checks.len(),
        count(CheckStatus::Ok),
        count(CheckStatus::Offline),
        count(CheckStatus::Dataset),
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

/// Per repository: how many tasks had each status, and on how many of the tasks that need
/// no network (all but `offline`) the gold patch resolves.
pub fn summary(checks: &[TaskCheck]) -> String {
    let mut by_repo: BTreeMap<&str, Vec<&TaskCheck>> = BTreeMap::new();
    for check in checks {
        by_repo.entry(&check.repo).or_default().push(check);
    }
    let mut out = format!("\n{:<32} {:>5}", "repository", "tasks");
    for status in CheckStatus::ALL {
        out.push_str(&format!(" {:>15}", status.name()));
    }
    out.push_str("  gold resolves (no network)\n");
    for (repo, checks) in by_repo {
        out.push_str(&format!("{repo:<32} {:>5}", checks.len()));
        for status in CheckStatus::ALL {
            let count = checks.iter().filter(|check| check.status == status).count();
            out.push_str(&format!(" {count:>15}"));
        }
        let candidates: Vec<_> = checks
            .iter()
            .filter(|check| check.status != CheckStatus::Offline)
            .collect();
        let resolved = candidates
            .iter()
            .filter(|check| check.gold_resolved)
            .count();
        out.push_str(&format!("  {resolved} of {}\n", candidates.len()));
    }
    out
}

/// Where a task's record is written as its check ends.
fn record_path(records: &Path, instance_id: &str) -> PathBuf {
    records.join(format!("{}.json", instance_id.replace('/', "__")))
}

/// The record an earlier (interrupted) check wrote at `path`, if any.
fn earlier_check(path: &Path) -> Result<Option<TaskCheck>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).with_context(|| {
            format!(
                "{}: not a task check record; remove it to check that task again",
                path.display()
            )
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The default output directory for `file`: `<stem>.check` in the working directory.
pub fn default_out(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    PathBuf::from(format!("{stem}.check"))
}
