//! Ray scale-out throughput: `swerve run` of 48 rollouts (the 8 bundled tasks × 6 samples,
//! 10 commands and a `finish` each) against a loopback model answering every request after
//! 200 ms, on a local Ray cluster of 1, 2 and 3 nodes (8 slots each), each beside the same
//! run without Ray with as many slots (8, 16, 24 at once), all on this machine. Rollouts are latency-bound, so slots rather than cores
//! decide: N nodes should give close to N times one node's throughput.
//!
//! Figures, all from one invocation, each the median of 3 runs (local and Ray runs taking
//! turns): wall time and rollouts per second of each run, Ray's
//! against the local run's, the speed-up over one node against the ideal N (on one machine
//! the local run with as many slots is the ceiling), and Ray's overhead per rollout (one node's
//! wall time minus the local run's, over its rollouts per slot), with the time the Ray
//! cluster took to start its workers. Each cluster size gets an unmeasured warm-up run first
//! (it fills the new node's cache with base checkouts).
//!
//! Needs Ray: `scripts/ray-tests.sh` installs it into `target/venvs/ray` (or set `RAY_VENV`).
//! Run with `cargo bench -p swerve-cli --bench ray` (`--profile dev` for the debug build the
//! tests use). Stops the cluster it started (`ray stop --force`) when it ends.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swerve_testing::{ModelServer, Reply};

/// How long the loopback model takes to answer each request.
const MODEL_DELAY: Duration = Duration::from_millis(200);
/// Shell commands per rollout; the call after them is `finish`.
const COMMAND_STEPS: usize = 10;
/// Samples of each of the 8 bundled tasks, unless `RAY_BENCH_SAMPLES` says otherwise (more
/// samples spread the workers' start over more rollouts).
const SAMPLES: usize = 6;

/// The samples of each task this invocation runs.
fn samples() -> usize {
    std::env::var("RAY_BENCH_SAMPLES")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(SAMPLES)
}
/// Rollouts at once per node, and in the local run.
const SLOTS: usize = 8;
/// Runs of each kind per cluster size; the median is reported.
const ROUNDS: usize = 3;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let venv = std::env::var_os("RAY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/venvs/ray"));
    assert!(
        venv.join("bin/ray").is_file(),
        "no Ray in {}: run scripts/ray-tests.sh first (it installs it) or set RAY_VENV",
        venv.display()
    );
    let scratch = tempfile::tempdir().unwrap();
    let server = ModelServer::answering(|request| {
        std::thread::sleep(MODEL_DELAY);
        let step = request.body["messages"].as_array().map_or(0, |messages| {
            messages
                .iter()
                .filter(|message| message["role"] == "assistant")
                .count()
        });
        Reply::Json(200, completion(step))
    });
    let cluster = Cluster::new(&venv, scratch.path());
    let bench = Bench {
        root: &root,
        url: server.url(),
        scratch: scratch.path(),
        python: venv.join("bin/python"),
    };

    bench.run("warm-local", SLOTS, None);
    let mut rows = Vec::new();
    for nodes in 1..=3 {
        let slots = SLOTS * nodes;
        cluster.add_node();
        bench.run(&format!("warm-{nodes}"), slots, Some(&cluster.address));
        // Local and Ray runs take turns, so that load from elsewhere hits both alike.
        let (mut local, mut ray) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            local.push(bench.run(&format!("local-{nodes}-{round}"), slots, None));
            let address = Some(cluster.address.as_str());
            ray.push(bench.run(&format!("ray-{nodes}-{round}"), slots, address));
        }
        rows.push((nodes, median(local), median(ray)));
    }
    drop(cluster);

    let rollouts = (8 * samples()) as f64;
    println!(
        "| slots | without Ray: wall (s), rollouts/s | Ray, {SLOTS} slots a node: nodes, wall (s), rollouts/s | Ray ÷ without | Ray × one node (ideal: nodes) | workers up after (s) |"
    );
    println!("|---|---|---|---|---|---|");
    let one = rows[0].2.wall;
    for (nodes, local, ray) in &rows {
        println!(
            "| {} | {:.1}, {:.2} | {nodes}, {:.1}, {:.2} | {:.2} | {:.2} | {:.1} |",
            SLOTS * nodes,
            local.wall,
            rollouts / local.wall,
            ray.wall,
            rollouts / ray.wall,
            local.wall / ray.wall,
            one / ray.wall,
            ray.started.unwrap_or(f64::NAN)
        );
    }
    let (_, local, ray) = &rows[0];
    let per_slot = rollouts / SLOTS as f64;
    println!(
        "- Ray's overhead per rollout (1 node against the local run, same slots): {:.2} s \
         including the workers' start, {:.2} s without it; a rollout takes ≥ {:.1} s of model time",
        (ray.wall - local.wall) / per_slot,
        (ray.wall - ray.started.unwrap_or(0.0) - local.wall) / per_slot,
        (COMMAND_STEPS + 1) as f64 * MODEL_DELAY.as_secs_f64()
    );
    println!(
        "- {rollouts} rollouts (8 tasks × {}), {} model calls each at {} ms; {} cores",
        samples(),
        COMMAND_STEPS + 1,
        MODEL_DELAY.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
}

/// The run of median wall time.
fn median(mut runs: Vec<Run>) -> Run {
    runs.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    runs.swap_remove(runs.len() / 2)
}

/// The loopback model's answer to a request with `step` assistant turns: `echo step-N`,
/// then `finish`.
fn completion(step: usize) -> Value {
    let text = if step < COMMAND_STEPS {
        format!(
            "Step {step}.\n<function=execute_bash>\n<parameter=command>echo step-{step}</parameter>\n</function>"
        )
    } else {
        "Done.\n<function=finish>\n<parameter=command>submit</parameter>\n</function>".to_owned()
    };
    json!({
        "id": format!("bench-{step}"), "object": "chat.completion", "created": 0, "model": "bench-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 30, "total_tokens": 1030}
    })
}

struct Bench<'a> {
    root: &'a Path,
    url: String,
    scratch: &'a Path,
    python: PathBuf,
}

/// What one `swerve run` measured.
struct Run {
    /// From spawning swerve to its exit, seconds.
    wall: f64,
    /// On Ray: from spawning swerve to its workers being up, seconds.
    started: Option<f64>,
}

impl Bench<'_> {
    /// Runs all rollouts into a fresh directory `name`, `slots` at once here or on the Ray
    /// cluster at `ray` if given (there `SLOTS` a node).
    fn run(&self, name: &str, slots: usize, ray: Option<&str>) -> Run {
        let out = self.scratch.join(name);
        let mut command = Command::new(env!("CARGO_BIN_EXE_swerve"));
        command
            .current_dir(self.root)
            .args(["run", "--tasks", "examples/tasks/tasks.jsonl"])
            .args(["--model", "bench-model", "--base-url", &self.url])
            .args(["--max-steps", &(COMMAND_STEPS + 1).to_string()])
            .args(["--samples", &samples().to_string()])
            .args(["--concurrency", &slots.to_string()])
            .arg("--out")
            .arg(&out)
            .env("SWERVE_CACHE_DIR", self.scratch.join("cache-driver"))
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(address) = ray {
            command.args(["--ray", address]).args([
                "--set",
                &format!("cluster.python=\"{}\"", self.python.display()),
                "--set",
                &format!("cluster.slots={SLOTS}"),
            ]);
        }
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut up = None;
        let mut text = String::new();
        for line in std::io::BufRead::lines(stderr).map_while(Result::ok) {
            if up.is_none() && line.starts_with("Ray cluster at") {
                up = Some(started.elapsed().as_secs_f64());
            }
            text.push_str(&line);
            text.push('\n');
        }
        let status = child.wait().unwrap();
        let wall = started.elapsed().as_secs_f64();
        assert!(status.success(), "{name}: swerve failed:\n{text}");
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["submitted"], 8 * samples(), "{name}: {summary}");
        eprintln!("{name}: {wall:.1} s");
        Run { wall, started: up }
    }
}

/// A local Ray cluster, one node added at a time, each with one CPU, the `swerve` resource
/// and its own cache; stopped when dropped.
struct Cluster {
    ray: PathBuf,
    scratch: PathBuf,
    address: String,
    nodes: std::cell::Cell<usize>,
}

impl Cluster {
    fn new(venv: &Path, scratch: &Path) -> Self {
        let port = 20000 + std::process::id() % 20000;
        Self {
            ray: venv.join("bin/ray"),
            scratch: scratch.to_owned(),
            address: format!("127.0.0.1:{port}"),
            nodes: std::cell::Cell::new(0),
        }
    }

    fn add_node(&self) {
        let node = self.nodes.get();
        let mut command = Command::new(&self.ray);
        command.arg("start");
        if node == 0 {
            let port = self.address.rsplit_once(':').unwrap().1;
            command.args(["--head", "--port", port, "--include-dashboard=false"]);
        } else {
            command.arg(format!("--address={}", self.address));
        }
        let status = command
            .args([
                "--num-cpus=1",
                "--object-store-memory=80000000",
                "--disable-usage-stats",
                "--resources={\"swerve\": 1}",
            ])
            .env(
                "SWERVE_CACHE_DIR",
                self.scratch.join(format!("cache-node{node}")),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "ray start failed");
        self.nodes.set(node + 1);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.ray)
            .args(["stop", "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
