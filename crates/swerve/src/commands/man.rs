//! `swerve man`: man pages generated from the command-line definitions. Without `--out`,
//! swerve(1) on standard output; with it, one page per command (`swerve-data-export.1` for
//! `swerve data export`), each written whole or not at all.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, ManArgs};

pub fn run(args: &ManArgs) -> Result<ExitCode> {
    let command = Cli::command();
    match &args.out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command).render(&mut page)?;
            return super::write_stdout(&page);
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the directory {}", dir.display()))?;
            let written = write_pages(command, "swerve", dir)?;
            eprintln!("{written} man pages written to {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the page of `command`, invoked as `invoked` (`swerve data export`), and those of
/// its visible subcommands; returns how many were written.
fn write_pages(command: clap::Command, invoked: &str, dir: &Path) -> Result<usize> {
    let page_name = invoked.replace(' ', "-");
    let command = command
        .display_name(page_name.clone())
        .bin_name(invoked.to_owned());
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    let path = dir.join(format!("{page_name}.1"));
    swerve_core::atomic::write_atomically(&path, |out| out.write_all(&page))
        .with_context(|| format!("cannot write {}", path.display()))?;
    let mut written = 1;
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        written += write_pages(sub.clone(), &format!("{invoked} {}", sub.get_name()), dir)?;
    }
    Ok(written)
}
