//! `swerve config`: print the resolved configuration, or the built-in presets.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::ConfigCommand;
use swerve_rollout::config::{Config, presets};

pub fn run(config: &Config, origins: &[String], command: ConfigCommand) -> Result<ExitCode> {
    match command {
        ConfigCommand::Show => {
            println!("# layers, first to last: {}", origins.join(" + "));
            print!("{}", config.to_toml()?);
        }
        ConfigCommand::Presets => {
            for preset in presets::all() {
                println!("{}\n    {}\n", preset.name, preset.description());
            }
            println!(
                "Use one with --preset NAME; `swerve config show --preset NAME` shows the result."
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
