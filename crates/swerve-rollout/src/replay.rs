//! Replaying recorded trajectories: each one re-executed in a fresh workspace of its task
//! (opened as a rollout opens it) through [`swerve_replay`], its replayed trajectory written
//! to `<out>/trajectories/<id>.jsonl` and, when asked, its patch graded by the tests.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use swerve_core::Task;
use swerve_core::trajectory::{ExitReason, Outcome, Trajectory, TrajectoryWriter};
use swerve_eval::grader::Grader;
use swerve_replay::{
    GradeComparison, Replayer, Scaffold, ScaffoldShell, Throughput, TrajectoryReport,
};
use swerve_tools::{Toolbox, WorkspaceFs};
use swerve_world::environment::record::Recorder;

use crate::config::{Config, EvaluatorKind};
use crate::{grading, open, world};

/// What every replay of a run shares: the configuration, the tasks, the sandbox cache, the
/// grader and SWE-World's recorder.
pub struct Replay<'a> {
    config: &'a Config,
    task_file: &'a Path,
    tasks: Vec<Task>,
    cache: swerve_sandbox::Cache,
    /// Grades replayed patches by running the tests (`--grade`).
    grader: Option<Arc<dyn Grader>>,
    recorder: Option<Arc<Recorder>>,
    runtime: tokio::runtime::Runtime,
    out: &'a Path,
}

impl<'a> Replay<'a> {
    /// Prepares the replays of tasks from `task_file` writing into `out` (whose
    /// `trajectories/` and `eval-logs/` must exist); with `grade`, replayed patches are graded
    /// by running the tests.
    pub fn open(
        config: &'a Config,
        task_file: &'a Path,
        grade: bool,
        out: &'a Path,
    ) -> Result<Self> {
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
            config,
            task_file,
            tasks: open::tasks(task_file)?,
            cache: config.cache()?,
            grader: match grade {
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
            out,
        })
    }

    /// Replays `trajectory`, writes the replayed trajectory and adds its time to
    /// `throughput`; a trajectory that cannot be replayed gets a report naming why.
    pub fn replay(&self, trajectory: &Trajectory, throughput: &mut Throughput) -> TrajectoryReport {
        let id = trajectory.header.id.replace('/', "__");
        let instance_id = &trajectory.header.instance_id;
        let task = self
            .tasks
            .iter()
            .find(|task| &task.instance_id == instance_id);
        let repo = task.map(|task| task.repo.clone()).unwrap_or_default();
        let failed = |scaffold: &str, error: String| {
            TrajectoryReport::failed(&id, instance_id, &repo, scaffold, error)
        };
        let Some(scaffold) = Scaffold::of(trajectory) else {
            return failed(
                "",
                "its format carries no environment actions to replay".into(),
            );
        };
        let Some(task) = task else {
            return failed(
                scaffold.name(),
                format!(
                    "no task \"{instance_id}\" in {}; give the task file holding it with --tasks",
                    self.task_file.display()
                ),
            );
        };
        match self.replay_in_workspace(trajectory, scaffold, task, &id, throughput) {
            Ok(report) => report,
            Err(error) => failed(scaffold.name(), swerve_core::hint::chain(error.as_ref())),
        }
    }

    fn replay_in_workspace(
        &self,
        trajectory: &Trajectory,
        scaffold: Scaffold,
        task: &Task,
        id: &str,
        throughput: &mut Throughput,
    ) -> Result<TrajectoryReport> {
        let config = self.config;
        let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
        let workspace = open::workspace(config, &self.cache, self.task_file, task)?;
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

        throughput.steps += report.agreement.replayed;
        throughput.replay_env_seconds += run.env_seconds;
        for step in &trajectory.steps {
            if let Some(seconds) = step.timings.env_seconds {
                throughput.recorded_steps += 1;
                *throughput.recorded_env_seconds.get_or_insert(0.0) += seconds;
            }
        }
        Ok(report)
    }
}
