//! `swerve tasks validate`, `swerve tasks list`, `swerve tasks curate` ([`curate`]) and
//! `swerve tasks check` ([`check`]).

mod check;
mod curate;

use std::process::ExitCode;

use anyhow::Result;
use swerve_core::task::{Severity, validate_tasks};

use crate::cli::TasksCommand;
use swerve_rollout::config::Config;
use swerve_rollout::open;

pub fn run(config: &Config, command: TasksCommand) -> Result<ExitCode> {
    match command {
        TasksCommand::Check(args) => check::run(config, &args),
        TasksCommand::Validate { files } => validate(&files),
        TasksCommand::List { file, json } => list(&file, json),
        TasksCommand::Curate(args) => curate::run(&args),
    }
}

/// Loads every file and prints every problem; exit 1 if any file fails or has an error.
fn validate(files: &[std::path::PathBuf]) -> Result<ExitCode> {
    let mut failed = false;
    for file in files {
        match open::tasks(file) {
            Err(error) => {
                failed = true;
                eprintln!("error: {error:#}");
            }
            Ok(tasks) => {
                let problems = validate_tasks(&tasks);
                let errors = problems
                    .iter()
                    .filter(|problem| problem.severity == Severity::Error)
                    .count();
                for problem in &problems {
                    eprintln!("{}: {problem}", file.display());
                }
                failed |= errors > 0;
                println!(
                    "{}: {} tasks, {} errors, {} warnings",
                    file.display(),
                    tasks.len(),
                    errors,
                    problems.len() - errors
                );
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints one line per task.
fn list(file: &std::path::Path, json: bool) -> Result<ExitCode> {
    let tasks = open::tasks(file)?;
    for task in &tasks {
        if json {
            let row = serde_json::json!({
                "instance_id": task.instance_id,
                "repo": task.repo,
                "base_commit": task.base_commit,
                "FAIL_TO_PASS": task.fail_to_pass.len(),
                "PASS_TO_PASS": task.pass_to_pass.len(),
            });
            println!("{row}");
        } else {
            let commit = task.base_commit.get(..12).unwrap_or(&task.base_commit);
            println!(
                "{:<48} {:<32} {:<12} f2p={:<3} p2p={}",
                task.instance_id,
                task.repo,
                commit,
                task.fail_to_pass.len(),
                task.pass_to_pass.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
