//! `swerve replay`: re-execute recorded trajectories in fresh workspaces of their tasks
//! (opened as `swerve run` opens them) through [`swerve_replay`], and write the replayed
//! trajectories and the fidelity report.
//!
//! Layout of `--out DIR`: `trajectories/<id>.jsonl` (the recorded replies with swerve's
//! observations), `report.json` ([`ReplayReport`]), `table.md` (its per-repository table),
//! `throughput.json` (replay time beside the recorded environment time) and, with
//! `--grade`, `eval-logs/`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use swerve_core::Task;
use swerve_core::atomic::{write_atomically, write_json_atomically};
use swerve_core::trajectory::import::detect_and_import;
use swerve_core::trajectory::{ExitReason, Outcome, Trajectory, TrajectoryWriter};
use swerve_replay::{
    GradeComparison, ReplayReport, Replayer, Scaffold, ScaffoldShell, Throughput, TrajectoryReport,
};
use swerve_tools::{Toolbox, WorkspaceFs};

use crate::cli::ReplayArgs;
use swerve_eval::grader::Grader;
use swerve_rollout::config::{Config, EvaluatorKind};
use swerve_rollout::{grading, open, world};
use swerve_world::environment::record::Recorder;

/// What every replay of the command shares.
struct Shared<'a> {
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

/// Runs `swerve replay`.
pub fn run(config: &Config, args: ReplayArgs) -> Result<ExitCode> {
    let mut trajectories = Vec::new();
    for file in &args.files {
        trajectories.extend(detect_and_import(file).map_err(|error| anyhow::anyhow!("{error}"))?);
    }
    for dir in ["trajectories", "eval-logs"] {
        let dir = args.out.join(dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let eval_logs = args.out.join("eval-logs");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let analyses = grading::analyses(config)?;
    let recorder = {
        let _entered = runtime.enter();
        world::parts(config, &args.tasks, &analyses)?.recorder
    };
    let shared = Shared {
        config,
        task_file: &args.tasks,
        tasks: open::tasks(&args.tasks)?,
        cache: config.cache()?,
        grader: match args.grade {
            true => Some(grading::grader(
                config,
                EvaluatorKind::Tests,
                &args.tasks,
                config.eval_settings(eval_logs),
                &analyses,
            )?),
            false => None,
        },
        recorder,
        runtime,
        out: &args.out,
    };
    let mut reports = Vec::new();
    let mut throughput = Throughput::default();
    for trajectory in &trajectories {
        let report = shared.replay(trajectory, &mut throughput);
        match &report.error {
            Some(error) => eprintln!("{}: not replayed: {error}", report.id),
            None => eprintln!(
                "{}: {} steps, {} agree, {} diverge, {} not replayable; patch {}",
                report.id,
                report.agreement.steps,
                report.agreement.agree,
                report.agreement.diverge,
                report.agreement.not_replayable,
                match &report.patch {
                    Some(patch) if patch.equal => "equal",
                    Some(_) => "differs",
                    None => "not recorded",
                }
            ),
        }
        reports.push(report);
    }
    let report = ReplayReport::of(reports);
    let write = |name: &str, text: &str| {
        let path = args.out.join(name);
        write_atomically(&path, |file| {
            std::io::Write::write_all(file, text.as_bytes())
        })
        .with_context(|| format!("cannot write {}", path.display()))
    };
    write_json_atomically(&args.out.join("report.json"), &report)
        .with_context(|| format!("cannot write {}", args.out.join("report.json").display()))?;
    write_json_atomically(&args.out.join("throughput.json"), &throughput).with_context(|| {
        format!(
            "cannot write {}",
            args.out.join("throughput.json").display()
        )
    })?;
    let table = report.table();
    write("table.md", &table)?;
    print!("{table}");
    Ok(match report.total.failed {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

impl Shared<'_> {
    /// Replays `trajectory`; a trajectory that cannot be replayed gets a report naming why.
    fn replay(&self, trajectory: &Trajectory, throughput: &mut Throughput) -> TrajectoryReport {
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
            Err(error) => failed(scaffold.name(), format!("{error:#}")),
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
            outcome.reward = Some(grade.score.unwrap_or(0.0));
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
