//! `swerve edit-bench`: PR-Edit, SWE-Edit's editor benchmark (`docs/edit.md`). `build`
//! mines instances from a repository's history, with instructions from commit messages or
//! written by `[edit.writer]`; `run` sends each instance to the `[edit.editor]` model,
//! scores it (and asks `[edit.judge]`, when set), and writes `results.jsonl` line by line
//! and `summary.json` at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use swerve_core::atomic::write_atomically;
use swerve_edit::bench::writer::write_instructions;
use swerve_edit::bench::{
    MineOptions, Rate, RunOptions, Summary, mine, read_instances, run_and_summarize, write_jsonl,
};
use swerve_llm::{ApiMode, HttpModel, HttpModelConfig};

use crate::cli::{EditBenchBuildArgs, EditBenchCommand, EditBenchRunArgs};
use crate::config::Config;

pub fn run(config: &Config, command: EditBenchCommand) -> Result<ExitCode> {
    match command {
        EditBenchCommand::Build(args) => build(config, args),
        EditBenchCommand::Run(args) => run_bench(config, args),
    }
}

fn build(config: &Config, args: EditBenchBuildArgs) -> Result<ExitCode> {
    let defaults = MineOptions::default();
    let options = MineOptions {
        rev: args.rev,
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
    };
    let writer = served(config.edit.writer.as_ref(), "writer", "--writer", config)?;
    let mut instances = mine(&args.repo, &options)?;
    if let Some(writer) = &writer {
        eprintln!(
            "writing {} instructions with {}",
            instances.len(),
            writer.config().model
        );
        runtime()?.block_on(write_instructions(writer, &mut instances, args.concurrency));
    }
    write_jsonl(&args.out, &instances)?;
    let failed = instances
        .iter()
        .filter(|instance| instance.metadata.contains_key("writer_error"))
        .count();
    eprintln!(
        "{} instances from {} written to {}{}",
        instances.len(),
        args.repo.display(),
        args.out.display(),
        match failed {
            0 => String::new(),
            n => format!(
                " ({n} kept their commit message: the writer failed; see metadata.writer_error)"
            ),
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn run_bench(config: &Config, args: EditBenchRunArgs) -> Result<ExitCode> {
    let Some(editor) = served(config.edit.editor.as_ref(), "editor", "--editor", config)? else {
        bail!(
            "edit-bench run needs an editor model: --editor NAME --base-url URL (an \
             OpenAI-compatible server), or [edit.editor] in the configuration"
        );
    };
    let judge = served(config.edit.judge.as_ref(), "judge", "--judge", config)?;
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
        editor.config().model,
        args.concurrency
    );
    let options = RunOptions {
        concurrency: args.concurrency,
        matching: config.edit.matching,
    };
    let judge_model = judge.as_ref().map(|judge| judge as &dyn swerve_llm::Model);
    let (_, summary) = runtime()?
        .block_on(run_and_summarize(
            &instances,
            &editor,
            judge_model,
            &options,
            |result| {
                serde_json::to_writer(&mut results, result)?;
                results.write_all(b"\n")?;
                results.flush()
            },
        ))
        .with_context(|| format!("cannot write {}", results_path.display()))?;
    let summary_path = args.out.join("summary.json");
    write_atomically(&summary_path, |out| {
        serde_json::to_writer_pretty(&mut *out, &summary)?;
        out.write_all(b"\n")
    })
    .with_context(|| format!("cannot write {}", summary_path.display()))?;
    print_summary(&summary);
    Ok(ExitCode::SUCCESS)
}

/// The served model a `[edit.ROLE]` section names, checked; `None` when it is not set.
fn served(
    model: Option<&HttpModelConfig>,
    role: &str,
    option: &str,
    config: &Config,
) -> Result<Option<HttpModel>> {
    let Some(model) = model else {
        return Ok(None);
    };
    if model.model.is_empty() {
        bail!("edit.{role}.name is not set: give {option} NAME, the served model's name");
    }
    if model.base_url.is_empty() {
        bail!(
            "{option} {} needs a server: give its base URL (e.g. http://127.0.0.1:8000/v1) \
             [edit.{role}.base_url]",
            model.model
        );
    }
    if model.mode != ApiMode::Chat {
        bail!("the {role} is asked in chat mode: set edit.{role}.mode = \"chat\"");
    }
    let http = HttpModel::new(model.clone())
        .with_context(|| format!("edit.{role}"))?
        .with_prices(config.prices()?);
    Ok(Some(http))
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
