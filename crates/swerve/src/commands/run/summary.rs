//! The closing table of `swerve run` on the console, from the summary
//! (`swerve_rollout::summary`) the run wrote to `summary.json`.

use std::fmt::Write as _;
use std::path::Path;

use swerve_edit::EditSummary;
use swerve_rollout::summary::Summary;
use swerve_train::stats::render_rate;

use crate::batch;

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
