//! `swerve edit-bench`: PR-Edit, SWE-Edit's editor benchmark (`docs/edit.md`). `build`
//! mines instances from a repository's history, with instructions from commit messages or
//! written by `[edit.writer]`; `run` sends each instance to the `[edit.editor]` model,
//! scores it (and asks `[edit.judge]`, when set), and writes `results.jsonl` line by line
//! and `summary.json` at the end. Each model may be served or the embedded one
//! (`--editor embedded`). `viewers` (the viewer baselines) is in `edit_viewers`.

mod viewers;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use swerve_core::atomic::write_json_atomically;
use swerve_edit::bench::responses::{Rewards, reward_responses};
use swerve_edit::bench::writer::write_instructions;
use swerve_edit::bench::{
    Decontaminator, MineOptions, MineUnit, Rate, RunOptions, Summary, mine, parse_splits,
    read_instances, run_and_summarize, split_by_pr, write_jsonl,
};
use swerve_rollout::models;

use crate::cli::{EditBenchBuildArgs, EditBenchCommand, EditBenchRunArgs};
use swerve_rollout::config::Config;

pub fn run(config: &Config, command: EditBenchCommand) -> Result<ExitCode> {
    match command {
        EditBenchCommand::Build(args) => build(config, args),
        EditBenchCommand::Run(args) => run_bench(config, args),
        EditBenchCommand::Viewers(args) => viewers::run(config, args),
        EditBenchCommand::Export(args) => export(config, args),
        EditBenchCommand::Reward(args) => reward(config, args),
    }
}

fn build(config: &Config, args: EditBenchBuildArgs) -> Result<ExitCode> {
    let defaults = MineOptions::default();
    let options = MineOptions {
        rev: args.rev.clone(),
        max_instances: args.max_instances,
        max_file_lines: args.max_file_lines,
        max_changed_lines: args.max_changed_lines,
        extensions: match args.ext.is_empty() {
            true => defaults.extensions,
            false => args
                .ext
                .iter()
                .map(|ext| ext.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
        },
        unit: match args.by {
            crate::cli::MineUnitArg::Commit => MineUnit::Commit,
            crate::cli::MineUnitArg::Pr => MineUnit::Pr,
        },
    };
    let splits = args
        .split
        .as_deref()
        .map(parse_splits)
        .transpose()
        .map_err(|error| anyhow::anyhow!("--split {error}"))?;
    let decontaminator = match &args.decontaminate {
        Some(file) => Some(Decontaminator::new(&swerve_rollout::open::tasks(file)?)),
        None => None,
    };
    let writer = models::chat_section(config.edit.writer.as_ref(), "edit.writer", config)?;
    let mut instances = Vec::new();
    for repo in &args.repo {
        let mined = mine(repo, &options)?;
        eprintln!("{}: {} instances", repo.display(), mined.len());
        instances.extend(mined);
    }
    let dropped = match &decontaminator {
        Some(filter) => filter.remove(&mut instances),
        None => Vec::new(),
    };
    if let Some(writer) = &writer {
        eprintln!(
            "writing {} instructions with {}",
            instances.len(),
            writer.name()
        );
        runtime()?.block_on(write_instructions(
            writer.as_ref(),
            &mut instances,
            args.concurrency,
        ));
    }
    let split_counts = splits
        .as_ref()
        .map(|splits| split_by_pr(&mut instances, splits, args.seed));
    write_jsonl(&args.out, &instances)?;
    let failed = instances
        .iter()
        .filter(|instance| instance.metadata.contains_key("writer_error"))
        .count();
    let repos: Vec<String> = args
        .repo
        .iter()
        .map(|repo| repo.display().to_string())
        .collect();
    eprintln!(
        "{} instances from {} written to {}{}",
        instances.len(),
        repos.join(", "),
        args.out.display(),
        match failed {
            0 => String::new(),
            n => format!(
                " ({n} kept their commit message: the writer failed; see metadata.writer_error)"
            ),
        }
    );
    if let Some(counts) = split_counts {
        let per_split: Vec<String> = counts
            .iter()
            .map(|(name, groups)| {
                let count = instances
                    .iter()
                    .filter(|instance| {
                        instance.metadata.get("split").and_then(|v| v.as_str()) == Some(name)
                    })
                    .count();
                format!("{name} {count} instances ({groups} PRs)")
            })
            .collect();
        eprintln!("split by PR: {}", per_split.join(", "));
    }
    if args.decontaminate.is_some() {
        let name = args
            .out
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
        let path = args.out.with_file_name(format!("{stem}.dropped.jsonl"));
        let text: String = dropped.iter().map(|row| format!("{row}\n")).collect();
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!(
            "decontamination: {} instances dropped (reasons in {})",
            dropped.len(),
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn run_bench(config: &Config, args: EditBenchRunArgs) -> Result<ExitCode> {
    let Some(editor) = models::chat_section(config.edit.editor.as_ref(), "edit.editor", config)?
    else {
        bail!(
            "edit-bench run needs an editor model: --editor NAME --base-url URL (an \
             OpenAI-compatible server), --editor embedded, or [edit.editor] in the configuration"
        );
    };
    let judge = models::chat_section(config.edit.judge.as_ref(), "edit.judge", config)?;
    if args.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let mut instances = read_instances(&args.data)?;
    if let Some(limit) = args.limit {
        instances.truncate(limit);
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let results_path = args.out.join("results.jsonl");
    let mut results = BufWriter::new(
        File::create(&results_path)
            .with_context(|| format!("cannot create {}", results_path.display()))?,
    );
    eprintln!(
        "{} instances, editor {}, {} at once",
        instances.len(),
        editor.name(),
        args.concurrency
    );
    let options = RunOptions {
        concurrency: args.concurrency,
        matching: config.edit.matching,
        format: config.edit.format,
    };
    let (_, summary) = runtime()?
        .block_on(run_and_summarize(
            &instances,
            editor.as_ref(),
            judge.as_deref(),
            &options,
            |result| {
                serde_json::to_writer(&mut results, result)?;
                results.write_all(b"\n")?;
                results.flush()
            },
        ))
        .with_context(|| format!("cannot write {}", results_path.display()))?;
    let summary_path = args.out.join("summary.json");
    write_json_atomically(&summary_path, &summary)
        .with_context(|| format!("cannot write {}", summary_path.display()))?;
    print_summary(&summary);
    Ok(ExitCode::SUCCESS)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn print_summary(summary: &Summary) {
    let rate = |label: &str, rate: &Rate| {
        println!(
            "{label:<28} {:>6}/{:<6} {:>6.1}%",
            rate.count,
            rate.of,
            rate.rate * 100.0
        );
    };
    println!(
        "{} instances in {:.1} s ({:.2} per second)",
        summary.instances, summary.wall_seconds, summary.instances_per_second
    );
    rate("format success", &summary.format_success);
    rate("match failures", &summary.match_failures);
    rate("model errors", &summary.model_errors);
    rate("applied", &summary.applied);
    rate("exact match", &summary.exact_match);
    rate("normalized match (SWE-Edit)", &summary.normalized_match);
    rate(
        "normalized match (strings)",
        &summary.normalized_match_strings,
    );
    rate("whole-file rewrites", &summary.whole_file_rewrite);
    rate("whitespace fallback used", &summary.fallback_used);
    if let Some(judged) = &summary.judge_equivalent {
        rate("judge: equivalent", judged);
    }
    println!(
        "editor tokens {} in, {} out; cost {:.4}",
        summary.editor_usage.prompt_tokens,
        summary.editor_usage.completion_tokens,
        summary.editor_cost
    );
}

/// `edit-bench export --format rl`: one row per instance, the editor's prompt under
/// `edit.format` and the target (`swerve_edit::rl_row`).
fn export(config: &Config, args: crate::cli::EditBenchExportArgs) -> Result<ExitCode> {
    if args.format != "rl" {
        bail!(
            "--format {:?}: edit-bench exports `rl` (the editor's RL prompts with their targets)",
            args.format
        );
    }
    let instances = read_instances(&args.instances)?;
    let selected: Vec<_> = instances
        .iter()
        .filter(|instance| {
            args.split.as_deref().is_none_or(|split| {
                instance
                    .metadata
                    .get("split")
                    .and_then(|value| value.as_str())
                    == Some(split)
            })
        })
        .collect();
    if selected.is_empty() {
        bail!(
            "{}: no instance{} to export",
            args.instances.display(),
            args.split.as_deref().map_or(String::new(), |split| format!(
                " in split {split:?} (metadata.split)"
            ))
        );
    }
    let rows: Vec<serde_json::Value> = selected
        .iter()
        .map(|instance| swerve_edit::rl_row(instance, config.edit.format))
        .collect();
    swerve_train::rows::write_rows(&args.out, |out| {
        for row in &rows {
            writeln!(out, "{row}")?;
        }
        Ok(())
    })?;
    println!(
        "{} RL prompts ({} format) written to {}",
        rows.len(),
        config.edit.format.name(),
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `edit-bench reward`: SWE-Edit's normalized-match reward of each response.
fn reward(config: &Config, args: crate::cli::EditBenchRewardArgs) -> Result<ExitCode> {
    let instances = read_instances(&args.instances)?;
    let Rewards {
        lines: out,
        total,
        count,
    } = reward_responses(
        &instances,
        &args.instances,
        &args.responses,
        config.edit.format,
        &config.edit.matching,
    )?;
    match &args.out {
        Some(path) => {
            std::fs::write(path, &out)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!(
                "{count} responses, mean reward {:.4}; rewards in {}",
                if count == 0 {
                    0.0
                } else {
                    total / count as f64
                },
                path.display()
            );
        }
        None => print!("{out}"),
    }
    Ok(ExitCode::SUCCESS)
}
