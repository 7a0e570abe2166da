//! `swerve world fidelity`: how faithful the world models are to real execution, from
//! samples recorded with `world.record.simulate` (SWE-World's Tables 3 and 4).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde::Serialize;
use swerve_world::fidelity::{SwrFidelity, SwtFidelity};
use swerve_world::samples::WorldSample;

use crate::cli::WorldCommand;
use swerve_world::samples::files::read_samples;

pub fn run(command: WorldCommand) -> Result<ExitCode> {
    match command {
        WorldCommand::Fidelity { paths, json } => fidelity(&paths, json),
    }
}

/// The fidelity report.
#[derive(Debug, Serialize)]
struct Report {
    swt: SwtFidelity,
    /// Commands whose simulation failed (no prediction to compare).
    swt_failed_simulations: usize,
    swr: SwrFidelity,
    /// Patches the reward model gave no usable vote for.
    swr_without_votes: usize,
}

fn fidelity(paths: &[PathBuf], json: bool) -> Result<ExitCode> {
    let samples = read_samples(paths)?;
    let (mut commands, mut grades) = (Vec::new(), Vec::new());
    let (mut failed_simulations, mut without_votes) = (0, 0);
    for sample in &samples {
        match sample {
            WorldSample::Swt(sample) => match &sample.simulated {
                Some(simulated) => commands.push((sample.real.clone(), simulated.clone())),
                None if sample.simulation_error.is_some() => failed_simulations += 1,
                None => {}
            },
            WorldSample::Swr(sample) => match &sample.simulated {
                Some(predicted) if predicted.mean.is_some() => {
                    grades.push((predicted.resolved, sample.real.reward == 1));
                }
                Some(_) => without_votes += 1,
                None => {}
            },
        }
    }
    if commands.is_empty() && grades.is_empty() && failed_simulations + without_votes == 0 {
        bail!(
            "{} samples, none with a simulated result to compare: record with \
             --set world.record.simulate=true (and the transition and reward models set)",
            samples.len()
        );
    }
    let report = Report {
        swt: SwtFidelity::of(&commands),
        swt_failed_simulations: failed_simulations,
        swr: SwrFidelity::of(&grades),
        swr_without_votes: without_votes,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn render(report: &Report) -> String {
    let ratio = |value: Option<f64>| value.map_or("n/a".to_owned(), |v| format!("{v:.3}"));
    let swt = &report.swt;
    let swr = &report.swr;
    format!(
        "SWT (transition model): {} commands compared, {} simulations failed\n  \
         exit code agreement   {}\n  success agreement     {}\n  \
         output similarity     {}\n  exact output          {}\n\
         SWR (reward model): {} patches compared, {} without a usable vote\n  \
         accuracy   {}\n  precision  {}\n  recall     {}\n  F1         {}\n  \
         (TP {} · FP {} · TN {} · FN {})\n",
        swt.commands,
        report.swt_failed_simulations,
        ratio(swt.exit_code_agreement),
        ratio(swt.success_agreement),
        ratio(swt.output_similarity),
        ratio(swt.exact_output),
        swr.patches,
        report.swr_without_votes,
        ratio(swr.accuracy),
        ratio(swr.precision),
        ratio(swr.recall),
        ratio(swr.f1),
        swr.true_positives,
        swr.false_positives,
        swr.true_negatives,
        swr.false_negatives,
    )
}
