//! Timing helpers shared by the benchmarks: repeated timing, percentiles, a Markdown report.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs a shell command on the host in `dir`, panicking on failure; returns trimmed stdout.
/// Its git trusts every directory: as root, bases belong to the sandboxes' (unprivileged) root.
pub fn sh(dir: &Path, command: &str) -> String {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "safe.directory")
        .env("GIT_CONFIG_VALUE_0", "*")
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Durations of repeated runs.
pub struct Samples(Vec<Duration>);

impl Samples {
    pub fn single(duration: Duration) -> Self {
        Self(vec![duration])
    }

    pub fn from(durations: Vec<Duration>) -> Self {
        Self(durations)
    }

    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        sorted[((sorted.len() - 1) as f64 * p).round() as usize]
    }

    pub fn p50_ms(&self) -> f64 {
        self.percentile(0.5).as_secs_f64() * 1000.0
    }

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

    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }

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

/// A loopback chat-completions server (HTTP/1.1 keep-alive, `Content-Length` bodies) that
/// answers each request body with the assistant text `answer` returns; its base URL (with
/// `/v1`). It stops with the process.
pub fn chat_server(
    answer: impl Fn(&serde_json::Value) -> String + Send + Sync + 'static,
) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = answer.clone();
            std::thread::spawn(move || {
                stream.set_nodelay(true).unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let request = serde_json::from_slice(&body).unwrap_or_default();
                    let reply = serde_json::json!({
                        "id": "bench", "object": "chat.completion", "model": "bench",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": answer(&request)}}],
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
                    })
                    .to_string();
                    let sent = write!(
                        writer,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
                        reply.len()
                    );
                    if sent.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}
