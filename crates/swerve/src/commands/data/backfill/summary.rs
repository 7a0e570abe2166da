//! The end of a backfill on the console: trajectories done, rejected with their reasons,
//! failed, and what the teacher took (from `swerve_rollout::backfill::Summary`).

use std::fmt::Write as _;
use std::path::Path;

use swerve_rollout::backfill::Summary;

use crate::batch;

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
