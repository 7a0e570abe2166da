//! Snapshot export throughput: `swerve data snapshots` over 100 synthetic SWE-AGILE
//! trajectories × 50 steps (sizes of real runs: a 1,500-token system prompt, reasoning of
//! 50 to 1,500 tokens, digests of 30 to 60, XML calls, observations of 100 to 1,500; the
//! last context is about 26,000 tokens), written with Qwen3's tokenizer and template.
//!
//! The export runs as the real binary (release) in a child process: wall time, tokens
//! written per second, and its peak resident memory (`VmHWM`, sampled). Anchors,
//! measured in this process over exactly the same samples: tokenizing each sample's
//! rendered text with the same tokenizer (the least any token export must do), and
//! rendering each sample with the chat template alone. The output grows as T²: every step
//! repeats its whole context.
//!
//! Run with `cargo bench -p swerve-cli --bench snapshots`; `SWERVE_BENCH_QUICK=1` exports 20
//! trajectories instead of 100. Prints a Markdown table for `BENCHMARKS.md`.

#[path = "../../swerve-chat/tests/chat/common/mod.rs"]
mod tokenizers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use swerve_agent::agile::{ContextPolicy, SendReasoning, Window};
use swerve_core::ToolCall;
use swerve_core::trajectory::turn::content;
use swerve_core::trajectory::{
    ExitReason, Header, Message, MessagesSent, Outcome, Step, Trajectory, write_trajectory,
};
use swerve_testing::bench::{Report, Samples};
use swerve_train::agile::snapshots::{Sample, samples};
use swerve_train::agile::tokens::Tokens;

/// Steps per trajectory.
const STEPS: usize = 50;
/// The window the runs used and the export keeps (`agile` preset).
const WINDOW: usize = 1;

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let (count, rounds) = if quick { (20, 2) } else { (100, 3) };
    let scratch = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..count)
        .map(|k| {
            let path = scratch.path().join(format!("synthetic__{k}.jsonl"));
            write_trajectory(&path, &trajectory(k)).unwrap();
            path
        })
        .collect();
    let qwen = tokenizers::model_dir("qwen3");
    let model = tokenizers::model("qwen3");
    let tokens_out = scratch.path().join("tokens.jsonl");
    let messages_out = scratch.path().join("messages.jsonl");
    // Rounds alternate the export and its anchors, in turn first, so that load on the
    // machine falls on both alike.
    let (mut exports, mut encodes, mut renders, mut messages) = (vec![], vec![], vec![], vec![]);
    let (mut peak, mut messages_peak, mut text_bytes) = (0, 0, 0);
    let (mut written, mut longest) = (0, 0);
    for round in 0..rounds {
        // Odd rounds run the anchors first.
        let early = (round % 2 == 1).then(|| anchors(&files, model));
        let export = export(&files, &qwen, "tokens", &tokens_out);
        (written, longest) = written_tokens(&tokens_out);
        let anchor = early.unwrap_or_else(|| anchors(&files, model));
        assert_eq!(
            anchor.tokens, written,
            "the anchor tokenizes the same samples"
        );
        let plain = export_messages(&files, &messages_out);
        exports.push(export.wall);
        peak = peak.max(export.peak_rss_kib);
        encodes.push(anchor.encode);
        renders.push(anchor.render);
        text_bytes = anchor.bytes;
        messages.push(plain.wall);
        messages_peak = messages_peak.max(plain.peak_rss_kib);
    }
    let (exports, encodes, renders, messages) = (
        Samples::from(exports),
        Samples::from(encodes),
        Samples::from(renders),
        Samples::from(messages),
    );
    let mut report = Report::default();
    let what = format!("{count} trajectories × {STEPS} steps, tokens rows");
    let how = "swerve data snapshots --format tokens (release binary)";
    report.row(&what, how, &exports, None);
    let how = "tokenizer.encode of each sample's rendered text (anchor)";
    report.row(&what, how, &encodes, Some(&exports));
    let how = "chat-template rendering of each sample (anchor)";
    report.row(&what, how, &renders, Some(&exports));
    let what = format!("{count} trajectories × {STEPS} steps, messages rows");
    let how = "swerve data snapshots --format messages (release binary)";
    report.row(&what, how, &messages, None);
    let per_second = |ms: f64| written as f64 / ms * 1000.0 / 1e6;
    report.note(format!(
        "tokens rows: {} samples, {written} tokens (the longest {longest}; {:.1} MB of \
         rendered text, {:.1} MB written): **{:.2} M tokens/s** (p50), against {:.2} M tokens/s for encoding alone \
         and {:.1} M tokens/s for rendering alone; peak RSS of the export {:.1} MiB",
        count * STEPS,
        text_bytes as f64 / 1e6,
        file_mb(&tokens_out),
        per_second(exports.p50_ms()),
        per_second(encodes.p50_ms()),
        per_second(renders.p50_ms()),
        peak as f64 / 1024.0,
    ));
    report.note(format!(
        "messages rows: {:.1} MB written, {:.1} MB/s (p50); peak RSS {:.1} MiB",
        file_mb(&messages_out),
        file_mb(&messages_out) / messages.p50_ms() * 1000.0,
        messages_peak as f64 / 1024.0,
    ));
    report.print();
}

/// A finished child process: wall time and peak resident memory.
struct Measured {
    wall: Duration,
    peak_rss_kib: u64,
}

fn export(files: &[PathBuf], tokenizer: &Path, format: &str, out: &Path) -> Measured {
    let mut args = vec!["--tokenizer".to_owned(), tokenizer.display().to_string()];
    args.extend(["--format".to_owned(), format.to_owned()]);
    run_export(files, &args, out)
}

fn export_messages(files: &[PathBuf], out: &Path) -> Measured {
    run_export(files, &[], out)
}

/// Runs `swerve data snapshots FILES --window 1 ARGS --out OUT` and waits for it, reading
/// its peak resident memory (`VmHWM`) every 5 ms: `wait4`'s `ru_maxrss` would count this
/// process's own peak, which a child inherits until its `exec`.
fn run_export(files: &[PathBuf], args: &[String], out: &Path) -> Measured {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_swerve"))
        .args(["data", "snapshots"])
        .args(files)
        .args(["--window", &WINDOW.to_string(), "--out"])
        .arg(out)
        .args(args)
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_rss_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some(hwm) = high_water_mark(&status_file) {
            peak_rss_kib = peak_rss_kib.max(hwm);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let wall = started.elapsed();
    assert!(status.success(), "the export failed");
    Measured { wall, peak_rss_kib }
}

/// `VmHWM` of a process's status file, in KiB, while it has one.
fn high_water_mark(status_file: &str) -> Option<u64> {
    let status = std::fs::read_to_string(status_file).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The number of tokens in a file of token rows, and of its longest row.
fn written_tokens(path: &Path) -> (usize, usize) {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            row["input_ids"].as_array().unwrap().len()
        })
        .fold((0, 0), |(sum, longest), length| {
            (sum + length, longest.max(length))
        })
}

fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).unwrap().len() as f64 / 1e6
}

/// The anchors over the samples the export writes.
struct Anchor {
    /// Time spent encoding each sample's rendered text.
    encode: Duration,
    /// Time spent rendering each sample with the chat template.
    render: Duration,
    /// Tokens encoded.
    tokens: usize,
    /// Bytes of rendered text.
    bytes: usize,
}

/// Times rendering the same samples the export writes and tokenizing their text, one
/// trajectory at a time.
fn anchors(files: &[PathBuf], model: &swerve_chat::ChatModel) -> Anchor {
    let (mut encode, mut render) = (Duration::ZERO, Duration::ZERO);
    let (mut tokens, mut bytes) = (0, 0);
    for path in files {
        let trajectory = swerve_core::trajectory::import::detect_and_import(path)
            .unwrap()
            .remove(0);
        let counter = Tokens::new(model, &trajectory.header).unwrap();
        let conversation = trajectory.conversation().unwrap();
        let all: Vec<Sample> = samples(&trajectory, &conversation, Window::Last(WINDOW)).collect();
        let started = Instant::now();
        let texts: Vec<String> = all
            .iter()
            .map(|sample| counter.render(&sample.messages, false).unwrap())
            .collect();
        render += started.elapsed();
        let started = Instant::now();
        for text in &texts {
            tokens += model.tokenizer().encode(text, false).unwrap().len();
        }
        encode += started.elapsed();
        bytes += texts.iter().map(String::len).sum::<usize>();
    }
    Anchor {
        encode,
        render,
        tokens,
        bytes,
    }
}

/// Deterministic pseudo-random numbers (SplitMix64).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn between(&mut self, low: usize, high: usize) -> usize {
        low + (self.next() % (high - low + 1) as u64) as usize
    }

    /// Between `low` and `high` tokens of text.
    fn text_between(&mut self, low: usize, high: usize) -> String {
        let tokens = self.between(low, high);
        self.text(tokens)
    }

    /// About `tokens` tokens of prose mixed with code.
    fn text(&mut self, tokens: usize) -> String {
        const WORDS: [&str; 40] = [
            "the", "function", "returns", "value", "when", "parser", "we", "self", "def", "return",
            "if", "None", "test", "error", "because", "so", "need", "to", "check", "line", "file",
            "code", "bug", "left", "right", "expected", "got", "maybe", "look", "at", "instead",
            "call", "fix", "add", "and", "or", "not", "is", "in", "for",
        ];
        let mut text = String::new();
        // One token per word with Qwen3's tokenizer, and one per line break.
        for index in 0..tokens * 16 / 17 {
            if index > 0 {
                text.push(if index % 17 == 0 { '\n' } else { ' ' });
            }
            text.push_str(WORDS[self.next() as usize % WORDS.len()]);
        }
        text
    }
}

/// Trajectory `k`: as the agent records a run with `window = 1` and `send = "inline"`.
fn trajectory(k: usize) -> Trajectory {
    let mut random = Random(k as u64);
    let mut header = Header::new(format!("synthetic__{k}"), "synthetic");
    header.prompt = vec![
        Message::system(random.text(1500)),
        Message::user(random.text(400)),
    ];
    header
        .extra
        .insert("reasoning_window".into(), WINDOW.into());
    let policy = ContextPolicy {
        window: Window::Last(WINDOW),
        send: SendReasoning::Inline,
    };
    let mut conversation = header.prompt.clone();
    let mut trajectory = Trajectory::new(header);
    let mut before: Option<(usize, Vec<Message>)> = None;
    for index in 0..STEPS {
        let sent = policy.apply(&conversation);
        let mut step = Step::new(index, String::new());
        step.messages_sent = Some(match &before {
            Some((base, messages)) => MessagesSent::delta(Some(*base), messages, &sent),
            None => MessagesSent::delta(None, &[], &sent),
        });
        before = Some((index, sent));
        let deliberative = random.between(0, 3) == 0;
        let reasoning = if deliberative {
            random.text_between(600, 1500)
        } else {
            random.text_between(50, 250)
        };
        let digest = random.text_between(30, 60);
        let command = random.text_between(10, 60);
        let call = format!(
            "<function=execute_bash>\n  <parameter=command>{command}</parameter>\n</function>"
        );
        let observation = random.text_between(100, 700);
        step.response_text = format!(
            "<think>\n{reasoning}\n</think>\n<reasoning_digest>\n{digest}\n</reasoning_digest>\n{call}"
        );
        let mut arguments = serde_json::Map::new();
        arguments.insert("command".into(), command.into());
        step.tool_call = Some(ToolCall {
            name: "execute_bash".into(),
            arguments,
        });
        step.call_text = Some(call.clone());
        step.observation = Some(observation.clone());
        conversation.push(Message {
            reasoning_content: Some(reasoning.clone()),
            ..Message::assistant(content(&digest, &call))
        });
        conversation.push(Message::user(observation));
        step.reasoning = Some(reasoning);
        step.digest = Some(digest);
        trajectory.steps.push(step);
    }
    let mut outcome = Outcome::new(ExitReason::Submitted, "diff --git a/x b/x\n");
    outcome.reward = Some(1.0);
    trajectory.outcome = Some(outcome);
    trajectory
}
