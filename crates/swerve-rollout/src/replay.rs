//! Replaying recorded trajectories at the scale of a dataset: each one re-executed in a fresh
//! workspace of its task (opened as a rollout opens it) through [`swerve_replay`], its replayed
//! trajectory written to `<out>/trajectories/<name>.jsonl` and its result to
//! `<out>/results/<name>.json` as it ends ([`swerve_replay::results`]) and, when asked, its
//! patch graded by the tests. [`ReplayRun::prepare`] reads the trajectories, lays out the
//! directory (refusing to resume with a setting changed that changes results, any but
//! [`NON_RESULT_KEYS`] and those of every command, or with another row of a replayed
//! trajectory's task) and lists those still to replay; a front end
//! replays them its own way, several at once ([`ReplayRun::replay_local`]), and
//! [`ReplayRun::finish`] writes the report over every trajectory, in the order given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use swerve_core::Task;
use swerve_core::atomic::{write_atomically, write_json_atomically};
use swerve_core::trajectory::import::detect_and_import;
use swerve_core::trajectory::{ExitReason, Outcome, Trajectory, TrajectoryWriter};
use swerve_eval::grader::Grader;
use swerve_replay::results::{self, RESULTS_DIR, TrajectoryResult};
use swerve_replay::{
    GradeComparison, ReplayReport, Replayer, Scaffold, ScaffoldShell, Throughput, TrajectoryReport,
};
use swerve_tools::{Toolbox, WorkspaceFs};
use swerve_world::environment::record::Recorder;

use crate::config::{Config, EvaluatorKind};
use crate::{grading, open, run_dir, world};

/// Settings a replay directory may resume with changed, besides those of every command
/// ([`crate::run_dir::OPERATIONAL_KEYS`], models' endpoints): a replay re-executes recorded
/// actions, so what chose them (the model, the agent's loop, its prompts and methods) does
/// not change what it produces. Any other setting (how actions run and what the patch is,
/// which workspace a task gets, grading), a section added later included, changes results.
pub const NON_RESULT_KEYS: &[&str] = &[
    // How many trajectories are replayed at once.
    "run.concurrency",
    // What chose the recorded actions: their replies are in the trajectories.
    "model",
    "agent",
    "prompts",
    "reward",
    "backfill",
    "edit",
    "run.samples",
    "run.demos",
    "run.format",
    "run.tokenizer",
];

/// One trajectory to replay, as read from the files given.
pub struct Job {
    /// The name of its files (`trajectories/<name>.jsonl`, `results/<name>.json`): its id
    /// with `/` written `__` (for a file that cannot be read, the file's path so written).
    pub name: String,
    /// The trajectory, or why its file cannot be read.
    trajectory: Result<Trajectory, String>,
}

/// The trajectories of `files`, in order; a file that cannot be read is one job that fails
/// with the reason, and two trajectories with the same id are an error.
fn plan(files: &[PathBuf]) -> Result<Vec<Job>> {
    let mut seen: BTreeMap<String, &Path> = BTreeMap::new();
    let mut jobs = Vec::new();
    for file in files {
        let trajectories = match detect_and_import(file) {
            Ok(trajectories) => trajectories,
            Err(error) => {
                jobs.push(Job {
                    name: results::file_name(&file.display().to_string()),
                    trajectory: Err(format!("cannot read {}: {error}", file.display())),
                });
                continue;
            }
        };
        for trajectory in trajectories {
            let name = results::file_name(&trajectory.header.id);
            if let Some(first) = seen.insert(name.clone(), file) {
                bail!(
                    "two trajectories would be written to {name}.jsonl: id {:?} in {} and in {}; \
                     replay them into different --out directories",
                    trajectory.header.id,
                    first.display(),
                    file.display()
                );
            }
            jobs.push(Job {
                name,
                trajectory: Ok(trajectory),
            });
        }
    }
    Ok(jobs)
}

/// A replay ready to go: what its trajectories share, every trajectory, and which of them
/// are still to replay.
pub struct ReplayRun {
    replay: Replay,
    /// Every trajectory given, replayed ones included, in the order given.
    pub jobs: Vec<Job>,
    /// The indices in [`ReplayRun::jobs`] to replay now: those without a result (or all,
    /// with `redo`).
    pub pending: Vec<usize>,
}

impl ReplayRun {
    /// The replay of the trajectories in `files` against the tasks of `task_file` into `out`
    /// under `config` (grading with `run.eval`), resuming what is there: a trajectory whose
    /// result is in `out` is not replayed again, unless `redo`. Refuses to resume with a
    /// changed setting other than [`NON_RESULT_KEYS`], or another row of a replayed
    /// trajectory's task.
    pub fn prepare(
        config: &Config,
        files: &[PathBuf],
        task_file: &Path,
        out: &Path,
        redo: bool,
    ) -> Result<Self> {
        if config.run.concurrency == 0 {
            bail!("run.concurrency (--concurrency) must be at least 1");
        }
        let jobs = plan(files)?;
        run_dir::prepare(
            out,
            &["trajectories", "eval-logs", RESULTS_DIR],
            config,
            redo,
            NON_RESULT_KEYS,
            "replay every trajectory again",
        )?;
        let replay = Replay::open(config, task_file, out)?;
        let mut pending = Vec::new();
        for (index, job) in jobs.iter().enumerate() {
            let (Some(result), Ok(trajectory), false) =
                (results::read(out, &job.name), &job.trajectory, redo)
            else {
                pending.push(index);
                continue;
            };
            let instance_id = &trajectory.header.instance_id;
            if replay.task_row(instance_id).as_ref() != Some(&result.task) {
                bail!(
                    "{}: trajectory {} was replayed against another row of task {instance_id:?} \
                     than {} holds; resuming would mix two set-ups in one directory\nhint: use a \
                     new --out, or --redo to replay every trajectory again with these tasks",
                    results::path(out, &job.name).display(),
                    trajectory.header.id,
                    task_file.display()
                );
            }
        }
        Ok(Self {
            replay,
            jobs,
            pending,
        })
    }

    /// Replays job `index` on this machine, in a blocking thread of the current tokio
    /// runtime, and keeps its result; returns its report (naming why, when it could not be
    /// replayed). `Err`: its result could not be written.
    pub async fn replay_local(self: Arc<Self>, index: usize) -> Result<TrajectoryReport, String> {
        tokio::task::spawn_blocking(move || self.replay(index))
            .await
            .unwrap_or_else(|panic| Err(format!("it panicked: {panic}")))
    }

    fn replay(&self, index: usize) -> Result<TrajectoryReport, String> {
        let job = &self.jobs[index];
        let out = &self.replay.out;
        let cannot = |what: &str, error: std::io::Error| {
            format!(
                "cannot {what} {}: {error}",
                results::path(out, &job.name).display()
            )
        };
        results::remove(out, &job.name).map_err(|error| cannot("remove", error))?;
        let trajectory = match &job.trajectory {
            Ok(trajectory) => trajectory,
            Err(error) => {
                return Ok(TrajectoryReport::failed(
                    &job.name,
                    "",
                    "",
                    "",
                    error.clone(),
                ));
            }
        };
        match self.replay.replay(trajectory) {
            Ok(result) => {
                results::write(out, &job.name, &result).map_err(|error| cannot("write", error))?;
                Ok(result.report)
            }
            Err(failed) => Ok(*failed),
        }
    }

    /// Writes `report.json`, `throughput.json` and `table.md` over every trajectory (the
    /// results in the directory, and for those that failed, this invocation's `outcomes`, one
    /// per [`ReplayRun::pending`] job in order) and returns the report.
    pub fn finish(&self, outcomes: &[Result<TrajectoryReport, String>]) -> Result<ReplayReport> {
        let mut reported: Vec<Option<TrajectoryReport>> = vec![None; self.jobs.len()];
        for (&index, outcome) in self.pending.iter().zip(outcomes) {
            let job = &self.jobs[index];
            reported[index] = Some(match outcome {
                Ok(report) => report.clone(),
                Err(error) => {
                    let instance_id = job
                        .trajectory
                        .as_ref()
                        .map_or("", |trajectory| trajectory.header.instance_id.as_str());
                    TrajectoryReport::failed(&job.name, instance_id, "", "", error.clone())
                }
            });
        }
        let out = &self.replay.out;
        let names = self.jobs.iter().map(|job| job.name.clone());
        let (report, throughput) = results::collect(out, names.zip(reported));
        let cannot = |path: PathBuf| move || format!("cannot write {}", path.display());
        write_json_atomically(&out.join("report.json"), &report)
            .with_context(cannot(out.join("report.json")))?;
        write_json_atomically(&out.join("throughput.json"), &throughput)
            .with_context(cannot(out.join("throughput.json")))?;
        let table = report.table();
        write_atomically(&out.join("table.md"), |file| {
            std::io::Write::write_all(file, table.as_bytes())
        })
        .with_context(cannot(out.join("table.md")))?;
        Ok(report)
    }
}

/// What every trajectory of a replay shares: the configuration, the tasks, the sandbox
/// cache, the grader and SWE-World's recorder.
struct Replay {
    config: Config,
    task_file: PathBuf,
    tasks: Vec<Task>,
    cache: swerve_sandbox::Cache,
    /// Grades replayed patches by running the tests (`run.eval`, `--grade`).
    grader: Option<Arc<dyn Grader>>,
    recorder: Option<Arc<Recorder>>,
    /// Runs the grader and the recorder; dropped with the [`ReplayRun`], outside any
    /// other runtime.
    runtime: tokio::runtime::Runtime,
    out: PathBuf,
}

impl Replay {
    /// Prepares the replays of tasks from `task_file` writing into `out` (whose
    /// `trajectories/` and `eval-logs/` must exist); with `run.eval`, replayed patches are
    /// graded by running the tests.
    fn open(config: &Config, task_file: &Path, out: &Path) -> Result<Self> {
        let eval_logs = out.join("eval-logs");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let analyses = grading::analyses(config)?;
        let recorder = {
            let _entered = runtime.enter();
            world::parts(config, task_file, &analyses)?.recorder
        };
        Ok(Self {
            config: config.clone(),
            task_file: task_file.to_path_buf(),
            tasks: open::tasks(task_file)?,
            cache: config.cache()?,
            grader: match config.run.eval {
                true => Some(grading::grader(
                    config,
                    EvaluatorKind::Tests,
                    task_file,
                    config.eval_settings(eval_logs),
                    &analyses,
                )?),
                false => None,
            },
            recorder,
            runtime,
            out: out.to_path_buf(),
        })
    }

    /// The task `instance_id`'s row in the task file, as a result records it (`None` when the
    /// file has none).
    fn task_row(&self, instance_id: &str) -> Option<String> {
        let task = self
            .tasks
            .iter()
            .find(|task| task.instance_id == instance_id)?;
        serde_json::to_string(task).ok()
    }

    /// Replays `trajectory` and writes the replayed trajectory; `Err`: a report naming why
    /// it cannot be replayed.
    fn replay(&self, trajectory: &Trajectory) -> Result<TrajectoryResult, Box<TrajectoryReport>> {
        let id = results::file_name(&trajectory.header.id);
        let instance_id = &trajectory.header.instance_id;
        let task = self
            .tasks
            .iter()
            .find(|task| &task.instance_id == instance_id);
        let repo = task.map(|task| task.repo.clone()).unwrap_or_default();
        let failed = |scaffold: &str, error: String| {
            Box::new(TrajectoryReport::failed(
                &id,
                instance_id,
                &repo,
                scaffold,
                error,
            ))
        };
        let Some(scaffold) = Scaffold::of(trajectory) else {
            return Err(failed(
                "",
                "its format carries no environment actions to replay".into(),
            ));
        };
        let Some(task) = task else {
            return Err(failed(
                scaffold.name(),
                format!(
                    "no task \"{instance_id}\" in {}; give the task file holding it with --tasks",
                    self.task_file.display()
                ),
            ));
        };
        self.replay_in_workspace(trajectory, scaffold, task, &id)
            .map_err(|error| failed(scaffold.name(), swerve_core::hint::chain(error.as_ref())))
    }

    fn replay_in_workspace(
        &self,
        trajectory: &Trajectory,
        scaffold: Scaffold,
        task: &Task,
        id: &str,
    ) -> Result<TrajectoryResult> {
        let config = &self.config;
        let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
        let workspace = open::workspace(config, &self.cache, &self.task_file, task)?;
        let semantics = scaffold.semantics(trajectory);
        let (shell, last) = ScaffoldShell::wrap(workspace.shell(), semantics.clone(), &mount_point);
        let fs = open::toolbox(config, &workspace).fs().clone();
        let tools = scaffold.tool_config(&config.tools, &semantics);
        let mut toolbox = match &self.recorder {
            Some(recorder) => {
                let _entered = self.runtime.enter();
                let base = WorkspaceFs::with_sandbox_root(&workspace.base().path, &mount_point);
                let (interceptor, shell) = recorder.for_rollout(id, task, base, shell)?;
                Toolbox::new(fs, shell, tools).with_interceptor(Box::new(interceptor))
            }
            None => Toolbox::new(fs, shell, tools),
        };
        let run = Replayer::new(scaffold, &semantics, &mut toolbox, &last, &mount_point)
            .replay(trajectory);
        let workspace_patch = workspace.patch(&config.patch)?.diff;
        workspace.destroy()?;
        let patch = run.submission.clone().unwrap_or(workspace_patch);

        let mut header = trajectory.header.clone();
        header.id = format!("replay/{}", trajectory.header.id);
        header
            .extra
            .insert("replayed_from".into(), trajectory.header.id.clone().into());
        let path = self.out.join("trajectories").join(format!("{id}.jsonl"));
        let mut writer = TrajectoryWriter::create(&path, &header)?;
        for step in &run.steps {
            writer.append_step(step)?;
        }
        let recorded_outcome = trajectory.outcome.as_ref();
        let mut outcome = Outcome::new(
            recorded_outcome.map_or(ExitReason::Error, |outcome| outcome.exit_reason),
            patch.clone(),
        );
        outcome.exit_detail = recorded_outcome.and_then(|outcome| outcome.exit_detail.clone());

        let submission = recorded_outcome.map(|outcome| outcome.patch.as_str());
        let mut report = TrajectoryReport::of(
            id,
            (&task.instance_id, &task.repo),
            &run,
            submission,
            &patch,
        );
        if let Some(grader) = &self.grader {
            let patch = Some(patch.as_str()).filter(|patch| !patch.is_empty());
            let grade = self.runtime.block_on(grader.grade(task, patch, Some(id)));
            let recorded_resolved = recorded_outcome
                .and_then(|outcome| outcome.eval_report.as_ref())
                .and_then(|report| report.get("resolved"))
                .and_then(serde_json::Value::as_bool);
            report.grade = Some(GradeComparison {
                replayed_resolved: grade.resolved(),
                recorded_resolved,
                agrees: recorded_resolved.map(|recorded| recorded == grade.resolved()),
                error: grade.report.error.clone(),
            });
            // No reward (neither 1 nor 0) when grading failed for the machinery's reason.
            outcome.reward = crate::grading::reward_of(&grade);
            outcome.eval_report = Some(grade.to_json());
            if let Some(recorder) = &self.recorder
                && let Err(error) = self.runtime.block_on(recorder.record_grade(
                    id,
                    task,
                    &outcome.patch,
                    &grade.report,
                ))
            {
                tracing::warn!("cannot record the SWR sample: {error:#}");
            }
        }
        writer.finish(&outcome)?;

        let mut throughput = Throughput {
            steps: report.agreement.replayed,
            replay_env_seconds: run.env_seconds,
            ..Throughput::default()
        };
        for step in &trajectory.steps {
            if let Some(seconds) = step.timings.env_seconds {
                throughput.recorded_steps += 1;
                *throughput.recorded_env_seconds.get_or_insert(0.0) += seconds;
            }
        }
        Ok(TrajectoryResult {
            task: serde_json::to_string(task)?,
            report,
            throughput,
        })
    }
}
