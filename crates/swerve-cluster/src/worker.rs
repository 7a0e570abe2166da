//! `swerve worker`: the process each Ray node's actor owns. It reads a [`Setup`] and then
//! [`Job`]s on stdin, runs the jobs at once as they come (the actor gives it no more than
//! the node's slots), each in a node-local scratch run directory, and answers each with a
//! [`Reply`] on stdout holding the files it wrote, which it then deletes.
//!
//! Before it answers the setup it checks what the node needs: the cache (node-local: the
//! node's `SWERVE_CACHE_DIR` or default cache directory, not the driver's) and, when
//! `sandbox.isolation = "namespaces"`, that sandboxes start; a node that fails either says
//! what to fix and gets no jobs.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use swerve_core::Task;
use swerve_eval::grader::Grader;
use swerve_rollout::config::Config;
use swerve_rollout::models::ModelSource;
use swerve_rollout::rollout::{Rollout, RunContext};
use swerve_rollout::{grading, open};
use swerve_sandbox::Isolation;
use tokio::io::AsyncBufReadExt;

use crate::protocol::{File, Job, Ready, Reply, Setup, Work};

/// Serves one driver on stdin and stdout until stdin closes. `node_cache` is the node's own
/// cache directory (from its environment or command line), used instead of the driver's.
pub fn serve(node_cache: Option<PathBuf>) -> Result<()> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .context("cannot read the setup on stdin")?;
    let output = Output::default();
    let worker = match Worker::new(&line, node_cache) {
        Ok(worker) => worker,
        Err(error) => {
            output.send(&Ready::Error(format!("{error:#}")));
            return Err(error);
        }
    };
    output.send(&Ready::Ready { host: hostname() });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let worker = Arc::new(worker);
    runtime.block_on(async {
        let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        while let Some(line) = lines.next_line().await? {
            let job: Job = match serde_json::from_str(&line) {
                Ok(job) => job,
                Err(error) => bail!("not a job: {error}: {line}"),
            };
            let (worker, output) = (worker.clone(), output.clone());
            tokio::spawn(async move { output.send(&worker.run(job).await) });
        }
        Ok(())
    })?;
    // stdin closed: the actor is gone or the run is over; jobs still running are abandoned
    // (the driver runs them again elsewhere).
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(())
}

/// stdout, one JSON line at a time.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<()>>);

impl Output {
    fn send(&self, message: &impl serde::Serialize) {
        let _guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = std::io::stdout().lock();
        let line = serde_json::to_string(message).expect("messages serialize");
        // A closed stdout means the actor is gone; the next read of stdin ends the worker.
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    }
}

/// What the jobs of a run share on this node.
struct Worker {
    tasks: BTreeMap<String, Task>,
    /// The node-local run directory jobs write into.
    scratch: tempfile::TempDir,
    /// `swerve run`'s rollouts: the model and what rollouts share.
    rollouts: Option<(ModelSource, RunContext)>,
    /// `swerve eval`'s grader.
    grader: Option<Arc<dyn Grader>>,
    /// The driver's run directory.
    out: PathBuf,
    /// The task file the node uses (the driver's, or the shipped copy in `scratch`).
    _task_file: PathBuf,
}

impl Worker {
    fn new(line: &str, node_cache: Option<PathBuf>) -> Result<Self> {
        let setup: Setup = serde_json::from_str(line).context("not a worker setup")?;
        let mut config: Config =
            toml::from_str(&setup.config).context("the setup's configuration")?;
        let scratch_root = config
            .cluster
            .scratch
            .take()
            .unwrap_or_else(std::env::temp_dir);
        // Trajectories record the configuration as the driver resolved it, so that they are
        // those of a local run; the cluster settings are the driver's business.
        config.cluster = Default::default();
        let recorded = serde_json::to_value(&config)?;
        if let Some(cache) = node_cache {
            config.cache_dir = Some(cache);
        }
        if setup.cwd.is_dir() {
            std::env::set_current_dir(&setup.cwd)
                .with_context(|| format!("cannot enter {}", setup.cwd.display()))?;
        }
        std::fs::create_dir_all(&scratch_root).with_context(|| {
            format!("cannot create {} (cluster.scratch)", scratch_root.display())
        })?;
        let scratch = tempfile::Builder::new()
            .prefix("swerve-worker-")
            .tempdir_in(&scratch_root)
            .with_context(|| {
                format!(
                    "cannot create a scratch directory in {} (cluster.scratch)",
                    scratch_root.display()
                )
            })?;
        for dir in ["trajectories", "logs", "eval-logs"] {
            std::fs::create_dir_all(scratch.path().join(dir))?;
        }
        check_sandbox(&config)?;
        let task_file = if setup.task_file.is_file() {
            setup.task_file.clone()
        } else {
            let copy = scratch.path().join("tasks.jsonl");
            std::fs::write(&copy, &setup.tasks)?;
            copy
        };
        let tasks: Vec<Task> = open::tasks(&task_file)?;
        let (rollouts, grader) = match &setup.grading {
            None => {
                let source = ModelSource::new(&config, &tasks)?;
                let mut context =
                    RunContext::new(&config, &task_file, scratch.path().join("eval-logs"))?;
                context.config_json = recorded;
                (Some((source, context)), None)
            }
            Some(grading) => {
                let mut settings = config.eval_settings(scratch.path().join("logs"));
                settings.use_cache = grading.use_cache;
                if let Some(seconds) = grading.test_timeout_secs {
                    settings.test_timeout = Duration::from_secs_f64(seconds);
                }
                let grader = grading::grader(
                    &config,
                    grading.evaluator,
                    &task_file,
                    settings,
                    &grading::analyses(&config)?,
                )?;
                (None, Some(grader))
            }
        };
        Ok(Self {
            tasks: tasks
                .into_iter()
                .map(|task| (task.instance_id.clone(), task))
                .collect(),
            scratch,
            out: setup.out.clone(),
            rollouts,
            grader,
            _task_file: task_file,
        })
    }

    /// Runs `job`; its reply holds its files (then deleted from the scratch directory).
    async fn run(&self, job: Job) -> Reply {
        let mut reply = Reply {
            id: job.id.clone(),
            ..Reply::default()
        };
        let result = match &job.work {
            Work::Rollout {
                instance_id,
                sample,
            } => {
                self.rollout(&job.id, instance_id, *sample, &mut reply)
                    .await
            }
            Work::Grade { instance_id, patch } => {
                self.grade(&job.id, instance_id, patch.as_deref(), &mut reply)
                    .await
            }
        };
        if let Err(error) = result {
            reply.error = Some(format!("{error:#}"));
        }
        reply
    }

    fn task(&self, instance_id: &str) -> Result<&Task> {
        self.tasks
            .get(instance_id)
            .with_context(|| format!("the task file has no task {instance_id}"))
    }

    async fn rollout(
        &self,
        id: &str,
        instance_id: &str,
        sample: usize,
        reply: &mut Reply,
    ) -> Result<()> {
        let Some((source, context)) = &self.rollouts else {
            bail!("this worker was set up for grading, not rollouts");
        };
        let task = self.task(instance_id)?;
        let rollout = Rollout::named(self.scratch.path(), task, sample, id.to_owned());
        let result = match source.for_task(task) {
            Ok(model) => rollout.run(context, model.as_ref()).await,
            Err(error) => Err(error),
        };
        let root = self.scratch.path();
        let from = root.display().to_string();
        let to = self.out.display().to_string();
        reply.files = take_files(
            root,
            &[
                format!("trajectories/{id}.jsonl"),
                format!("logs/{id}.log"),
                format!("eval-logs/{id}"),
            ],
            |relative| relative.to_owned(),
            (&from, &to),
        )?;
        let outcome = serde_json::to_string(&result?)?.replace(&from, &to);
        reply.outcome = Some(serde_json::from_str(&outcome)?);
        Ok(())
    }

    async fn grade(
        &self,
        id: &str,
        instance_id: &str,
        patch: Option<&str>,
        reply: &mut Reply,
    ) -> Result<()> {
        let Some(grader) = &self.grader else {
            bail!("this worker was set up for rollouts, not grading");
        };
        let task = self.task(instance_id)?;
        // Each grading logs under its own label; the driver keeps `logs/<instance_id>/`.
        let label = id.replace(['/', '\\'], "_");
        let mut grade = grader.grade(task, patch, Some(&label)).await;
        let prefix = format!("logs/{label}/");
        let from = self.scratch.path().join(&prefix).display().to_string();
        let to = self.out.join("logs").display().to_string() + "/";
        reply.files = take_files(
            self.scratch.path(),
            &[format!("logs/{label}")],
            |relative| {
                format!(
                    "logs/{}",
                    relative.strip_prefix(&prefix).unwrap_or(relative)
                )
            },
            (&from, &to),
        )?;
        if let Some(log) = &grade.report.log_path {
            let log = log.display().to_string().replace(&from, &to);
            grade.report.log_path = Some(log.into());
        }
        reply.grade = Some(grade.into());
        Ok(())
    }
}

/// Fails unless this node can run sandboxes as configured.
fn check_sandbox(config: &Config) -> Result<()> {
    let cache = config.cache()?;
    if config.sandbox.isolation != Isolation::Namespaces {
        return Ok(());
    }
    let found = swerve_sandbox::probe(&cache, &config.sandbox);
    if let Err(why) = found.namespaces {
        bail!(
            "sandboxes cannot start on this node ({why}); it needs unprivileged user \
             namespaces (sysctl user.max_user_namespaces > 0, and on Debian/Ubuntu \
             kernel.unprivileged_userns_clone = 1; in Kubernetes a pod that may create them), \
             or run it with sandbox.isolation = \"auto\" or \"none\" (no isolation)"
        );
    }
    Ok(())
}

/// The files at `paths` under `root` (a directory: every file in it), named in the reply
/// by `name(relative path)`, then removed from `root`; in their text, the path
/// `relocate.0` is replaced by `relocate.1` (the driver's run directory for the scratch one).
fn take_files(
    root: &Path,
    paths: &[String],
    name: impl Fn(&str) -> String,
    relocate: (&str, &str),
) -> Result<Vec<File>> {
    let mut found = Vec::new();
    for relative in paths {
        collect(root, relative, &mut found)?;
    }
    let mut files = Vec::new();
    for relative in &found {
        let mut file = File::read(root, relative)?;
        file.path = name(relative);
        if let Some(text) = &mut file.text
            && text.contains(relocate.0)
        {
            *text = text.replace(relocate.0, relocate.1);
        }
        files.push(file);
    }
    for relative in paths {
        let path = root.join(relative);
        let _ = match path.is_dir() {
            true => std::fs::remove_dir_all(&path),
            false => std::fs::remove_file(&path),
        };
    }
    Ok(files)
}

/// Appends the files at `relative` under `root` (recursively for a directory) to `found`.
fn collect(root: &Path, relative: &str, found: &mut Vec<String>) -> Result<()> {
    let path = root.join(relative);
    if path.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(&path)?
            .filter_map(|entry| Some(entry.ok()?.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        for name in names {
            collect(root, &format!("{relative}/{name}"), found)?;
        }
    } else if path.is_file() {
        found.push(relative.to_owned());
    }
    Ok(())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_files_are_taken_renamed_relocated_and_deleted() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        let label = root.join("logs/t#0/t");
        std::fs::create_dir_all(&label).unwrap();
        let log_path = label.join("test_output.txt");
        std::fs::write(&log_path, b"ran\n").unwrap();
        let report = format!("{{\"log_path\": \"{}\"}}", log_path.display());
        std::fs::write(label.join("report.json"), report).unwrap();
        std::fs::write(label.join("binary"), [0xff, 0xfe]).unwrap();
        let from = root.join("logs/t#0/").display().to_string();
        let files = take_files(
            root,
            &["logs/t#0".to_owned(), "logs/missing".to_owned()],
            |relative| format!("logs/{}", relative.strip_prefix("logs/t#0/").unwrap()),
            (&from, "/runs/r1/logs/"),
        )
        .unwrap();
        let names: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "logs/t/binary",
                "logs/t/report.json",
                "logs/t/test_output.txt"
            ]
        );
        assert_eq!(files[0].bytes.as_deref(), Some(&[0xff, 0xfe][..]));
        assert_eq!(
            files[1].text.as_deref(),
            Some(r#"{"log_path": "/runs/r1/logs/t/test_output.txt"}"#)
        );
        assert!(!root.join("logs/t#0").exists(), "taken files are deleted");
    }
}
