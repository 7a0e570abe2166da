//! `swerve completions SHELL`: the shell's completion script for every command and option,
//! generated from the same definitions that parse the command line.

use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub fn run(args: &CompletionsArgs) -> Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "swerve", &mut script);
    super::write_stdout(&script)
}
