//! What a run shows while it goes: on a terminal, a progress bar with the ETA and running
//! counts (running, submitted, errors, cost) and a line per finished rollout above it;
//! elsewhere (CI logs, files), just the lines.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use swerve_core::trajectory::{ExitReason, Outcome};

/// Counts of the rollouts run so far.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    running: usize,
    done: usize,
    submitted: usize,
    errors: usize,
    cost: f64,
}

/// The progress display of one run.
pub struct Progress {
    bar: ProgressBar,
    counts: Mutex<Counts>,
    started: Instant,
    total: usize,
}

impl Progress {
    /// A display for `total` rollouts, drawn on stderr when it is a terminal.
    pub fn new(total: usize) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} · {msg} · ETA {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        let progress = Self {
            bar,
            counts: Mutex::new(Counts::default()),
            started: Instant::now(),
            total,
        };
        progress.redraw(&Counts::default());
        progress
    }

    /// A rollout started.
    pub fn started(&self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.running += 1;
        self.redraw(&counts);
    }

    /// A rollout ended with `result` (an outcome, or the error that stopped it).
    pub fn finished(&self, id: &str, result: &Result<Outcome, String>) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.running -= 1;
        counts.done += 1;
        let line = match result {
            Ok(outcome) => {
                counts.cost += outcome.cost.unwrap_or(0.0);
                match outcome.exit_reason {
                    ExitReason::Submitted => counts.submitted += 1,
                    ExitReason::ModelError | ExitReason::EnvError | ExitReason::Error => {
                        counts.errors += 1
                    }
                    _ => {}
                }
                let grade = match outcome.reward {
                    Some(reward) if reward >= 1.0 => " resolved",
                    Some(_) => " unresolved",
                    None => "",
                };
                format!("{:<12}{grade}", outcome.exit_reason.as_str())
            }
            Err(error) => {
                counts.errors += 1;
                format!("FAILED       {}", error.lines().next().unwrap_or(""))
            }
        };
        let line = format!(
            "[{}/{}] {id:<44} {line} {:.1} s",
            counts.done,
            self.total,
            self.started.elapsed().as_secs_f64()
        );
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
        self.bar.inc(1);
        self.redraw(&counts);
    }

    /// Removes the bar (the closing summary follows).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn redraw(&self, counts: &Counts) {
        self.bar.set_message(format!(
            "running {} · submitted {} · errors {} · ${:.2}",
            counts.running, counts.submitted, counts.errors, counts.cost
        ));
    }
}
