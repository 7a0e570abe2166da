//! `swerve traj convert` (other agents' trajectories → swerve's format) and `swerve traj show`
//! (a step-by-step rendering a person can follow in a terminal).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use swerve_core::trajectory::import::detect_and_import;
use swerve_core::trajectory::{Trajectory, write_trajectory};

use crate::cli::TrajCommand;

pub fn run(command: TrajCommand) -> Result<ExitCode> {
    match command {
        TrajCommand::Convert { file, out } => convert(&file, &out),
        TrajCommand::Show { file, width } => {
            for trajectory in detect_and_import(&file)? {
                print!("{}", render(&trajectory, width));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Writes one swerve trajectory file per trajectory in `file`: `out` itself for one, or
/// `out/<id>.jsonl` for several (an R2E-Gym or OpenHands file holds many).
fn convert(file: &Path, out: &Path) -> Result<ExitCode> {
    let trajectories = detect_and_import(file)?;
    match trajectories.as_slice() {
        [] => bail!("{}: no trajectory found", file.display()),
        [one] => {
            if let Some(parent) = out.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
            write_trajectory(out, one).map_err(|error| anyhow::anyhow!("{error}"))?;
            println!(
                "{}: 1 trajectory, {} steps -> {}",
                file.display(),
                one.steps.len(),
                out.display()
            );
        }
        many => {
            std::fs::create_dir_all(out)
                .with_context(|| format!("cannot create {}", out.display()))?;
            for trajectory in many {
                let name = format!("{}.jsonl", trajectory.header.id.replace('/', "_"));
                write_trajectory(out.join(&name), trajectory)
                    .map_err(|error| anyhow::anyhow!("{error}"))?;
            }
            println!(
                "{}: {} trajectories -> {}/",
                file.display(),
                many.len(),
                out.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The trajectory as text: header, then per step the reasoning, the call or format error,
/// and the observation (each cut to `width` lines), then the outcome.
pub fn render(trajectory: &Trajectory, width: usize) -> String {
    let header = &trajectory.header;
    let mut text = format!("═══ {} ({}) ═══\n", header.instance_id, header.id);
    for step in &trajectory.steps {
        text.push_str(&format!("\n── step {} ", step.index + 1));
        if let Some(usage) = &step.usage {
            text.push_str(&format!(
                "· {} + {} tokens ",
                usage.prompt_tokens, usage.completion_tokens
            ));
        }
        if let Some(seconds) = step.timings.model_seconds {
            text.push_str(&format!("· model {seconds:.2} s "));
        }
        if let Some(seconds) = step.timings.env_seconds {
            text.push_str(&format!("· tools {seconds:.2} s "));
        }
        text.push_str("──\n");
        if let Some(reasoning) = step
            .reasoning
            .as_deref()
            .filter(|text| !text.trim().is_empty())
        {
            text.push_str(&section("reasoning", reasoning, width));
        }
        match (&step.tool_call, &step.format_error) {
            (Some(call), _) => {
                let arguments: Vec<String> = call
                    .arguments
                    .iter()
                    .map(|(key, value)| format!("{key}={}", short(value, 80)))
                    .collect();
                text.push_str(&format!("▶ {}({})\n", call.name, arguments.join(", ")));
            }
            (None, Some(error)) => text.push_str(&section("format error", error, width)),
            (None, None) => text.push_str(&section("response", &step.response_text, width)),
        }
        if let Some(observation) = &step.observation {
            text.push_str(&section("observation", observation, width));
        }
        if let Some(error) = &step.error {
            text.push_str(&section("error", error, width));
        }
    }
    match &trajectory.outcome {
        Some(outcome) => {
            text.push_str(&format!(
                "\n═══ {} after {} steps",
                outcome.exit_reason.as_str(),
                trajectory.steps.len()
            ));
            if let Some(cost) = outcome.cost {
                text.push_str(&format!(" · cost {cost:.4}"));
            }
            text.push_str(" ═══\n");
            if let Some(detail) = &outcome.exit_detail {
                text.push_str(&format!("{detail}\n"));
            }
            text.push_str(&section("patch", &outcome.patch, width.max(40)));
        }
        None => text.push_str("\n═══ unfinished (no outcome recorded) ═══\n"),
    }
    text
}

/// `text` under a label, indented, cut to `lines` lines with a count of the rest.
fn section(label: &str, text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    let mut out = format!("  {label}:\n");
    for line in all.iter().take(lines) {
        out.push_str(&format!("    {line}\n"));
    }
    if all.len() > lines {
        out.push_str(&format!("    … {} more lines\n", all.len() - lines));
    }
    out
}

/// A JSON value on one line, cut to `limit` characters.
fn short(value: &serde_json::Value, limit: usize) -> String {
    let text = match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let flat = text.replace('\n', "⏎");
    if flat.chars().count() > limit {
        format!("{}…", flat.chars().take(limit).collect::<String>())
    } else {
        flat
    }
}
