//! The end of a run: `summary.json` and `preds.jsonl` from every finished trajectory in the
//! run directory (earlier invocations' included). SWE-Edit's edit metrics are computed from
//! the trajectories themselves. Front ends render the [`Summary`] as they like.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::json;
use swerve_core::atomic::{write_atomically, write_json_atomically};
use swerve_core::trajectory::{ExitReason, Usage, read_trajectory};
use swerve_edit::{EditMetrics, EditSummary};
use swerve_train::stats::{RepeatedRates, Spread, repeated_rates, spread};

use crate::resources::ResourceUsage;
use crate::rollout::Rollout;

/// A rollout of this invocation that could not run to its end.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// The rollout's id (`<instance_id>__<sample>`).
    pub id: String,
    /// Why it stopped.
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
    /// Finished rollouts that submitted.
    pub submitted: usize,
    /// Rollouts whose patch was graded (`--eval`), and how many of them resolved their task.
    pub evaluated: usize,
    /// Graded rollouts that resolved their task.
    pub resolved: usize,
    /// The resolve rate's spread, when rollouts were graded: per sample index (each of
    /// `--samples N` is one repeat over the tasks) with mean, std and SEM over the repeats,
    /// and over all graded rollouts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolve_rate: Option<ResolveRates>,
    /// Finished rollouts per exit reason.
    pub exit_reasons: BTreeMap<&'static str, usize>,
    /// Steps over all finished rollouts.
    pub steps: usize,
    /// Tokens and cost of all model calls, the subagents' included (`edit` splits them).
    pub usage: Usage,
    /// The cost of all model calls, in dollars.
    pub cost: f64,
    /// Edit calls and how they ended, view calls, the viewer's share of file content, and
    /// the main agent's and the subagents' spend (`swerve_edit::metrics`).
    pub edit: EditSummary,
    /// Whether the price table knows the model (an unknown model is counted as free).
    pub cost_priced: bool,
    /// Seconds waiting for the model, summed over rollouts.
    pub model_seconds: f64,
    /// Seconds running tools in the environments, summed over rollouts.
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
    /// Rollouts this invocation ran (finished or not).
    pub rollouts_run: usize,
    /// Steps of the finished rollouts this invocation ran.
    pub steps_run: usize,
    /// Seconds this invocation took.
    pub wall_seconds: f64,
    /// CPU and memory this process used.
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
