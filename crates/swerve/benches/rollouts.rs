//! Rollout throughput: 256 concurrent rollouts × 30 steps against a loopback model that
//! answers every request after 200 ms, on the bundled tasks, run by the real `swerve run`
//! binary as a child process.
//!
//! Figures, all from one invocation: wall time against the ideal (30 × 200 ms), swerve's own
//! CPU time per step (its process only: the shell commands and the sandbox inits are other
//! processes), peak memory per active rollout, and the sandbox processes' memory. A 1-rollout
//! run measured the same way is the anchor for fixed per-run costs. The base checkouts are
//! warmed by an unmeasured run first.
//!
//! Run with `cargo bench -p swerve-cli --bench rollouts`; `SWERVE_BENCH_QUICK=1` runs 64 rollouts
//! instead of 256; `SWERVE_BENCH_OUT_DIR=/dev/shm` puts the run directories (trajectories,
//! logs) on another file system. Prints a Markdown table for `BENCHMARKS.md`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swerve_testing::bench::{mean, percentile};

/// How long the loopback model takes to answer each request.
const MODEL_DELAY: Duration = Duration::from_millis(200);
/// Shell commands per rollout; the call after them is `finish`.
const COMMAND_STEPS: usize = 30;
/// Model calls per rollout: the commands plus the finishing call.
const CALLS: usize = COMMAND_STEPS + 1;
/// Tasks in `examples/tasks/tasks.jsonl`.
const TASKS: usize = 8;

fn main() {
    let quick = std::env::var_os("SWERVE_BENCH_QUICK").is_some();
    let samples = if quick { 8 } else { 32 };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let cache = scratch.path().join("cache");
    // Where the run directories (trajectories, logs, summary) go: the temporary directory,
    // or a directory under SWERVE_BENCH_OUT_DIR (e.g. /dev/shm, where fsync costs nothing).
    let outs = match std::env::var_os("SWERVE_BENCH_OUT_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir_in(scratch.path()).unwrap(),
    };
    let server = Server::start(MODEL_DELAY);
    let first_task = first_instance_id(&root);
    // Other load on the machine skews everything here: note how busy it was beforehand.
    let before = machine_ticks();
    std::thread::sleep(Duration::from_secs(2));
    let after = machine_ticks();
    let background = (after.0 - before.0) as f64 / (after.1 - before.1) as f64;

    // Unmeasured: fills the cache with every task's base checkout.
    let warm = run_swerve(
        &root,
        &cache,
        &server,
        &outs.path().join("warm"),
        &["--samples", "1", "--concurrency", "8"],
        None,
        TASKS,
    );
    eprintln!("warm-up: {TASKS} rollouts in {:.2} s", warm.wall);

    let one = run_swerve(
        &root,
        &cache,
        &server,
        &outs.path().join("one"),
        &["--samples", "1", "--concurrency", "1"],
        Some(&first_task),
        1,
    );
    let rollouts = TASKS * samples;
    let many = run_swerve(
        &root,
        &cache,
        &server,
        &outs.path().join("many"),
        &[
            "--samples",
            &samples.to_string(),
            "--concurrency",
            &rollouts.to_string(),
        ],
        None,
        rollouts,
    );
    report(&many, &one);
    println!(
        "- background: the machine was {:.0}% busy in the 2 s before the runs, with nothing of this bench running",
        100.0 * background
    );
}

/// The instance id of the first bundled task.
fn first_instance_id(root: &Path) -> String {
    let text = std::fs::read_to_string(root.join("examples/tasks/tasks.jsonl")).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["instance_id"].as_str().unwrap().to_owned()
}

// ---------------------------------------------------------------------------------------
// The loopback model.

/// An OpenAI-compatible `/v1/chat/completions` endpoint on 127.0.0.1 that answers every
/// request after a fixed delay (a sleep), one thread per connection, keep-alive. The answer
/// is a tool call in swerve's XML format chosen by the number of assistant messages already
/// in the conversation: `echo step-N` for N < 30, then `finish`.
struct Server {
    url: String,
    state: Arc<ServerState>,
}

#[derive(Default)]
struct ServerState {
    requests: AtomicUsize,
    log: Mutex<ServerLog>,
}

/// One rollout as the server saw it.
struct Session {
    calls: usize,
    first_request: Instant,
    /// When the last answer was written, `None` while one is pending.
    last_answer: Option<Instant>,
}

#[derive(Default)]
struct ServerLog {
    /// Per session (`X-Session-ID`, one per rollout).
    sessions: HashMap<String, Session>,
    /// Per request after a session's first: from the previous answer sent to this request
    /// read, i.e. swerve's turnaround between two model calls of one rollout.
    turnaround: Vec<f64>,
    /// Requests whose step did not fit the script (more than `CALLS` calls).
    unexpected: usize,
}

impl Server {
    fn start(delay: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let state = Arc::new(ServerState::default());
        let shared = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let state = shared.clone();
                std::thread::spawn(move || serve_connection(stream, delay, &state));
            }
        });
        Server { url, state }
    }

    /// The requests and the log since the last call.
    fn take(&self) -> (usize, ServerLog) {
        let requests = self.state.requests.swap(0, Ordering::SeqCst);
        let log = std::mem::take(&mut *self.state.log.lock().unwrap());
        (requests, log)
    }
}

fn serve_connection(stream: TcpStream, delay: Duration, state: &ServerState) {
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    while let Some((path, session, body)) = read_request(&mut reader) {
        let received = Instant::now();
        state.requests.fetch_add(1, Ordering::Relaxed);
        let (status, reply) = if path.ends_with("/chat/completions") {
            let step = count(&body, br#""role":"assistant""#);
            let mut log = state.log.lock().unwrap();
            let entry = log.sessions.entry(session.clone()).or_insert(Session {
                calls: 0,
                first_request: received,
                last_answer: None,
            });
            entry.calls += 1;
            if let Some(previous) = entry.last_answer.take() {
                let gap = received.duration_since(previous).as_secs_f64();
                log.turnaround.push(gap);
            }
            if step >= CALLS {
                log.unexpected += 1;
            }
            ("200 OK", completion(step))
        } else {
            let error = json!({"error": {"message": format!("no route {path}")}});
            ("404 Not Found", error.to_string())
        };
        std::thread::sleep(delay.saturating_sub(received.elapsed()));
        let sent = write!(
            writer,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
            reply.len()
        )
        .and_then(|()| writer.flush());
        if sent.is_err() {
            return;
        }
        let now = Instant::now();
        if let Some(entry) = state.log.lock().unwrap().sessions.get_mut(&session) {
            entry.last_answer = Some(now);
        }
    }
}

/// One HTTP/1.1 request: path, `X-Session-ID` and body; `None` at the end of the connection.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String, Vec<u8>)> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_owned();
    let (mut length, mut session) = (None, String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        match name.as_str() {
            "content-length" => length = Some(value.parse::<usize>().unwrap()),
            "x-session-id" => session = value.to_owned(),
            "transfer-encoding" => panic!("the loopback server needs Content-Length bodies"),
            _ => {}
        }
    }
    let mut body = vec![0; length.unwrap_or(0)];
    reader.read_exact(&mut body).ok()?;
    Some((path, session, body))
}

/// Occurrences of `needle` in `haystack`. Counting `"role":"assistant"` in the raw body finds
/// the assistant messages: inside a JSON string the quotes would be escaped.
fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|window| *window == needle)
        .count()
}

/// The chat completion for model call `step` (0-based) of a rollout.
fn completion(step: usize) -> String {
    let text = if step < COMMAND_STEPS {
        format!(
            "Step {step}: running a command.\n<function=execute_bash>\n<parameter=command>echo step-{step}</parameter>\n</function>"
        )
    } else {
        "Done.\n<function=finish>\n<parameter=command>submit</parameter>\n</function>".to_owned()
    };
    json!({
        "id": format!("bench-{step}"), "object": "chat.completion", "created": 0, "model": "bench-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000 + 100 * step, "completion_tokens": 30, "total_tokens": 1030 + 100 * step}
    })
    .to_string()
}

// ---------------------------------------------------------------------------------------
// Running swerve and watching it.

/// What one `swerve run` invocation measured.
struct Run {
    rollouts: usize,
    /// From spawning the process to its exit, seconds.
    wall: f64,
    /// User and system CPU seconds of the swerve process (own threads, not its children),
    /// from `/proc/<pid>/stat` read while it was a zombie.
    proc_cpu: (f64, f64),
    /// User + system CPU seconds of the children swerve waited for (sandbox inits with what
    /// ran in them, git helpers), from the same read.
    children_cpu: f64,
    /// The largest `VmHWM` seen while it ran, bytes.
    proc_peak_rss: u64,
    /// `summary.json`'s `process` figures (getrusage in swerve), when present.
    process: Option<Value>,
    /// Step records over all trajectories.
    steps: usize,
    /// `summary.json`'s `steps`, when present.
    summary_steps: Option<u64>,
    /// Peak over the samples of the summed resident / anonymous resident memory of the
    /// sandbox processes (each sandbox's launcher, its init and whatever runs in it), bytes,
    /// and the most such processes seen in one sample.
    tree_peak_rss: u64,
    tree_peak_anon: u64,
    tree_peak_processes: usize,
    /// The same for host helpers started by swerve (git, forks about to exec), sampled alike.
    helpers_peak_rss: u64,
    helpers_peak_processes: usize,
    /// The machine's CPUs busy during the run (all processes), as a fraction of all CPUs.
    machine_busy: f64,
    /// Busy CPU seconds of the machine during the run, all CPUs.
    machine_busy_seconds: f64,
    /// CPU seconds of this bench process during the run (loopback server, sampling).
    bench_cpu: f64,
    /// Of which the sampling of `/proc` (this thread).
    sampling_cpu: f64,
    /// Per step: `model_seconds` and `env_seconds` from the trajectories.
    model_seconds: Vec<f64>,
    env_seconds: Vec<f64>,
    /// Server side: from an answer sent to the rollout's next request read, seconds.
    turnaround: Vec<f64>,
    /// Server side, per rollout, seconds after swerve was started: its first request read,
    /// and its last answer sent.
    first_requests: Vec<f64>,
    last_answers: Vec<f64>,
}

impl Run {
    /// swerve's own user and system CPU seconds: getrusage's when summary.json has them.
    fn cpu_split(&self) -> (f64, f64) {
        self.rusage()
            .map_or(self.proc_cpu, |(user, system, _)| (user, system))
    }

    fn cpu(&self) -> f64 {
        let (user, system) = self.cpu_split();
        user + system
    }

    /// Peak RSS in bytes: getrusage's figure when summary.json has it.
    fn peak_rss(&self) -> u64 {
        self.rusage()
            .map_or(self.proc_peak_rss, |(_, _, peak)| peak)
    }

    fn rusage(&self) -> Option<(f64, f64, u64)> {
        let process = self.process.as_ref()?;
        Some((
            process["cpu_user_seconds"].as_f64()?,
            process["cpu_system_seconds"].as_f64()?,
            process["peak_rss_bytes"].as_u64()?,
        ))
    }
}

/// Runs `swerve run` on the bundled tasks with `extra` arguments (and `id` as the only task
/// when given) into `out`, sampling the process every 100 ms; checks that `rollouts`
/// rollouts ran and all submitted.
fn run_swerve(
    root: &Path,
    cache: &Path,
    server: &Server,
    out: &Path,
    extra: &[&str],
    id: Option<&str>,
    rollouts: usize,
) -> Run {
    server.take();
    let log_path = out.with_extension("log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_swerve"));
    command
        .args(["run", "--tasks", "examples/tasks/tasks.jsonl"])
        .args(["--model", "bench-model", "--base-url", &server.url])
        .args(["--max-steps", &CALLS.to_string()])
        .arg("--out")
        .arg(out)
        .args(extra)
        .args(id)
        .env("SWERVE_CACHE_DIR", cache)
        .env_remove("RUST_LOG")
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log);
    let ticks = clock_ticks();
    let machine_before = machine_ticks();
    let bench_before = proc_stat(std::process::id()).unwrap();
    let sampler_before = thread_cpu_ticks();
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let pid = child.id();
    let (mut peak_hwm, mut tree_rss, mut tree_anon, mut tree_processes) = (0, 0, 0, 0);
    let (mut helpers_rss, mut helpers_processes) = (0, 0);
    let final_stat = loop {
        let Some(stat) = proc_stat(pid) else {
            panic!("/proc/{pid}/stat vanished before swerve was reaped");
        };
        if stat.state == 'Z' {
            break stat;
        }
        peak_hwm = peak_hwm.max(status_kib(pid, "VmHWM:").unwrap_or(0) * 1024);
        let (sandboxes, helpers): (Vec<u32>, Vec<u32>) = children(pid)
            .into_iter()
            .partition(|&child| is_sandbox_launcher(child));
        let mut tree = sandboxes.clone();
        tree.extend(sandboxes.iter().flat_map(|&launcher| descendants(launcher)));
        let sum = |pids: &[u32]| {
            pids.iter()
                .filter_map(|&pid| resident(pid))
                .fold((0, 0), |(rss, anon), (r, a)| (rss + r, anon + a))
        };
        let (rss, anon) = sum(&tree);
        tree_rss = tree_rss.max(rss);
        tree_anon = tree_anon.max(anon);
        tree_processes = tree_processes.max(tree.len());
        let mut helper_tree = helpers.clone();
        helper_tree.extend(helpers.iter().flat_map(|&helper| descendants(helper)));
        helpers_rss = helpers_rss.max(sum(&helper_tree).0);
        helpers_processes = helpers_processes.max(helper_tree.len());
        std::thread::sleep(Duration::from_millis(100));
    };
    let wall = started.elapsed().as_secs_f64();
    let status = child.wait().unwrap();
    let machine_after = machine_ticks();
    let bench_after = proc_stat(std::process::id()).unwrap();
    let sampling_cpu = (thread_cpu_ticks() - sampler_before) as f64 / ticks;
    let log_text = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        status.success(),
        "swerve run {extra:?} failed ({status}):\n{log_text}"
    );
    let (requests, server_log) = server.take();

    let summary: Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["rollouts"].as_u64(),
        Some(rollouts as u64),
        "summary: {summary}"
    );
    let reasons = summary["exit_reasons"].as_object().unwrap();
    assert!(
        reasons.len() == 1 && reasons["submitted"].as_u64() == Some(rollouts as u64),
        "not every rollout submitted: {reasons:?}\n{log_text}"
    );
    assert_eq!(server_log.unexpected, 0, "calls beyond the script");
    assert_eq!(requests, rollouts * CALLS, "model requests");
    assert_eq!(server_log.sessions.len(), rollouts, "sessions");
    assert!(
        server_log
            .sessions
            .values()
            .all(|session| session.calls == CALLS),
        "every rollout makes {CALLS} calls"
    );

    let (mut steps, mut model_seconds, mut env_seconds) = (0, Vec::new(), Vec::new());
    let mut files = 0;
    for entry in std::fs::read_dir(out.join("trajectories")).unwrap() {
        let path = entry.unwrap().path();
        files += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let mut file_steps = 0;
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            if record["type"] != "step" {
                continue;
            }
            file_steps += 1;
            let timings = &record["timings"];
            model_seconds.push(timings["model_seconds"].as_f64().unwrap());
            if let Some(env) = timings["env_seconds"].as_f64() {
                env_seconds.push(env);
            }
        }
        assert_eq!(file_steps, CALLS, "{}", path.display());
        steps += file_steps;
    }
    assert_eq!(files, rollouts, "trajectory files");
    let process = summary.get("process").cloned();
    // This invocation's steps (`process.steps_run`), or the directory's (`steps`): the same
    // here, as every run has a fresh directory.
    let summary_steps = process
        .as_ref()
        .and_then(|process| process["steps_run"].as_u64())
        .or_else(|| summary["steps"].as_u64());
    if let Some(reported) = summary_steps {
        assert_eq!(reported, steps as u64, "summary.json steps vs trajectories");
    }
    if let Some(run) = process.as_ref().and_then(|p| p["rollouts_run"].as_u64()) {
        assert_eq!(run, rollouts as u64, "summary.json process.rollouts_run");
    }
    let since_start = |at: Instant| at.duration_since(started).as_secs_f64();
    let sessions = server_log.sessions.values();
    let busy = (machine_after.0 - machine_before.0) as f64;
    let all = (machine_after.1 - machine_before.1) as f64;
    Run {
        rollouts,
        wall,
        proc_cpu: (
            final_stat.utime as f64 / ticks,
            final_stat.stime as f64 / ticks,
        ),
        children_cpu: (final_stat.cutime + final_stat.cstime) as f64 / ticks,
        proc_peak_rss: peak_hwm,
        process,
        steps,
        summary_steps,
        tree_peak_rss: tree_rss,
        tree_peak_anon: tree_anon,
        tree_peak_processes: tree_processes,
        helpers_peak_rss: helpers_rss,
        helpers_peak_processes: helpers_processes,
        machine_busy: busy / all,
        machine_busy_seconds: busy / ticks,
        bench_cpu: ((bench_after.utime + bench_after.stime)
            - (bench_before.utime + bench_before.stime)) as f64
            / ticks,
        sampling_cpu,
        model_seconds,
        env_seconds,
        turnaround: server_log.turnaround,
        first_requests: sessions
            .clone()
            .map(|session| since_start(session.first_request))
            .collect(),
        last_answers: sessions
            .map(|session| since_start(session.last_answer.unwrap()))
            .collect(),
    }
}

/// `sysconf(_SC_CLK_TCK)`, the unit of `/proc/<pid>/stat` times.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Fields of `/proc/<pid>/stat`; times in clock ticks.
struct Stat {
    state: char,
    /// All threads of the process.
    utime: u64,
    stime: u64,
    /// Children it waited for (and, through them, theirs).
    cutime: u64,
    cstime: u64,
}

fn proc_stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let number = |index: usize| fields.get(index)?.parse().ok();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        utime: number(11)?,
        stime: number(12)?,
        cutime: number(13)?,
        cstime: number(14)?,
    })
}

/// User + system clock ticks of the calling thread.
fn thread_cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Busy and total clock ticks of all CPUs since boot, from `/proc/stat`.
fn machine_ticks() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap();
    let values: Vec<u64> = text
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|value| value.parse().unwrap())
        .collect();
    let total: u64 = values.iter().sum();
    // user nice system idle iowait irq softirq steal
    (total - values[3] - values[4], total)
}

/// A `kB` field of `/proc/<pid>/status`, in KiB.
fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|line| line.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resident and anonymous resident bytes of `pid` (`VmRSS` and `RssAnon` of its status,
/// read from the cheaper `/proc/<pid>/statm`: resident and resident-shared pages).
fn resident(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let mut pages = text
        .split_whitespace()
        .skip(1)
        .map(|value| value.parse::<u64>());
    let (resident, shared) = (pages.next()?.ok()?, pages.next()?.ok()?);
    Some((resident * 4096, resident.saturating_sub(shared) * 4096))
}

/// The children of `pid` (of all its threads), from `/proc/<pid>/task/<tid>/children`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Every descendant of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(parent) = queue.pop() {
        for child in children(parent) {
            found.push(child);
            queue.push(child);
        }
    }
    found
}

/// Whether a child of swerve starts a sandbox (the swerve binary run as the sandbox's
/// launcher, above its `swerve-init`), rather than being a host helper: `git`, or a fork of
/// a swerve thread that has not reached `exec` yet (it shares swerve's pages).
fn is_sandbox_launcher(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|comm| comm.trim_end() == "swerve" || comm.starts_with("swerve-"))
}

// ---------------------------------------------------------------------------------------
// The report.

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn report(many: &Run, one: &Run) {
    let ideal = COMMAND_STEPS as f64 * MODEL_DELAY.as_secs_f64();
    let floor = CALLS as f64 * MODEL_DELAY.as_secs_f64();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let mut row = |what: &str, figure: &dyn Fn(&Run) -> String| {
        rows.push((what.to_owned(), figure(many), figure(one)));
    };
    row("wall time, s (spawn to exit)", &|run| {
        format!("{:.2}", run.wall)
    });
    row("swerve's own `wall_seconds` (summary.json), s", &|run| {
        run.process
            .as_ref()
            .and_then(|process| process["wall_seconds"].as_f64())
            .map_or("—".into(), |seconds| format!("{seconds:.2}"))
    });
    row(
        &format!("**wall / ideal** ({COMMAND_STEPS} × 200 ms = {ideal:.1} s)"),
        &|run| format!("**{:.2}×**", run.wall / ideal),
    );
    row(
        &format!("wall / floor of this script ({CALLS} calls × 200 ms = {floor:.1} s)"),
        &|run| format!("{:.2}×", run.wall / floor),
    );
    let spread = |values: &[f64]| {
        format!(
            "{:.2} / {:.2} / {:.2}",
            percentile(values, 0.0),
            percentile(values, 0.5),
            percentile(values, 1.0)
        )
    };
    row(
        "a rollout's first model request, s after start: min / p50 / max",
        &|run| spread(&run.first_requests),
    );
    row(
        "a rollout's last answer, s after start: min / p50 / max",
        &|run| spread(&run.last_answers),
    );
    row(
        "a rollout's span (first request → last answer), s: min / p50 / max",
        &|run| {
            let spans: Vec<f64> = run
                .first_requests
                .iter()
                .zip(&run.last_answers)
                .map(|(first, last)| last - first)
                .collect();
            spread(&spans)
        },
    );
    let ms = |values: &[f64]| {
        format!(
            "{:.1} / {:.1} / {:.1}",
            1000.0 * mean(values),
            1000.0 * percentile(values, 0.5),
            1000.0 * percentile(values, 0.95)
        )
    };
    row(
        "model call as swerve timed it (`model_seconds`), ms: mean / p50 / p95",
        &|run| ms(&run.model_seconds),
    );
    row("tool call (`env_seconds`), ms: mean / p50 / p95", &|run| {
        ms(&run.env_seconds)
    });
    row(
        "answer sent → the rollout's next request read (server side), ms: mean / p50 / p95",
        &|run| ms(&run.turnaround),
    );
    row(
        &format!("steps recorded ({CALLS} per rollout, the finish call included)"),
        &|run| run.steps.to_string(),
    );
    row("swerve CPU, user + system, s", &|run| {
        let (user, system) = run.cpu_split();
        format!("{user:.2} + {system:.2} = {:.2}", user + system)
    });
    row("**swerve CPU per step, ms** (target < 1 ms)", &|run| {
        format!("**{:.3}**", 1000.0 * run.cpu() / run.steps as f64)
    });
    row(
        "CPU of swerve's child processes (sandbox inits, shells, git), s",
        &|run| format!("{:.2}", run.children_cpu),
    );
    row(
        "all CPU of the run (swerve + children) per step, ms",
        &|run| {
            format!(
                "{:.3}",
                1000.0 * (run.cpu() + run.children_cpu) / run.steps as f64
            )
        },
    );
    row(
        &format!("machine CPU busy during the run ({cpus} CPUs, every process), %"),
        &|run| format!("{:.0}", 100.0 * run.machine_busy),
    );
    row(
        "busy CPU not accounted to swerve, its children or this bench (kernel threads, other load), s",
        &|run| {
            let ours = run.proc_cpu.0 + run.proc_cpu.1 + run.children_cpu + run.bench_cpu;
            format!("{:.2}", run.machine_busy_seconds - ours)
        },
    );
    row(
        "this bench process's CPU (loopback server + `/proc` sampling), s",
        &|run| format!("{:.2} (sampling {:.2})", run.bench_cpu, run.sampling_cpu),
    );
    row("swerve peak RSS, MiB", &|run| {
        format!("{:.1}", mib(run.peak_rss()))
    });
    row(
        "sandbox processes: peak of summed resident (anonymous) memory, MiB",
        &|run| {
            format!(
                "{:.1} ({:.1})",
                mib(run.tree_peak_rss),
                mib(run.tree_peak_anon)
            )
        },
    );
    row("sandbox processes at once, at most (sampled)", &|run| {
        run.tree_peak_processes.to_string()
    });
    row(
        "host helpers (git, forks of swerve before exec): peak summed resident MiB / most at once",
        &|run| {
            format!(
                "{:.1} / {}",
                mib(run.helpers_peak_rss),
                run.helpers_peak_processes
            )
        },
    );

    println!(
        "| figure | {} rollouts ({TASKS} tasks × {}) | 1 rollout (anchor) |",
        many.rollouts,
        many.rollouts / TASKS
    );
    println!("|---|---|---|");
    for (what, a, b) in &rows {
        println!("| {what} | {a} | {b} |");
    }
    println!();
    let marginal_cpu = (many.cpu() - one.cpu()) / (many.steps - one.steps) as f64;
    println!(
        "- marginal swerve CPU per step ((CPU of the {} run − CPU of the 1 run) / (steps − steps)): {:.3} ms",
        many.rollouts,
        1000.0 * marginal_cpu
    );
    let per_rollout =
        many.peak_rss().saturating_sub(one.peak_rss()) as f64 / (many.rollouts - 1) as f64;
    println!(
        "- **swerve memory per active rollout** ((peak RSS {} − peak RSS 1) / {}): {:.0} KiB",
        many.rollouts,
        many.rollouts - 1,
        per_rollout / 1024.0
    );
    println!(
        "- **sandbox memory per rollout** (peak of summed resident memory / {}): {:.2} MiB ({:.2} MiB anonymous)",
        many.rollouts,
        mib(many.tree_peak_rss) / many.rollouts as f64,
        mib(many.tree_peak_anon) / many.rollouts as f64
    );
    let overhead: Vec<f64> = many
        .model_seconds
        .iter()
        .map(|seconds| seconds - MODEL_DELAY.as_secs_f64())
        .collect();
    println!(
        "- model call beyond the server's 200 ms ({} run): mean {:.1} ms, p95 {:.1} ms",
        many.rollouts,
        1000.0 * mean(&overhead),
        1000.0 * percentile(&overhead, 0.95)
    );
    let all_cpu = many.cpu() + many.children_cpu;
    println!(
        "- CPU-bound floor of the {} run (swerve + children CPU / {cpus} CPUs): {:.1} s",
        many.rollouts,
        all_cpu / cpus as f64
    );
    for run in [many, one] {
        let source = match (&run.process, run.summary_steps) {
            (Some(_), Some(_)) => "summary.json `process` (steps: `process.steps_run`)",
            (Some(_), None) => "summary.json `process`; steps counted in the trajectories",
            _ => "/proc (summary.json has no `process`); steps counted in the trajectories",
        };
        println!(
            "- {} rollout(s): swerve CPU and peak RSS from {source}; /proc cross-check: CPU {:.2} + {:.2} s, VmHWM {:.1} MiB",
            run.rollouts,
            run.proc_cpu.0,
            run.proc_cpu.1,
            mib(run.proc_peak_rss)
        );
    }
}
