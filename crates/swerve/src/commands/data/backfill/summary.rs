//! The end of a backfill: `summary.json` from every result in the output directory
//! (earlier invocations' included) and the closing lines on the console: trajectories
//! done, rejected with their reasons, failed, and what the teacher took.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, anyhow};
use serde::Serialize;
use swerve_agent::backfill::Spent;

use super::{Job, State, write_json};
use crate::batch;

/// A trajectory of this invocation that could not be backfilled (it is retried by the next).
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub id: String,
    pub error: String,
}

/// A rejected trajectory.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    pub id: String,
    pub source: String,
    pub reason: String,
}

/// This invocation's share.
#[derive(Debug, Clone, Serialize)]
pub struct Invocation {
    pub trajectories_run: usize,
    /// Every teacher call of this invocation, those of failed trajectories included.
    pub teacher: Spent,
    pub wall_seconds: f64,
}

/// What `summary.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Trajectories in the input files.
    pub trajectories: usize,
    /// Backfilled, and their steps.
    pub done: usize,
    pub steps: usize,
    pub rejected: Vec<Rejected>,
    /// What the teacher took for the trajectories done or rejected.
    pub teacher: Spent,
    /// Whether the price table knows the teacher (an unknown model is counted as free).
    pub cost_priced: bool,
    pub failed: Vec<Failure>,
    pub this_invocation: Invocation,
}

/// Reads every job's result in `out`, writes `summary.json` and returns the summary.
pub fn summarize(
    out: &Path,
    jobs: &[Job],
    invocation: Invocation,
    cost_priced: bool,
    failed: Vec<Failure>,
) -> Result<Summary> {
    let mut summary = Summary {
        trajectories: jobs.len(),
        done: 0,
        steps: 0,
        rejected: Vec::new(),
        teacher: Spent::default(),
        cost_priced,
        failed,
        this_invocation: invocation,
    };
    for job in jobs {
        match job.state() {
            State::Done { steps, spent } => {
                summary.done += 1;
                summary.steps += steps;
                summary.teacher.absorb(spent);
            }
            State::Rejected(rejection) => {
                summary.teacher.absorb(rejection.spent);
                summary.rejected.push(Rejected {
                    id: job.name.clone(),
                    source: rejection.source.display().to_string(),
                    reason: rejection.reason,
                });
            }
            State::Open => {}
        }
    }
    write_json(&out.join("summary.json"), &summary).map_err(|error| anyhow!(error))?;
    Ok(summary)
}

/// The closing lines: counts, the teacher's tokens and cost, rejections and failures (the
/// first ten of each), and where the outputs are.
pub fn render(summary: &Summary, out: &Path) -> String {
    let mut text = String::new();
    let unfinished = summary.trajectories - summary.done - summary.rejected.len();
    let _ = writeln!(
        text,
        "{} of {} trajectories backfilled ({} run this time), {} rejected{}",
        summary.done,
        summary.trajectories,
        summary.this_invocation.trajectories_run,
        summary.rejected.len(),
        if unfinished > 0 {
            format!(", {unfinished} unfinished (run the command again to retry them)")
        } else {
            String::new()
        }
    );
    let teacher = &summary.teacher;
    let now = &summary.this_invocation.teacher;
    let _ = writeln!(
        text,
        "steps {} · teacher {} calls · {} (this time: {} calls, ${:.4}, {:.1} s)",
        summary.steps,
        teacher.calls,
        batch::spend(&teacher.usage, teacher.cost, summary.cost_priced),
        now.calls,
        now.cost,
        summary.this_invocation.wall_seconds
    );
    let line = |label: &str, id: &str, why: &str| {
        format!("{label} {id}: {}", why.lines().next().unwrap_or(""))
    };
    let rejected: Vec<String> = summary
        .rejected
        .iter()
        .map(|rejected| line("REJECTED", &rejected.id, &rejected.reason))
        .collect();
    text.push_str(&batch::first_ten(&rejected, "rejections"));
    let failed: Vec<String> = summary
        .failed
        .iter()
        .map(|failure| line("FAILED", &failure.id, &failure.error))
        .collect();
    text.push_str(&batch::first_ten(&failed, "failures"));
    let _ = writeln!(
        text,
        "trajectories: {} · rejected: {} · summary: {}",
        out.join("trajectories").display(),
        out.join("rejected").display(),
        out.join("summary.json").display()
    );
    text
}
