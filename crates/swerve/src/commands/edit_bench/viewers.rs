//! `swerve edit-bench viewers`: SWE-Edit's viewer baselines (Appendix E.1,
//! `docs/edit.md`). Reads PR-Edit instances, runs BM25, the embedding retriever
//! (`[edit.embedder]`) and the LLM viewer (`[edit.viewer]`, served or embedded) on each,
//! and writes `viewers.jsonl`, `viewers-summary.json` (both atomically) and a table.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use swerve_core::atomic::write_json_atomically;
use swerve_edit::bench::viewers::{
    Bm25, CompareOptions, LONG_FILE_LINES, Method, Stats, Viewer, ViewersSummary, compare,
};
use swerve_edit::bench::{read_instances, write_jsonl};
use swerve_llm::{HttpEmbedder, HttpModelConfig};
use swerve_rollout::models;

use super::runtime;
use crate::cli::EditBenchViewersArgs;
use swerve_rollout::config::Config;

pub fn run(config: &Config, args: EditBenchViewersArgs) -> Result<ExitCode> {
    for (value, option) in [
        (args.chunk_lines, "--chunk-lines"),
        (args.top, "--top"),
        (args.concurrency, "--concurrency"),
    ] {
        if value == 0 {
            bail!("{option} must be at least 1");
        }
    }
    if !(args.bm25_k1.is_finite() && args.bm25_k1 >= 0.0) {
        bail!("--bm25-k1 must be a number of at least 0 (1.2 by default)");
    }
    if !(0.0..=1.0).contains(&args.bm25_b) {
        bail!("--bm25-b must be between 0 and 1 (0.75 by default)");
    }
    let methods = methods(config, &args.methods)?;
    let viewer = match methods.contains(&Method::Llm) {
        true => models::chat_section(config.edit.viewer.as_ref(), "edit.viewer", config)?,
        false => None,
    };
    let embedder = match (methods.contains(&Method::Embedding), &config.edit.embedder) {
        (true, Some(section)) => Some(embedder(section, config)?),
        _ => None,
    };
    let viewers: Vec<Viewer> = methods
        .iter()
        .filter_map(|method| match method {
            Method::Bm25 => Some(Viewer::Bm25(Bm25 {
                k1: args.bm25_k1,
                b: args.bm25_b,
            })),
            Method::Embedding => embedder.as_ref().map(Viewer::Embedding),
            Method::Llm => viewer.as_deref().map(Viewer::Llm),
        })
        .collect();
    let mut instances = read_instances(&args.data)?;
    if let Some(limit) = args.limit {
        instances.truncate(limit);
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let names: Vec<&str> = methods.iter().map(Method::name).collect();
    eprintln!(
        "{} instances, methods {}, {} at once",
        instances.len(),
        names.join(", "),
        args.concurrency
    );
    let options = CompareOptions {
        chunk_lines: args.chunk_lines,
        top: args.top,
        concurrency: args.concurrency,
    };
    let (records, summary) = runtime()?.block_on(compare(&instances, &viewers, &options));
    write_jsonl(&args.out.join("viewers.jsonl"), &records)?;
    let summary_path = args.out.join("viewers-summary.json");
    write_json_atomically(&summary_path, &summary)
        .with_context(|| format!("cannot write {}", summary_path.display()))?;
    print_summary(&summary);
    Ok(ExitCode::SUCCESS)
}

/// The methods asked for, in the order given without repeats, each with its model; by
/// default BM25 and every method whose model is configured.
fn methods(config: &Config, asked: &[Method]) -> Result<Vec<Method>> {
    if asked.is_empty() {
        let mut methods = vec![Method::Bm25];
        if config.edit.embedder.is_some() {
            methods.push(Method::Embedding);
        }
        if config.edit.viewer.is_some() {
            methods.push(Method::Llm);
        }
        return Ok(methods);
    }
    let mut seen = BTreeSet::new();
    let methods: Vec<Method> = asked
        .iter()
        .copied()
        .filter(|method| seen.insert(*method))
        .collect();
    if methods.contains(&Method::Embedding) && config.edit.embedder.is_none() {
        bail!(
            "the embedding method needs an embedding model: --embedder NAME --embedder-base-url \
             URL (an OpenAI-compatible server with /embeddings), or [edit.embedder] in the \
             configuration"
        );
    }
    if methods.contains(&Method::Llm) && config.edit.viewer.is_none() {
        bail!(
            "the llm method needs a viewer model: --viewer NAME --viewer-base-url URL (an \
             OpenAI-compatible server), --viewer embedded, or [edit.viewer] in the configuration"
        );
    }
    Ok(methods)
}

/// The `[edit.embedder]` client, its settings checked with the section named.
fn embedder(section: &HttpModelConfig, config: &Config) -> Result<HttpEmbedder> {
    if section.model.is_empty() || section.model == swerve_rollout::models::EMBEDDED {
        bail!(
            "edit.embedder.name must name an embedding model served behind an \
             OpenAI-compatible /embeddings endpoint (the embedded model does not embed)"
        );
    }
    if section.base_url.is_empty() {
        bail!(
            "edit.embedder.name is {} but edit.embedder.base_url is not set: give the base URL \
             of its OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1)",
            section.model
        );
    }
    Ok(HttpEmbedder::new(section.clone())
        .context("edit.embedder")?
        .with_prices(config.prices()?))
}

fn print_summary(summary: &ViewersSummary) {
    println!(
        "{} of {} instances scored ({} skipped: the change touches no line of the original) in \
         {:.1} s; chunks of {} lines, top {}",
        summary.evaluated,
        summary.instances,
        summary.skipped_no_changes,
        summary.wall_seconds,
        summary.chunk_lines,
        summary.top
    );
    println!(
        "{:<10} {:<11} {:>5} {:>7} {:>9} {:>6} {:>8} {:>8} {:>8} {:>7}",
        "method",
        "files",
        "n",
        "recall",
        "precision",
        "F1",
        "ctx red.",
        "micro R",
        "micro P",
        "failed"
    );
    let percent =
        |value: Option<f64>| value.map_or("-".to_owned(), |v| format!("{:.1}%", v * 100.0));
    for (method, figures) in &summary.methods {
        let groups: [(String, &Stats); 3] = [
            ("all".to_owned(), &figures.all),
            (format!("≤{LONG_FILE_LINES} lines"), &figures.short_files),
            (format!(">{LONG_FILE_LINES} lines"), &figures.long_files),
        ];
        for (index, (files, stats)) in groups.iter().enumerate() {
            let row = format!(
                "{:<10} {:<11} {:>5} {:>7} {:>9} {:>6} {:>8} {:>8} {:>8} {:>7}",
                method.name(),
                files,
                stats.instances,
                percent(stats.recall),
                percent(stats.precision),
                stats.f1.map_or("-".to_owned(), |f1| format!("{f1:.3}")),
                percent(stats.context_reduction),
                percent(stats.micro_recall),
                percent(stats.micro_precision),
                match index {
                    0 => figures.failures.to_string(),
                    _ => String::new(),
                }
            );
            println!("{}", row.trim_end());
        }
    }
    for (method, figures) in &summary.methods {
        if let Some(model) = &figures.model {
            println!(
                "{method} ({model}): tokens {} in, {} out; cost {:.4}",
                figures.usage.prompt_tokens, figures.usage.completion_tokens, figures.cost
            );
        }
    }
}
