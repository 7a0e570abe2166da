//! Rollout service throughput: `swerve serve` (the real binary, a child process) running
//! rollouts for concurrent HTTP clients against a loopback model that answers every request
//! after 50 ms, and gym-style environment steps sent one after another per environment.
//!
//! Figures, for 32 rollouts at once and for one at a time (the anchor, without contention):
//! rollouts per minute and steps per second; a rollout's latency as its client sees it
//! against the ideal (its model calls × 50 ms), and from that swerve's overhead per step,
//! split into the model call beyond 50 ms, the tool call, and the rollout's fixed costs
//! outside its steps; the service's own CPU per step. Then gym-style environments: steps per
//! second and a step's latency (HTTP, parsing, the tool).
//!
//! Run with `cargo bench -p swerve-cli --bench serve`; `SWERVE_BENCH_QUICK=1` runs fewer
//! rollouts. Prints a Markdown table for `BENCHMARKS.md`.

// The end-to-end tests' support, for `Serve`; the bench uses none of its re-exports.
#[path = "../tests/cli/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::Serve;
use serde_json::{Value, json};
use swerve_testing::ModelServer;
use swerve_testing::bench::{mean, percentile};

/// How long the loopback model takes to answer.
const MODEL_DELAY: Duration = Duration::from_millis(50);
/// Shell commands per rollout; the call after them is `finish`.
const COMMAND_STEPS: usize = 10;
/// Model calls per rollout.
const CALLS: usize = COMMAND_STEPS + 1;
/// Rollouts at once (the service's slots and the clients).
const CONCURRENCY: usize = 32;
/// Environments stepped at once, and steps per environment.
const ENVS: usize = 8;
const ENV_STEPS: usize = 50;

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let rollouts = if quick { 32 } else { 128 };
    let model_server = ModelServer::answering_text(|request| {
        std::thread::sleep(MODEL_DELAY);
        let step = request.body["messages"].as_array().map_or(0, |messages| {
            messages.iter().filter(|m| m["role"] == "assistant").count()
        });
        match step < COMMAND_STEPS {
            true => format!(
                "<function=execute_bash><parameter=command>echo step-{step}</parameter></function>"
            ),
            false => "<function=finish><parameter=command>submit</parameter></function>".into(),
        }
    });
    let model = model_server.url();
    let scratch = tempfile::tempdir().unwrap();
    let serve = Serve::start(
        scratch.path(),
        &scratch.path().join("serve"),
        &[
            &format!("serve.max_rollouts={CONCURRENCY}"),
            &format!("serve.max_envs={ENVS}"),
        ],
    );
    let tasks: Vec<String> = swerve_testing::json_lines(&common::examples())
        .iter()
        .map(|task| task["instance_id"].as_str().unwrap().to_owned())
        .collect();

    // Unmeasured: every task's base checkout.
    let warm = run_rollouts(&serve, &model, &tasks, "warm", tasks.len(), tasks.len());
    assert!(
        warm.iter()
            .all(|(answer, _)| answer["exit_reason"] == "submitted")
    );

    let many = measure(&serve, &model, &tasks, "many", rollouts, CONCURRENCY);
    let one = measure(&serve, &model, &tasks, "one", tasks.len(), 1);
    let (env_wall, env_latency) = step_envs(&serve, &tasks);

    let ideal = CALLS as f64 * MODEL_DELAY.as_millis() as f64;
    println!(
        "| figure (model answers after {} ms) | {CONCURRENCY} at once | 1 at a time (anchor) |",
        MODEL_DELAY.as_millis()
    );
    println!("|---|---|---|");
    let row = |what: &str, figure: &dyn Fn(&Figures) -> String| {
        println!("| {what} | {} | {} |", figure(&many), figure(&one));
    };
    row(&format!("rollouts (× {CALLS} calls)"), &|f| {
        f.rollouts.to_string()
    });
    row("wall time, s", &|f| format!("{:.2}", f.wall));
    row("**rollouts per minute**", &|f| {
        format!("**{:.0}**", f.rollouts as f64 / f.wall * 60.0)
    });
    row(
        "**steps per second** (model calls, the finish call included)",
        &|f| format!("**{:.1}**", f.steps as f64 / f.wall),
    );
    row(
        &format!("rollout latency at the client, ms: mean / p50 / p95 (ideal {ideal:.0})"),
        &|f| ms(&f.latency_ms),
    );
    row(
        &format!(
            "**swerve's overhead per step** ((latency − ideal) / {CALLS}), ms: mean / p50 / p95"
        ),
        &|f| format!("**{}**", ms(&f.overhead_ms)),
    );
    row(
        "of which per step: model call beyond the model's 50 ms (`model_seconds` − 50), ms",
        &|f| ms(&f.model_extra_ms),
    );
    row(
        "of which per step: the tool call (`env_seconds`), ms",
        &|f| ms(&f.tool_ms),
    );
    row(
        "per rollout outside model and tool calls (workspace and sandbox up and down, trajectory writes, patch, HTTP), ms",
        &|f| ms(&f.outside_ms),
    );
    row(
        "service CPU per step (its process, not the sandboxes), ms",
        &|f| format!("{:.2}", 1000.0 * f.cpu / f.steps as f64),
    );
    println!();
    println!(
        "- ideal steps per second at {CONCURRENCY} at once: {CONCURRENCY} / 50 ms = {:.0}",
        CONCURRENCY as f64 / MODEL_DELAY.as_secs_f64()
    );
    println!(
        "- gym environments, {ENVS} at once × {ENV_STEPS} `echo` steps sent as model text (no model): {:.0} steps per second; a step's latency (HTTP, parsing, the tool), ms: mean / p50 / p95 {}",
        (ENVS * ENV_STEPS) as f64 / env_wall,
        ms(&env_latency)
    );
}

/// What one measured batch of rollouts gives.
struct Figures {
    rollouts: usize,
    wall: f64,
    steps: usize,
    cpu: f64,
    latency_ms: Vec<f64>,
    overhead_ms: Vec<f64>,
    model_extra_ms: Vec<f64>,
    tool_ms: Vec<f64>,
    outside_ms: Vec<f64>,
}

/// Runs `count` rollouts, `clients` at once, and measures them.
fn measure(
    serve: &Serve,
    model: &str,
    tasks: &[String],
    label: &str,
    count: usize,
    clients: usize,
) -> Figures {
    let cpu_before = cpu_seconds(serve.child.id());
    let started = Instant::now();
    let answers = run_rollouts(serve, model, tasks, label, count, clients);
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(serve.child.id()) - cpu_before;
    let delay_ms = MODEL_DELAY.as_secs_f64() * 1000.0;
    let mut figures = Figures {
        rollouts: count,
        wall,
        steps: 0,
        cpu,
        latency_ms: Vec::new(),
        overhead_ms: Vec::new(),
        model_extra_ms: Vec::new(),
        tool_ms: Vec::new(),
        outside_ms: Vec::new(),
    };
    for (answer, seconds) in &answers {
        let steps: Vec<&Value> = answer["trajectory"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|record| record["type"] == "step")
            .collect();
        assert_eq!(steps.len(), CALLS, "every rollout makes {CALLS} calls");
        figures.steps += steps.len();
        let latency = 1000.0 * seconds;
        figures.latency_ms.push(latency);
        figures
            .overhead_ms
            .push((latency - CALLS as f64 * delay_ms) / CALLS as f64);
        let mut inside = 0.0;
        for step in steps {
            let model_ms = 1000.0 * step["timings"]["model_seconds"].as_f64().unwrap();
            let tool_ms = 1000.0 * step["timings"]["env_seconds"].as_f64().unwrap_or(0.0);
            figures.model_extra_ms.push(model_ms - delay_ms);
            figures.tool_ms.push(tool_ms);
            inside += model_ms + tool_ms;
        }
        figures.outside_ms.push(latency - inside);
    }
    figures
}

/// Runs `count` rollouts over the tasks, `clients` at once; each answer and its latency.
fn run_rollouts(
    serve: &Serve,
    model: &str,
    tasks: &[String],
    label: &str,
    count: usize,
    clients: usize,
) -> Vec<(Value, f64)> {
    let next = Mutex::new(0..count);
    let answers = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..clients {
            scope.spawn(|| {
                loop {
                    let Some(n) = next.lock().unwrap().next() else {
                        return;
                    };
                    let request = json!({
                        "task_id": tasks[n % tasks.len()],
                        "model": "bench",
                        "base_url": model,
                        "session_id": format!("{label}-{n}"),
                        "evaluate": false,
                    });
                    let started = Instant::now();
                    let answer = serve.call("POST", "/v1/rollouts", Some(&request));
                    let seconds = started.elapsed().as_secs_f64();
                    assert_eq!(answer.status, 200, "{}", answer.body);
                    answers.lock().unwrap().push((answer.body, seconds));
                }
            });
        }
    });
    answers.into_inner().unwrap()
}

/// Steps `ENVS` environments at once, `ENV_STEPS` `echo` calls each; the wall time (s) and
/// each step's latency (ms).
fn step_envs(serve: &Serve, tasks: &[String]) -> (f64, Vec<f64>) {
    let ids: Vec<String> = (0..ENVS)
        .map(|n| {
            let created = serve.call(
                "POST",
                "/v1/envs",
                Some(&json!({"task_id": tasks[n % tasks.len()]})),
            );
            assert_eq!(created.status, 200, "{}", created.body);
            created.body["id"].as_str().unwrap().to_owned()
        })
        .collect();
    let latencies = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for id in &ids {
            let latencies = &latencies;
            scope.spawn(move || {
                for step in 0..ENV_STEPS {
                    let text = format!(
                        "<function=execute_bash><parameter=command>echo {step}</parameter></function>"
                    );
                    let begun = Instant::now();
                    let answer = serve.call(
                        "POST",
                        &format!("/v1/envs/{id}/step"),
                        Some(&json!({"text": text})),
                    );
                    latencies
                        .lock()
                        .unwrap()
                        .push(1000.0 * begun.elapsed().as_secs_f64());
                    assert_eq!(answer.status, 200, "{}", answer.body);
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    for id in &ids {
        serve.call("DELETE", &format!("/v1/envs/{id}"), None);
    }
    (wall, latencies.into_inner().unwrap())
}

/// User + system CPU seconds of process `pid` (all its threads; Linux counts 100 ticks a
/// second).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// Mean / p50 / p95 of `values`.
fn ms(values: &[f64]) -> String {
    format!(
        "{:.1} / {:.1} / {:.1}",
        mean(values),
        percentile(values, 0.5),
        percentile(values, 0.95)
    )
}
