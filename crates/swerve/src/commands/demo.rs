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

use crate::cli::DemoArgs;
use swerve_rollout::config::Config;
use swerve_rollout::demo::{Replay, check, replay, tally};
use swerve_rollout::open;

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
