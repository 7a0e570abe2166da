//! The driver's side of a Ray run: [`Cluster::start`] runs the Ray driver script
//! ([`RAY_DRIVER`], `python/swerve/ray.py`) with `cluster.python`, which connects to the
//! cluster and starts a swerve worker on each node; [`Cluster::run`] hands it a job and
//! waits for the worker's reply. A job whose node dies is run again by the script; the
//! driver sees one reply per job.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use swerve_rollout::config::cluster::ClusterSection;
use tokio::sync::oneshot;

use crate::protocol::{FromRay, Job, Reply, Setup, ToRay};

/// The Ray driver script, run by `cluster.python`; also the `swerve.ray` module of the
/// Python package.
pub const RAY_DRIVER: &str = include_str!("../../../python/swerve/ray.py");

/// Replies awaited, by job id.
type Waiting = Arc<Mutex<HashMap<String, oneshot::Sender<Result<Reply, String>>>>>;

/// A connection to a Ray cluster whose nodes run swerve workers.
pub struct Cluster {
    child: Child,
    stdin: Mutex<Option<ChildStdin>>,
    waiting: Waiting,
    slots: usize,
    nodes: Vec<String>,
    /// Holds the script's file while it runs.
    _script: tempfile::TempDir,
}

impl Cluster {
    /// Connects to the cluster `settings.address` and starts a worker with `setup` on each
    /// node that can take one; fails with what to fix when none can.
    pub fn start(settings: &ClusterSection, setup: &Setup) -> Result<Self> {
        if settings.address.is_empty() {
            bail!(
                "cluster.backend is \"ray\" but no address is given: pass --ray ADDRESS \
                 (the head node's HOST:PORT, ray://HOST:10001 or auto) or set cluster.address"
            );
        }
        let swerve = match settings.swerve.as_str() {
            "" => std::env::current_exe()
                .context("cannot find this executable's path; set cluster.swerve")?
                .to_string_lossy()
                .into_owned(),
            given => given.to_owned(),
        };
        let script = tempfile::tempdir()?;
        // Not `ray.py`: the script's directory comes first on Python's path, and `import
        // ray` must find Ray.
        let path = script.path().join("swerve_ray_driver.py");
        std::fs::write(&path, RAY_DRIVER)?;
        let mut child = Command::new(&settings.python)
            .arg(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| {
                format!(
                    "cannot run {} (cluster.python): install Python with Ray (`pip install \
                     ray`) or point cluster.python at an interpreter that has it",
                    settings.python
                )
            })?;
        let mut stdin = child.stdin.take().context("the script's stdin")?;
        let stdout = child.stdout.take().context("the script's stdout")?;
        let start = ToRay::Start {
            address: &settings.address,
            swerve: &swerve,
            setup,
            cluster: settings,
        };
        writeln!(stdin, "{}", serde_json::to_string(&start)?)
            .and_then(|()| stdin.flush())
            .context("cannot talk to the Ray driver script")?;
        let waiting: Waiting = Arc::default();
        let (started, ready) = mpsc::channel();
        let shared = waiting.clone();
        std::thread::spawn(move || read_events(BufReader::new(stdout), started, shared));
        let limit = Duration::from_secs_f64(settings.start_timeout_secs.max(1.0) + 60.0);
        let (nodes, slots) = match ready.recv_timeout(limit) {
            Ok(Ok(ready)) => ready,
            Ok(Err(message)) => bail!("{message}"),
            Err(_) => {
                let _ = child.kill();
                bail!(
                    "the Ray cluster at {} did not start its workers within {:.0} s \
                     (cluster.start_timeout_secs); see the messages above",
                    settings.address,
                    limit.as_secs_f64()
                )
            }
        };
        Ok(Self {
            child,
            stdin: Mutex::new(Some(stdin)),
            waiting,
            slots,
            nodes,
            _script: script,
        })
    }

    /// Jobs at once across the cluster, as the workers started.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// How many jobs to hand the cluster at once: its slots, plus one waiting job per node
    /// so that a node that finishes a job starts the next without waiting for the driver.
    pub fn jobs_at_once(&self) -> usize {
        self.slots + self.nodes.len()
    }

    /// One line per node with a worker.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// Runs `job` on a node (one that ran jobs of the same `key` when it can) and returns
    /// the worker's reply, or why no worker could run it.
    pub async fn run(&self, job: &Job, key: &str) -> Result<Reply, String> {
        let (sender, receiver) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(job.id.clone(), sender);
        let line = serde_json::to_string(&ToRay::Job { job, key }).map_err(|e| e.to_string())?;
        {
            let mut stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
            let sent = match stdin.as_mut() {
                Some(stdin) => writeln!(stdin, "{line}").and_then(|()| stdin.flush()),
                None => Err(std::io::ErrorKind::BrokenPipe.into()),
            };
            if let Err(error) = sent {
                self.waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&job.id);
                return Err(format!("the Ray driver script is gone ({error})"));
            }
        }
        receiver
            .await
            .unwrap_or_else(|_| Err("the Ray driver script exited".into()))
    }
}

impl Drop for Cluster {
    /// Ends the script (closing its stdin stops the workers), killing it if it lingers.
    fn drop(&mut self) {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads the script's events until it exits: the start's outcome goes to `started`, each
/// reply to the job waiting for it.
fn read_events(
    stdout: impl BufRead,
    started: mpsc::Sender<Result<(Vec<String>, usize), String>>,
    waiting: Waiting,
) {
    let mut fatal = None;
    for line in stdout.lines() {
        let Ok(line) = line else { break };
        let event = match serde_json::from_str::<FromRay>(&line) {
            Ok(event) => event,
            Err(error) => {
                tracing::warn!("the Ray driver script said something unexpected ({error}): {line}");
                continue;
            }
        };
        let answer = |id: &str, result: Result<Reply, String>| {
            let sender = waiting.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
            if let Some(sender) = sender {
                let _ = sender.send(result);
            }
        };
        match event {
            FromRay::Ready { nodes, slots } => {
                let _ = started.send(Ok((nodes, slots)));
            }
            FromRay::Warning { message } => tracing::warn!("{message}"),
            FromRay::Requeued { id, reason } => {
                tracing::warn!("{id}: {reason}; running it again on another node")
            }
            FromRay::Done { reply } => answer(&reply.id.clone(), Ok(*reply)),
            FromRay::Failed { id, error } => answer(&id, Err(error)),
            FromRay::Fatal { message } => {
                let _ = started.send(Err(message.clone()));
                fatal = Some(message);
            }
        }
    }
    let why = fatal.unwrap_or_else(|| "the Ray driver script exited (see above)".into());
    let _ = started.send(Err(why.clone()));
    for (_, sender) in waiting.lock().unwrap_or_else(|e| e.into_inner()).drain() {
        let _ = sender.send(Err(why.clone()));
    }
}
