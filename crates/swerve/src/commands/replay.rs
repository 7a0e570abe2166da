//! `swerve replay`: re-execute recorded trajectories in fresh workspaces of their tasks
//! (opened as `swerve run` opens them) through [`swerve_rollout::replay`], and write the replayed
//! trajectories and the fidelity report.
//!
//! Layout of `--out DIR`: `trajectories/<id>.jsonl` (the recorded replies with swerve's
//! observations), `report.json` ([`ReplayReport`]), `table.md` (its per-repository table),
//! `throughput.json` (replay time beside the recorded environment time) and, with
//! `--grade`, `eval-logs/`.

use std::process::ExitCode;

use anyhow::{Context, Result};
use swerve_core::atomic::{write_atomically, write_json_atomically};
use swerve_core::trajectory::import::detect_and_import;
use swerve_replay::{ReplayReport, Throughput};

use crate::cli::ReplayArgs;
use swerve_rollout::config::Config;
use swerve_rollout::replay::Replay;

/// Runs `swerve replay`.
pub fn run(config: &Config, args: ReplayArgs) -> Result<ExitCode> {
    let mut trajectories = Vec::new();
    for file in &args.files {
        trajectories.extend(detect_and_import(file).map_err(|error| anyhow::anyhow!("{error}"))?);
    }
    for dir in ["trajectories", "eval-logs"] {
        let dir = args.out.join(dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let shared = Replay::open(config, &args.tasks, args.grade, &args.out)?;
    let mut reports = Vec::new();
    let mut throughput = Throughput::default();
    for trajectory in &trajectories {
        let report = shared.replay(trajectory, &mut throughput);
        match &report.error {
            Some(error) => eprintln!("{}: not replayed: {error}", report.id),
            None => eprintln!(
                "{}: {} steps, {} agree, {} diverge, {} not replayable; patch {}",
                report.id,
                report.agreement.steps,
                report.agreement.agree,
                report.agreement.diverge,
                report.agreement.not_replayable,
                match &report.patch {
                    Some(patch) if patch.equal => "equal",
                    Some(_) => "differs",
                    None => "not recorded",
                }
            ),
        }
        reports.push(report);
    }
    let report = ReplayReport::of(reports);
    let write = |name: &str, text: &str| {
        let path = args.out.join(name);
        write_atomically(&path, |file| {
            std::io::Write::write_all(file, text.as_bytes())
        })
        .with_context(|| format!("cannot write {}", path.display()))
    };
    write_json_atomically(&args.out.join("report.json"), &report)
        .with_context(|| format!("cannot write {}", args.out.join("report.json").display()))?;
    write_json_atomically(&args.out.join("throughput.json"), &throughput).with_context(|| {
        format!(
            "cannot write {}",
            args.out.join("throughput.json").display()
        )
    })?;
    let table = report.table();
    write("table.md", &table)?;
    print!("{table}");
    Ok(match report.total.failed {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}
