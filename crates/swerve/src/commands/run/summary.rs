//! The end of a run: `summary.json` and `preds.jsonl` from every finished trajectory in the
//! run directory (earlier invocations' included), and the closing table on the console.
//! SWE-Edit's edit metrics are computed from the trajectories themselves.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::json;
use swerve_core::atomic::{write_atomically, write_json_atomically};
use swerve_core::trajectory::{ExitReason, Usage, read_trajectory};
use swerve_edit::{EditMetrics, EditSummary};
use swerve_train::stats::{RepeatedRates, Spread, render_rate, repeated_rates, spread};

use super::resources::ResourceUsage;
use crate::batch;
use swerve_rollout::rollout::Rollout;

/// A rollout of this invocation that could not run to its end.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub id: String,
    pub error: String,
    /// Its log file.
    pub log: String,
}

/// What `summary.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Rollouts the run asks for (tasks × samples).
    pub expected: usize,
    /// Rollouts with a finished trajectory.
    pub rollouts: usize,
    pub submitted: usize,
    /// Rollouts whose patch was graded (`--eval`), and how many of them resolved their task.
    pub evaluated: usize,
    pub resolved: usize,
    /// The resolve rate's spread, when rollouts were graded: per sample index (each of
    /// `--samples N` is one repeat over the tasks) with mean, std and SEM over the repeats,
    /// and over all graded rollouts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolve_rate: Option<ResolveRates>,
    pub exit_reasons: BTreeMap<&'static str, usize>,
    /// Steps over all finished rollouts.
    pub steps: usize,
    /// Tokens and cost of all model calls, the subagents' included (`edit` splits them).
    pub usage: Usage,
    pub cost: f64,
    /// Edit calls and how they ended, view calls, the viewer's share of file content, and
    /// the main agent's and the subagents' spend (`swerve_edit::metrics`).
    pub edit: EditSummary,
    /// Whether the price table knows the model (an unknown model is counted as free).
    pub cost_priced: bool,
    /// Seconds waiting for the model and running tools, summed over rollouts.
    pub model_seconds: f64,
    pub env_seconds: f64,
    /// Rollouts of this invocation that failed to run (they are retried by the next one).
    pub failed: Vec<Failure>,
    /// This invocation: rollouts and steps it ran, and what the swerve process used.
    pub process: Process,
}

/// The resolve rate of a run's graded rollouts, across samples and across rollouts.
#[derive(Debug, Clone, Serialize)]
pub struct ResolveRates {
    /// One repeat per sample index `k` (rollouts `<id>__k`).
    pub across_samples: RepeatedRates,
    /// Over every graded rollout (each 1 or 0).
    pub across_rollouts: Spread,
}

/// The resolve rates of `(sample, resolved)` grades; `None` without any.
pub fn resolve_rates(grades: &[(usize, bool)]) -> Option<ResolveRates> {
    let outcomes: Vec<f64> = grades
        .iter()
        .map(|&(_, resolved)| f64::from(u8::from(resolved)))
        .collect();
    Some(ResolveRates {
        across_rollouts: spread(&outcomes)?,
        across_samples: repeated_rates(grades.iter().copied()),
    })
}

/// This invocation's share of the run.
#[derive(Debug, Clone, Serialize)]
pub struct Process {
    pub rollouts_run: usize,
    pub steps_run: usize,
    pub wall_seconds: f64,
    #[serde(flatten)]
    pub resources: ResourceUsage,
}

/// Reads every rollout's trajectory, writes `preds.jsonl` (sample 0 of each task, as SWE-bench
/// predictions named after `model`) and returns the summary.
pub fn summarize(
    out: &Path,
    rollouts: &[Rollout],
    ran: &BTreeSet<String>,
    model: &str,
    cost_priced: bool,
    failed: Vec<Failure>,
    wall_seconds: f64,
) -> Result<Summary> {
    let mut summary = Summary {
        expected: rollouts.len(),
        rollouts: 0,
        submitted: 0,
        evaluated: 0,
        resolved: 0,
        resolve_rate: None,
        exit_reasons: BTreeMap::new(),
        steps: 0,
        usage: Usage::default(),
        cost: 0.0,
        edit: EditSummary::default(),
        cost_priced,
        model_seconds: 0.0,
        env_seconds: 0.0,
        failed,
        process: Process {
            rollouts_run: ran.len(),
            steps_run: 0,
            wall_seconds,
            resources: ResourceUsage::of_this_process(),
        },
    };
    let mut predictions = String::new();
    let mut edit_metrics = Vec::new();
    let mut grades = Vec::new();
    for rollout in rollouts {
        let Ok(read) = read_trajectory(&rollout.path) else {
            continue;
        };
        let Some(outcome) = &read.trajectory.outcome else {
            continue;
        };
        let steps = read.trajectory.steps.len();
        edit_metrics.push(EditMetrics::of(&read.trajectory));
        summary.rollouts += 1;
        summary.steps += steps;
        if ran.contains(&rollout.id()) {
            summary.process.steps_run += steps;
        }
        *summary
            .exit_reasons
            .entry(outcome.exit_reason.as_str())
            .or_default() += 1;
        summary.submitted += usize::from(outcome.exit_reason == ExitReason::Submitted);
        summary.cost += outcome.cost.unwrap_or(0.0);
        if let Some(reward) = outcome.reward {
            summary.evaluated += 1;
            summary.resolved += usize::from(reward >= 1.0);
            grades.push((rollout.sample, reward >= 1.0));
        }
        if let Some(usage) = outcome.usage {
            summary.usage += usage;
        }
        summary.model_seconds += outcome.timings.model_seconds.unwrap_or(0.0);
        summary.env_seconds += outcome.timings.env_seconds.unwrap_or(0.0);
        if rollout.sample == 0 {
            let prediction = json!({
                "instance_id": rollout.task.instance_id,
                "model_name_or_path": model,
                "model_patch": outcome.patch,
            });
            predictions.push_str(&format!("{prediction}\n"));
        }
    }
    summary.edit = EditSummary::of(&edit_metrics);
    summary.resolve_rate = resolve_rates(&grades);
    let path = out.join("preds.jsonl");
    write_atomically(&path, |file| file.write_all(predictions.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    let path = out.join("summary.json");
    write_json_atomically(&path, &summary)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(summary)
}

/// The edit metrics' lines of the closing table: edits and how they ended, views and the
/// viewer's share, when there were any; main agent and subagents apart, when subagents ran.
fn render_edit(edit: &EditSummary, priced: bool) -> String {
    let mut text = String::new();
    let totals = &edit.totals;
    let percent =
        |rate: Option<f64>| rate.map_or("-".to_owned(), |rate| format!("{:.1}%", rate * 100.0));
    if totals.edits.calls > 0 || totals.view_calls > 0 {
        let _ = writeln!(
            text,
            "edits {} ({} succeeded; {} format errors, {} match failures, {} other) · per \
             rollout {:.2} edit and {:.2} view calls · viewer showed {} of file lines",
            totals.edits.calls,
            percent(edit.edit_success_rate),
            totals.edits.format_errors,
            totals.edits.match_failures,
            totals.edits.other_failures,
            edit.edit_calls_per_trajectory,
            edit.view_calls_per_trajectory,
            percent(edit.viewer_content_share),
        );
    }
    if edit.subagents.calls > 0 {
        let _ = writeln!(
            text,
            "main agent: {}\nsubagents: {} viewer and {} editor calls · {}",
            batch::spend(&totals.main.usage, totals.main.cost, priced),
            totals.viewer.calls,
            totals.editor.calls,
            batch::spend(&edit.subagents.usage, edit.subagents.cost, true),
        );
    }
    text
}

/// The closing table: exit reasons, totals, time, failures and where the outputs are.
pub fn render(summary: &Summary, out: &Path) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{:<16} {:>8}", "exit reason", "rollouts");
    for (reason, count) in &summary.exit_reasons {
        let _ = writeln!(text, "{reason:<16} {count:>8}");
    }
    let per_rollout = summary.steps as f64 / summary.rollouts.max(1) as f64;
    let unfinished = summary.expected - summary.rollouts;
    let _ = writeln!(
        text,
        "\n{} of {} rollouts finished ({} this time), {} submitted{}{}",
        summary.rollouts,
        summary.expected,
        summary.process.rollouts_run,
        summary.submitted,
        if summary.evaluated > 0 {
            format!(
                ", {} of {} graded resolved",
                summary.resolved, summary.evaluated
            )
        } else {
            String::new()
        },
        if unfinished > 0 {
            format!(", {unfinished} unfinished (run the command again to retry them)")
        } else {
            String::new()
        }
    );
    if let Some(rates) = &summary.resolve_rate {
        let samples = &rates.across_samples;
        let per_sample: Vec<String> = samples
            .repeats
            .iter()
            .map(|repeat| format!("{:.1}%", repeat.rate * 100.0))
            .collect();
        let _ = writeln!(
            text,
            "resolve rate: {}{}",
            samples
                .spread
                .as_ref()
                .map_or_else(String::new, render_rate),
            if per_sample.len() > 1 {
                format!(" across samples [{}]", per_sample.join(", "))
            } else {
                String::new()
            }
        );
        if let (Some(sem), n) = (rates.across_rollouts.sem, rates.across_rollouts.n) {
            let _ = writeln!(
                text,
                "  over all {n} graded rollouts: {:.1}% ± {:.1} (SEM)",
                rates.across_rollouts.mean * 100.0,
                sem * 100.0
            );
        }
    }
    let _ = writeln!(
        text,
        "steps {} ({per_rollout:.1} per rollout) · {}",
        summary.steps,
        batch::spend(&summary.usage, summary.cost, summary.cost_priced)
    );
    text.push_str(&render_edit(&summary.edit, summary.cost_priced));
    let _ = writeln!(
        text,
        "time: {:.1} s wall · {:.1} s model · {:.1} s tools (summed over rollouts)",
        summary.process.wall_seconds, summary.model_seconds, summary.env_seconds
    );
    let failures: Vec<String> = summary
        .failed
        .iter()
        .map(|failure| {
            format!(
                "FAILED {}: {} (log: {})",
                failure.id,
                failure.error.lines().next().unwrap_or(""),
                failure.log
            )
        })
        .collect();
    text.push_str(&batch::first_ten(&failures, "failures"));
    let _ = writeln!(
        text,
        "predictions: {} · trajectories: {} · logs: {}",
        out.join("preds.jsonl").display(),
        out.join("trajectories").display(),
        out.join("logs").display()
    );
    text
}
