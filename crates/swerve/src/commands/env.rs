//! `swerve env exec` and `swerve env tool`: poke at a task's environment by hand.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use swerve_core::Shell;

use crate::cli::EnvCommand;
use swerve_rollout::config::Config;
use swerve_rollout::open;

pub fn run(config: &Config, command: EnvCommand) -> Result<ExitCode> {
    match command {
        EnvCommand::Exec {
            task,
            timeout,
            command,
        } => {
            let loaded = open::task(&task.tasks, &task.id)?;
            let workspace = open::workspace(config, &config.cache()?, &task.tasks, &loaded)?;
            let timeout = Duration::try_from_secs_f64(timeout)
                .ok()
                .filter(|timeout| !timeout.is_zero())
                .context("--timeout must be a positive number of seconds")?;
            let outcome = workspace.sandbox().run(&command.join(" "), timeout)?;
            std::io::stdout().write_all(&outcome.stdout)?;
            std::io::stderr().write_all(&outcome.stderr)?;
            if outcome.stdout_truncated || outcome.stderr_truncated {
                eprintln!(
                    "swerve: output truncated to {} bytes per stream",
                    config.sandbox.output_cap_bytes
                );
            }
            if outcome.timed_out {
                eprintln!("swerve: the command timed out after {timeout:?} and was killed");
            }
            if let Some(quota) = outcome.disk_limit {
                eprintln!(
                    "swerve: the workspace went over its disk quota of {quota} bytes (disk_limit); \
                     raise sandbox.limits.disk_bytes to allow more"
                );
            }
            workspace.destroy()?;
            Ok(ExitCode::from(outcome.shell_status().clamp(0, 255) as u8))
        }
        EnvCommand::Tool { task, calls, patch } => {
            let parsed = calls
                .iter()
                .enumerate()
                .map(|(index, text)| {
                    swerve_tools::parse_tool_call(text)
                        .map_err(|error| anyhow::anyhow!("tool call {}: {error}", index + 1))
                })
                .collect::<Result<Vec<_>>>()?;
            let loaded = open::task(&task.tasks, &task.id)?;
            let workspace = open::workspace(config, &config.cache()?, &task.tasks, &loaded)?;
            let mut toolbox = open::toolbox(config, &workspace);
            let mut failed = false;
            for call in &parsed {
                let result = toolbox.call(call);
                println!("{}", result.observation);
                failed |= result.is_error;
                if result.done {
                    break;
                }
            }
            if patch {
                print!("{}", workspace.patch(&config.patch)?.diff);
            }
            workspace.destroy()?;
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}
