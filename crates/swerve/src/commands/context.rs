//! `swerve context stats | plot | reward`: SWE-AGILE's reasoning context measured with a
//! model's tokenizer and chat template (see [`crate::agile`] and `docs/agile.md`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use swerve_chat::ChatModel;
use swerve_core::atomic::write_atomically;
use swerve_core::trajectory::import::{Loaded, load_all};
use swerve_train::reward::resolved;

use crate::cli::{ContextCommand, RateArg, TokenizerArgs, WindowArgs};
use swerve_train::agile::accounting::{StepTokens, TrajectoryTokens};
use swerve_train::agile::measure::{Measured, record_reward};
use swerve_train::agile::plot::svg;
use swerve_train::agile::tokens::load_model;
use swerve_train::agile::window;
use swerve_train::reward::{RewardConfig, compression_reward};

pub fn run(command: ContextCommand) -> Result<ExitCode> {
    match command {
        ContextCommand::Stats {
            files,
            tokenizer,
            window,
            steps,
            json,
        } => {
            let model = model(&tokenizer)?;
            for loaded in load_all(&files)? {
                print_stats(&measure(&model, &loaded, &window)?.accounted, steps, json)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        ContextCommand::Plot {
            files,
            tokenizer,
            window,
            out,
        } => plot(&model(&tokenizer)?, &files, &window, &out),
        ContextCommand::Reward {
            files,
            tokenizer,
            window,
            beta,
            gamma,
            format_penalty,
            rate,
            write,
            json,
        } => {
            // `--beta`, `--gamma` and `--format-penalty` are `[reward]`'s
            // compression_weight, compression_clip and (negated) format_exit_penalty.
            let config = RewardConfig {
                compression_weight: beta,
                compression_clip: gamma,
                format_exit_penalty: -format_penalty,
                ..RewardConfig::default()
            };
            let model = model(&tokenizer)?;
            for loaded in load_all(&files)? {
                reward(&model, &loaded, &window, &config, rate, write, json)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn model(args: &TokenizerArgs) -> Result<ChatModel> {
    load_model(&args.tokenizer, args.chat_template.as_deref())
}

/// Measures `loaded` under its window; warns when the template hides the window.
fn measure<'a>(model: &'a ChatModel, loaded: &Loaded, args: &WindowArgs) -> Result<Measured<'a>> {
    let measured = Measured::of(model, loaded, args.window, args.seed)?;
    if measured.accounted.template_drops_reasoning {
        eprintln!(
            "warning: {}: the chat template of {} drops the reasoning of earlier turns, so \
             every window renders alike (Qwen3's drops it before the last user message); give \
             --chat-template FILE with a template that keeps it (docs/agile.md)",
            measured.name,
            model.dir().display()
        );
    }
    Ok(measured)
}

fn print_stats(tokens: &TrajectoryTokens, steps: bool, as_json: bool) -> Result<()> {
    if as_json {
        let mut row = serde_json::to_value(tokens)?;
        if !steps && let Some(row) = row.as_object_mut() {
            row.remove("steps");
        }
        println!("{row}");
        return Ok(());
    }
    let n = tokens.steps.len().max(1) as f64;
    let mean =
        |part: fn(&StepTokens) -> usize| tokens.steps.iter().map(part).sum::<usize>() as f64 / n;
    println!(
        "{}: {} steps, window {}; final context {} tokens ({} with all reasoning): \
         compression {:.4} (code), {:.4} (paper); per step: reasoning {:.1}, digest {:.1}, \
         action {:.1} tokens",
        tokens.id,
        tokens.steps.len(),
        tokens
            .window
            .map_or("all (interleaved)".to_owned(), |n| n.to_string()),
        tokens.final_window,
        tokens.final_full,
        tokens.compression_rate,
        tokens.paper_compression_rate,
        mean(|step| step.reasoning),
        mean(|step| step.digest),
        mean(|step| step.action),
    );
    if steps {
        println!(
            "  {:>5} {:>8} {:>8} {:>8} {:>9} {:>7} {:>7} {:>11}",
            "step", "sent", "window", "full", "reasoning", "digest", "action", "observation"
        );
        for step in &tokens.steps {
            let sent = step.sent.map_or("-".to_owned(), |sent| sent.to_string());
            println!(
                "  {:>5} {:>8} {:>8} {:>8} {:>9} {:>7} {:>7} {:>11}",
                step.step,
                sent,
                step.window,
                step.full,
                step.reasoning,
                step.digest,
                step.action,
                step.observation
            );
        }
    }
    Ok(())
}

/// One panel per trajectory: context tokens per step under each policy.
fn plot(model: &ChatModel, files: &[PathBuf], args: &WindowArgs, out: &Path) -> Result<ExitCode> {
    let mut panels = Vec::new();
    for loaded in load_all(files)? {
        let measured = measure(model, &loaded, args)?;
        panels.push(measured.panel()?);
    }
    let figure = svg(&panels);
    write_atomically(out, |file| file.write_all(figure.as_bytes()))
        .with_context(|| format!("cannot write {}", out.display()))?;
    println!("{} trajectories -> {}", panels.len(), out.display());
    Ok(ExitCode::SUCCESS)
}

fn reward(
    model: &ChatModel,
    loaded: &Loaded,
    args: &WindowArgs,
    config: &RewardConfig,
    rate: RateArg,
    write: bool,
    as_json: bool,
) -> Result<()> {
    let name = loaded.name();
    let trajectory = &loaded.trajectory;
    let Some(outcome) = &trajectory.outcome else {
        bail!("{name}: no outcome record: the run did not finish");
    };
    let Some(success) = resolved(outcome, &trajectory.header.instance_id) else {
        bail!(
            "{name}: the outcome has no reward and no eval_report saying `resolved`; grade it \
             first (swerve run --eval)"
        );
    };
    let measured = measure(model, loaded, args)?;
    let compression_rate = match rate {
        RateArg::Code => measured.accounted.compression_rate,
        RateArg::Paper => measured.accounted.paper_compression_rate,
    };
    let parts = compression_reward(success, compression_rate, outcome.exit_reason, config);
    let record = json!({
        "reward": parts.trajectory(),
        "last_step_reward": parts.last_step(),
        "resolved": parts.resolved,
        "compression_bonus": parts.compression_bonus,
        "format_penalty": parts.format_penalty,
        "compression_rate": compression_rate,
        "rate": match rate { RateArg::Code => "code", RateArg::Paper => "paper" },
        "window": window::turns(measured.window),
        "beta": config.compression_weight,
        "gamma": config.compression_clip,
    });
    if write {
        record_reward(&loaded.path, &trajectory.header.id, record.clone())?;
    }
    if as_json {
        let mut row = json!({"id": trajectory.header.id, "file": loaded.path});
        if let (Some(row), Value::Object(record)) = (row.as_object_mut(), record) {
            row.extend(record);
        }
        println!("{row}");
    } else {
        println!(
            "{}: reward {:.4} (last step {:.4}) = resolved {} + bonus {:.4} (compression {:.4}, {}){}",
            trajectory.header.id,
            parts.trajectory(),
            parts.last_step(),
            parts.resolved,
            parts.compression_bonus,
            compression_rate,
            exit_note(outcome.exit_reason.as_str(), parts.format_penalty),
            if write { "; recorded" } else { "" },
        );
    }
    Ok(())
}

/// How the run ended, with the penalty it got.
fn exit_note(exit_reason: &str, penalty: f64) -> String {
    if penalty == 0.0 {
        format!("exit {exit_reason}")
    } else {
        format!("exit {exit_reason}, last-step penalty {penalty}")
    }
}
