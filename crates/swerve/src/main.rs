//! The `swerve` command-line tool: a thin layer over the library crates. Parse the command
//! line ([`cli`]), load the configuration (`swerve_rollout::config`), run one command
//! ([`commands`]) showing its progress ([`batch`], [`logging`]), print errors a person can
//! act on and exit with a meaningful status.
//! Nothing imports this crate; a second front end uses `swerve-rollout` and the crates
//! below it.

mod batch;
mod cli;
mod cluster;
mod commands;
mod logging;
mod units;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(cli.global.verbose);
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{}", swerve_core::hint::report(error.as_ref()));
            ExitCode::from(1)
        }
    }
}
