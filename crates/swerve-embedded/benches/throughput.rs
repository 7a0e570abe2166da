//! Prompt and generation throughput of the embedded model (SmolLM2-135M-Instruct, Q4_1) on
//! this machine's CPU, each beside an anchor measured in the same run:
//!
//! - **prompt** (prefill): prompts of 128, 512 and 2,048 tokens of real text (this
//!   repository's docs), run in chunks through the network, one new token asked for.
//! - **generation** (decode): 256 tokens after a 64-token prompt, greedy, past any stop
//!   token, one token at a time with the key-value cache.
//! - **anchor, no cache**: the same tokens generated the plain way, running the whole prefix
//!   again for every token: what the key-value cache saves.
//! - **anchor, weight streaming**: reading a buffer the size of the weights as they are
//!   multiplied (f32 where dequantized at load) once, on both cores. Generating one token
//!   reads every weight once, so this bounds single-sequence generation by this machine's
//!   memory.
//!
//! Skips with a message when the model file is absent (`scripts/fetch-model.sh`). Run with
//! `cargo bench -p swerve-embedded --bench throughput`; `SWERVE_BENCH_QUICK=1` runs fewer
//! repetitions.

use std::hint::black_box;
use std::time::{Duration, Instant};

use swerve_embedded::{EmbeddedModel, default_model_path};
use swerve_llm::Sampling;

fn main() {
    let path = default_model_path();
    if !path.is_file() {
        eprintln!(
            "skipping: the embedded model {} is absent; run scripts/fetch-model.sh",
            path.display()
        );
        return;
    }
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let runs = if quick { 2 } else { 5 };
    let started = Instant::now();
    let model = EmbeddedModel::load(&path).expect("the default model loads");
    let load = started.elapsed();
    let info = model.info().clone();
    println!(
        "model: {} ({:.1} MB file, {:.1} MB of weights as multiplied, {} tokens of vocabulary, \
         {}-token context), loaded in {:.0} ms; {} runs each; {} CPU threads",
        info.name,
        info.file_bytes as f64 / 1e6,
        info.weight_bytes as f64 / 1e6,
        info.vocab_size,
        info.context_length,
        load.as_secs_f64() * 1e3,
        runs,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let text = [
        include_str!("../../../docs/architecture.md"),
        include_str!("../../../docs/configuration.md"),
        include_str!("../../../docs/tokens.md"),
    ]
    .concat();
    let corpus = model
        .tokenizer()
        .encode(&text, false)
        .expect("the docs tokenize");
    assert!(corpus.len() > 2048, "{} tokens of docs", corpus.len());
    let one = Sampling {
        temperature: Some(0.0),
        max_tokens: Some(1),
        ..Sampling::default()
    };

    println!();
    println!("| benchmark | implementation | runs | p50 s | tokens/s (p50) | swerve / anchor |");
    println!("|---|---|---|---|---|---|");
    for length in [128, 512, 2048] {
        let prompt = &corpus[..length];
        let times = repeat(runs, || {
            model
                .generate(prompt, &one, false)
                .expect("prefill")
                .prompt_time
        });
        row(
            &format!("prompt, {length} tokens"),
            "swerve-embedded (chunked prefill)",
            &times,
            length,
            None,
        );
    }

    let prompt = &corpus[..64];
    let count = 256;
    let greedy = Sampling {
        temperature: Some(0.0),
        max_tokens: Some(count as u32),
        ..Sampling::default()
    };
    let mut generated = Vec::new();
    let decode = repeat(runs, || {
        let generation = model.generate(prompt, &greedy, true).expect("generation");
        assert_eq!(generation.tokens.len(), count);
        generated = generation.tokens;
        generation.generation_time
    });
    let decode_rate = rate(&decode, count);
    row(
        &format!("generation, {count} tokens after 64"),
        "swerve-embedded (key-value cache)",
        &decode,
        count,
        None,
    );

    let scored = if quick { 16 } else { 32 };
    let naive = repeat(runs.min(3), || {
        let started = Instant::now();
        for index in 0..scored {
            let prefix = [prompt, &generated[..index]].concat();
            black_box(model.generate(&prefix, &one, false).expect("generation"));
        }
        started.elapsed()
    });
    row(
        &format!("generation, {scored} tokens after 64"),
        "anchor: no cache, the whole prefix run again per token",
        &naive,
        scored,
        Some(decode_rate),
    );

    let bytes = info.weight_bytes as usize;
    let buffer: Vec<u64> = (0..bytes / 8).map(|i| i as u64).collect();
    let stream = repeat(runs * 4, || {
        let started = Instant::now();
        black_box(sum_on_two_threads(&buffer));
        started.elapsed()
    });
    row(
        &format!(
            "read {:.0} MB once (one token's weights)",
            bytes as f64 / 1e6
        ),
        "anchor: memory streaming bound, 2 threads",
        &stream,
        1,
        Some(decode_rate),
    );
}

/// `body`'s durations over `runs` runs after one untimed warm-up.
fn repeat(runs: usize, mut body: impl FnMut() -> Duration) -> Vec<Duration> {
    body();
    let mut times: Vec<Duration> = (0..runs).map(|_| body()).collect();
    times.sort();
    times
}

fn p50(times: &[Duration]) -> Duration {
    times[times.len() / 2]
}

fn rate(times: &[Duration], tokens: usize) -> f64 {
    tokens as f64 / p50(times).as_secs_f64()
}

/// A table row; `versus` is swerve's rate for the ratio column of an anchor.
fn row(what: &str, how: &str, times: &[Duration], tokens: usize, versus: Option<f64>) {
    let tokens_per_second = rate(times, tokens);
    let ratio = versus.map_or_else(
        || "—".to_owned(),
        |swerve| format!("{:.2}×", swerve / tokens_per_second),
    );
    println!(
        "| {what} | {how} | {} | {:.3} | {:.1} | {ratio} |",
        times.len(),
        p50(times).as_secs_f64(),
        tokens_per_second
    );
}

fn sum_on_two_threads(buffer: &[u64]) -> u64 {
    let (left, right) = buffer.split_at(buffer.len() / 2);
    std::thread::scope(|scope| {
        let half = scope.spawn(|| left.iter().fold(0u64, |sum, &x| sum.wrapping_add(x)));
        let other = right.iter().fold(0u64, |sum, &x| sum.wrapping_add(x));
        half.join().unwrap_or(0).wrapping_add(other)
    })
}
