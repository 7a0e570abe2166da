//! The `swerve` command-line tool, as a library so its pieces can be tested directly.
//!
//! A thin layer over the library crates: parse the command line ([`cli`]), load the
//! configuration ([`config`]), run one command ([`commands`]), print errors a person can
//! act on and exit with a meaningful status.

pub mod cli;
pub mod commands;
pub mod config;
pub mod embedded;
pub mod grading;
pub mod logging;
pub mod open;
pub mod training;
pub mod world;

use std::process::ExitCode;

use clap::Parser;

/// Runs the command line of this process.
pub fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    logging::init(cli.global.verbose);
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(1)
        }
    }
}
