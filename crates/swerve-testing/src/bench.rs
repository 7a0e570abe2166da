//! Timing helpers for the benchmarks: repeated timing, percentiles and the Markdown table
//! `BENCHMARKS.md` records (each figure beside its anchor, measured in the same run).

use std::time::{Duration, Instant};

/// Durations of repeated runs.
pub struct Samples(Vec<Duration>);

impl Samples {
    /// One run.
    pub fn single(duration: Duration) -> Self {
        Self(vec![duration])
    }

    /// These runs.
    pub fn from(durations: Vec<Duration>) -> Self {
        Self(durations)
    }

    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        sorted[((sorted.len() - 1) as f64 * p).round() as usize]
    }

    /// The median, in milliseconds.
    pub fn p50_ms(&self) -> f64 {
        self.percentile(0.5).as_secs_f64() * 1000.0
    }

    /// The 95th percentile, in milliseconds.
    pub fn p95_ms(&self) -> f64 {
        self.percentile(0.95).as_secs_f64() * 1000.0
    }
}

/// The `p` quantile of `values` (`p` from 0 to 1, nearest rank); NaN when there are none.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The mean of `values`.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Times `n` runs of `body` after one untimed warm-up run.
pub fn time_n(n: usize, mut body: impl FnMut()) -> Samples {
    body();
    Samples(
        (0..n)
            .map(|_| {
                let started = Instant::now();
                body();
                started.elapsed()
            })
            .collect(),
    )
}

/// Rows of a Markdown table, plus free-form notes.
#[derive(Default)]
pub struct Report {
    rows: Vec<String>,
    notes: Vec<String>,
}

impl Report {
    /// One measured row; `versus` is the swerve figure this anchor is compared with.
    pub fn row(&mut self, what: &str, how: &str, samples: &Samples, versus: Option<&Samples>) {
        let ratio = versus
            .map(|ours| format!("{:.1}×", samples.p50_ms() / ours.p50_ms()))
            .unwrap_or_else(|| "—".into());
        self.rows.push(format!(
            "| {what} | {how} | {} | {:.3} | {:.3} | {ratio} |",
            samples.0.len(),
            samples.p50_ms(),
            samples.p95_ms()
        ));
    }

    /// A note printed under the table.
    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// Prints the table and the notes on stdout.
    #[allow(clippy::print_stdout)]
    pub fn print(&self) {
        println!("| benchmark | implementation | runs | p50 ms | p95 ms | anchor / swerve (p50) |");
        println!("|---|---|---|---|---|---|");
        for row in &self.rows {
            println!("{row}");
        }
        for note in &self.notes {
            println!("\n- {note}");
        }
    }
}
