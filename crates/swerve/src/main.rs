//! The `swerve` command-line tool: a thin layer over the library crates. Parse the command
//! line ([`cli`]), load the configuration (`swerve_rollout::config`), run one command
//! ([`commands`]) showing its progress ([`batch`], [`logging`]), print errors a person can
//! act on and exit with a meaningful status.
//! Nothing imports this crate; a second front end uses `swerve-rollout` and the crates
//! below it.

mod batch;
mod cli;
mod commands;
mod logging;

use std::process::ExitCode;

use clap::Parser;
use swerve_core::hint::Hint;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(cli.global.verbose);
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            report(&error);
            ExitCode::from(1)
        }
    }
}

/// Prints `error` as `error: ` and its causes on one line, then its [`Hint`], if it has one,
/// on its own `hint: ` line.
fn report(error: &anyhow::Error) {
    let hint = error.downcast_ref::<Hint>().map(Hint::to_string);
    let message: Vec<String> = error
        .chain()
        .map(ToString::to_string)
        .filter(|text| hint.as_ref() != Some(text))
        .collect();
    eprintln!("error: {}", message.join(": "));
    if let Some(hint) = hint {
        eprintln!("hint: {hint}");
    }
}
