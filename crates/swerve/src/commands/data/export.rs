//! `swerve data export`: trainer records from trajectories
//! ([`swerve_train::export::exporter`]), rewarded with the `[reward]` settings, optionally
//! only those reaching `--min-reward` (rejection fine-tuning; turns that caused format
//! errors are never trained). The file is written once every trajectory converted, or not
//! at all.

use std::process::ExitCode;

use anyhow::{Result, bail};
use serde_json::Value;
use swerve_core::trajectory::import::load_all;
use swerve_rollout::config::Config;
use swerve_rollout::run_dir::trajectory_files;
use swerve_train::agile::tokens::load_model;
use swerve_train::export::exporter::{Exporter, Options};
use swerve_train::rows::write_lines;

use crate::cli::ExportArgs;

pub fn run(config: &Config, args: &ExportArgs) -> Result<ExitCode> {
    let model = match (&args.tokenizer, args.retokenize) {
        (Some(dir), true) => Some(load_model(dir, args.chat_template.as_deref())?),
        (Some(_), false) => {
            bail!("--tokenizer is for --retokenize: token ids come from what the model returned")
        }
        (None, _) => None,
    };
    let mut exporter = Exporter::new(Options {
        format: args.format,
        reward: &config.reward,
        min_reward: args.min_reward,
        max_response_len: args.max_response_len,
        retokenizer: model.as_ref(),
    })?;
    let files = trajectory_files(args.source.run.as_deref(), &args.source.files)?;
    let mut rows: Vec<Value> = Vec::new();
    for loaded in load_all(&files)? {
        rows.extend(exporter.rows(&loaded)?);
        for warning in exporter.warnings.drain(..) {
            eprintln!("warning: {warning}");
        }
    }
    write_lines(&args.out, &rows)?;
    println!(
        "{}",
        exporter.summary(rows.len(), &args.out.display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}
