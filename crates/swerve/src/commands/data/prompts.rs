//! `swerve data prompts`: trainers' prompt datasets ([`swerve_rollout::prompt_rows`]),
//! written once every row is made, or not at all.

use std::process::ExitCode;

use anyhow::Result;
use swerve_rollout::config::Config;
use swerve_rollout::open;
use swerve_rollout::prompt_rows::{PromptFormat, prompt_rows};
use swerve_train::rows::write_lines;

use crate::cli::{PromptFormatArg, PromptsArgs};

pub fn run(config: &Config, args: &PromptsArgs) -> Result<ExitCode> {
    let tasks = open::selected_tasks(&args.tasks, &args.ids)?;
    let format = match args.format {
        PromptFormatArg::Verl => PromptFormat::Verl,
        PromptFormatArg::Skyrl => PromptFormat::Skyrl,
        PromptFormatArg::Openrlhf => PromptFormat::Openrlhf,
    };
    let rows = prompt_rows(config, &tasks, format)?;
    write_lines(&args.out, &rows)?;
    println!("{} prompts written to {}", rows.len(), args.out.display());
    Ok(ExitCode::SUCCESS)
}
