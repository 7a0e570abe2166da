//! Batches of independent jobs (`swerve run`'s rollouts, `swerve data backfill`'s and
//! `swerve replay`'s trajectories): [`run_shown`] runs them a given number at a time
//! (`swerve_rollout::batch::run`) and shows them as they go ([`Progress`]): on a terminal,
//! a progress bar with the ETA and running counts (running, the command's own counts, cost)
//! and a line per finished job above it; elsewhere (CI logs, files), just the lines. [`spend`] and [`first_ten`] word
//! a closing summary's tokens and cost and its failures, and [`exit_code`] ends the command.

use std::future::Future;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use swerve_core::trajectory::Usage;
use swerve_rollout::batch;

/// How a job ended, as the display shows it.
#[derive(Debug, Clone)]
pub struct Ended {
    /// What follows the job's id on its line.
    pub line: String,
    /// The count it adds to: an index into the names given to [`Progress::new`].
    pub count: Option<usize>,
    /// What it cost.
    pub cost: f64,
}

impl Ended {
    /// A job stopped by `error`, adding to count `count`.
    pub fn failed(error: &str, count: usize) -> Self {
        Self {
            line: format!("FAILED       {}", error.lines().next().unwrap_or("")),
            count: Some(count),
            cost: 0.0,
        }
    }
}

/// Counts of the jobs run so far.
#[derive(Debug, Default, Clone)]
struct Counts {
    running: usize,
    done: usize,
    named: Vec<usize>,
    cost: f64,
}

/// The progress display of one batch.
struct Progress {
    bar: ProgressBar,
    names: &'static [&'static str],
    counts: Mutex<Counts>,
    started: Instant,
    total: usize,
}

impl Progress {
    /// A display for `total` jobs with counts called `names`, drawn on stderr when it is a
    /// terminal.
    fn new(total: usize, names: &'static [&'static str]) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} · {msg} · ETA {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        let counts = Counts {
            named: vec![0; names.len()],
            ..Counts::default()
        };
        let progress = Self {
            bar,
            names,
            started: Instant::now(),
            total,
            counts: Mutex::new(counts.clone()),
        };
        progress.redraw(&counts);
        progress
    }

    /// A job started.
    fn started(&self) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.running += 1;
        self.redraw(&counts);
    }

    /// The job `id` ended as `ended` says.
    fn finished(&self, id: &str, ended: Ended) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.running -= 1;
        counts.done += 1;
        counts.cost += ended.cost;
        if let Some(count) = ended.count.and_then(|index| counts.named.get_mut(index)) {
            *count += 1;
        }
        let line = format!(
            "[{}/{}] {id:<44} {} {:.1} s",
            counts.done,
            self.total,
            ended.line,
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
    fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn redraw(&self, counts: &Counts) {
        let mut message = format!("running {}", counts.running);
        for (name, count) in self.names.iter().zip(&counts.named) {
            message.push_str(&format!(" · {name} {count}"));
        }
        message.push_str(&format!(" · ${:.2}", counts.cost));
        self.bar.set_message(message);
    }
}

/// Runs `job` on each of `items` (each with the name its line shows) on a new tokio
/// runtime, at most `concurrency` at once, on a progress display with the counts `names`;
/// `ended` says how a job's result is shown. Returns the results in the items' order.
pub fn run_shown<T, R, F, Fut>(
    items: Vec<(String, T)>,
    concurrency: usize,
    names: &'static [&'static str],
    job: F,
    ended: fn(&Result<R, String>) -> Ended,
) -> std::io::Result<Vec<Result<R, String>>>
where
    F: Fn(T) -> Fut,
    Fut: Future<Output = Result<R, String>> + Send + 'static,
    R: Send + 'static,
{
    let shown = Arc::new(Shown {
        progress: Progress::new(items.len(), names),
        ended,
    });
    let results = batch::run(items, concurrency, job, shown.clone())?;
    shown.progress.finish();
    Ok(results)
}

/// The progress display with how it shows a job's result.
struct Shown<R> {
    progress: Progress,
    ended: fn(&Result<R, String>) -> Ended,
}

impl<R: 'static> batch::Observer<R> for Shown<R> {
    fn started(&self, _name: &str) {
        self.progress.started();
    }

    fn finished(&self, name: &str, result: &Result<R, String>) {
        self.progress.finished(name, (self.ended)(result));
    }
}

/// Tokens and cost as a closing summary gives them: `tokens I in (C cached) / O out · cost
/// $X`, saying so when the price table does not know the model.
pub fn spend(usage: &Usage, cost: f64, priced: bool) -> String {
    format!(
        "tokens {} in ({} cached) / {} out · cost ${cost:.4}{}",
        usage.prompt_tokens,
        usage.cached_tokens,
        usage.completion_tokens,
        if priced {
            ""
        } else {
            " (no price for this model)"
        }
    )
}

/// The first ten of `lines` (one per rollout or trajectory that failed, was rejected, …),
/// then how many more `plural` `summary.json` lists.
pub fn first_ten(lines: &[String], plural: &str) -> String {
    let mut text: String = lines
        .iter()
        .take(10)
        .map(|line| format!("{line}\n"))
        .collect();
    if lines.len() > 10 {
        text.push_str(&format!(
            "… and {} more {plural} (summary.json lists them)\n",
            lines.len() - 10
        ));
    }
    text
}

/// How a batch exits: with status 1 when some jobs failed (the next run retries them).
pub fn exit_code(failures: usize) -> ExitCode {
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
