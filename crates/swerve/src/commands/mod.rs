//! One module per subcommand; [`run`] dispatches and applies command-line overrides.

mod completions;
mod config;
mod context;
mod data;
pub mod demo;
mod doctor;
mod edit_bench;
mod env;
pub mod eval;
mod images;
mod man;
mod replay;
mod run;
mod select;
mod serve;
mod tasks;
pub mod traj;
mod view;
mod worker;
mod world;

use std::process::ExitCode;

use std::path::PathBuf;

use anyhow::Result;

use crate::cli::{Cli, Command, DataCommand, IsolationArg, StrategyArg};
use swerve_rollout::config::layers::{given, toml_string};
use swerve_rollout::config::{Config, Sources};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    // What describes the command line itself needs no configuration: a broken swerve.toml
    // must not keep a shell from getting its completions.
    match &cli.command {
        Command::Completions(args) => return completions::run(args),
        Command::Man(args) => return man::run(args),
        _ => {}
    }
    let resolved = Config::resolve(&sources(&cli))?;
    let config = resolved.config;
    match cli.command {
        Command::Tasks(command) => tasks::run(&config, command),
        Command::Env(command) => env::run(&config, command),
        Command::Demo(args) => demo::run(&config, args),
        Command::Run(args) => run::run(&config, args),
        Command::Traj(command) => traj::run(command),
        Command::Eval(args) => eval::run(&config, args),
        Command::Replay(args) => replay::run(&config, args),
        Command::Context(command) => context::run(command),
        Command::Data(command) => data::run(&config, command),
        Command::EditBench(command) => edit_bench::run(&config, command),
        Command::Serve(_) => serve::run(&config),
        Command::Worker => worker::run(&config),
        Command::Select(args) => select::run(&config, args),
        Command::World(command) => world::run(command),
        Command::Images(command) => images::run(&config, command),
        Command::View(args) => view::run(args),
        Command::Doctor => doctor::run(&config),
        Command::Config(command) => config::run(&config, &resolved.origins, command),
        Command::Completions(_) | Command::Man(_) => unreachable!("dispatched above"),
    }
}

/// Writes generated text to standard output; a reader that stopped early (`| head`) is not an
/// error.
fn write_stdout(text: &[u8]) -> Result<ExitCode> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Where the configuration comes from: the file, the presets, the command line's options
/// (global ones, `swerve run`'s and `swerve data backfill`'s) and its `--set` overrides.
fn sources(cli: &Cli) -> Sources {
    let options = &cli.global;
    let quoted = toml_string;
    let path = |path: &PathBuf| toml_string(&path.to_string_lossy());
    let mut assignments = given([
        ("cache_dir", options.cache_dir.as_ref().map(path)),
        ("repos_dir", options.repos.as_ref().map(path)),
        (
            "sandbox.isolation",
            options.isolation.map(|isolation| {
                quoted(match isolation {
                    IsolationArg::Auto => "auto",
                    IsolationArg::Namespaces => "namespaces",
                    IsolationArg::None => "none",
                })
            }),
        ),
        (
            "workspace.strategy",
            options.strategy.map(|strategy| {
                quoted(match strategy {
                    StrategyArg::Auto => "auto",
                    StrategyArg::Overlay => "overlay",
                    StrategyArg::Reflink => "reflink",
                    StrategyArg::Copy => "copy",
                })
            }),
        ),
        (
            "sandbox.network",
            options.network.then(|| "true".to_owned()),
        ),
    ]);
    if let Command::Run(args) = &cli.command {
        assignments.extend(args.assignments());
    }
    if let Command::Data(DataCommand::Backfill(args)) = &cli.command {
        assignments.extend(args.assignments());
    }
    if let Command::Data(DataCommand::World(args)) = &cli.command {
        assignments.extend(args.assignments());
    }
    if let Command::Replay(args) = &cli.command {
        assignments.extend(args.assignments());
    }
    if let Command::EditBench(command) = &cli.command {
        assignments.extend(command.assignments());
    }
    if let Command::Serve(args) = &cli.command {
        assignments.extend(args.assignments());
    }
    if let Command::Eval(args) = &cli.command {
        assignments.extend(args.assignments());
    }
    Sources {
        file: options.config.clone(),
        presets: options.preset.clone(),
        options: assignments,
        sets: options.set.clone(),
    }
}
