//! `swerve._swerve`, the compiled half of the Python package `swerve`: a thin binding over
//! `swerve-rollout` (tasks, gym environments, graders), the same code the command line
//! runs. Values cross as JSON text, which `python/swerve/` turns into Python objects; the
//! Python half is the API users see (`swerve.Env`, `swerve.load_tasks`, `swerve.evaluate`).
//!
//! Every call releases the GIL while Rust works, so environments step in parallel from many
//! threads; an environment's calls take turns on its own lock. Errors become
//! `swerve.SwerveError` with the message the command line prints; a panic is caught at the
//! boundary and raised as one too.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use anyhow::{Context, Result};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;
use swerve_core::registry::Registry;
use swerve_core::{Task, ToolCall};
use swerve_rollout::config::{Config, Sources};
use swerve_rollout::gym::{Action, GymEnv, Reply};
use swerve_rollout::{grading, open};

create_exception!(
    _swerve,
    SwerveError,
    PyException,
    "An error of swerve: its message is the one the command line prints."
);

/// Runs `work` without the GIL, turning its error or panic into a `SwerveError`.
fn detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> Result<T> + Send) -> PyResult<T> {
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(work)));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(SwerveError::new_err(message(error.as_ref()))),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(SwerveError::new_err(format!(
                "internal error (please report it): {what}"
            )))
        }
    }
}

/// The error as the command line prints it, without its `error: ` prefix.
fn message(error: &(dyn std::error::Error + 'static)) -> String {
    let text = swerve_core::hint::report(error);
    text.strip_prefix("error: ").unwrap_or(&text).to_owned()
}

/// JSON text of `value`.
fn text(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(value).context("cannot write a value as JSON")
}

/// The runtime grading runs on: shared by the process, started on first use.
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("swerve-grading")
        .enable_all()
        .build()
        .context("cannot start the grading runtime")?;
    Ok(RUNTIME.get_or_init(|| built))
}

/// The configuration of `file` (else `./swerve.toml` when present), `presets` and
/// `sets` (`KEY=VALUE`), as `swerve --config FILE --preset P --set KEY=VALUE` resolves it.
fn config(file: Option<PathBuf>, presets: Vec<String>, sets: Vec<String>) -> Result<Config> {
    Ok(Config::resolve(&Sources {
        file,
        presets,
        options: Vec::new(),
        sets,
    })?
    .config)
}

/// `load_tasks(path)`: the tasks of a SWE-bench JSON or JSONL file, each as JSON text.
#[pyfunction]
fn load_tasks(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
    detached(py, || open::tasks(&path)?.iter().map(text).collect())
}

/// `read_trajectory(path)`: a swerve trajectory file as JSON text of `header`, `steps`,
/// `outcome` (null while it runs) and `partial_line` (a cut-off last line that was dropped).
#[pyfunction]
fn read_trajectory(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    detached(py, || {
        let read = swerve_core::trajectory::read_trajectory(&path)?;
        let trajectory = &read.trajectory;
        text(&serde_json::json!({
            "header": trajectory.header,
            "steps": trajectory.steps,
            "outcome": trajectory.outcome,
            "partial_line": read.partial_line.map(|line| line.line),
        }))
    })
}

/// `load_predictions(path)`: a SWE-bench predictions file (`.json` or `.jsonl`) as JSON text
/// of `{"patches": {instance_id: patch or null}, "errors": [record errors, skipped]}`.
#[pyfunction]
fn load_predictions(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    detached(py, || {
        let loaded = swerve_eval::predictions::load_predictions(&path)?;
        let patches: serde_json::Map<String, Value> = loaded
            .predictions
            .into_iter()
            .map(|prediction| (prediction.instance_id, prediction.model_patch.into()))
            .collect();
        let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
        text(&serde_json::json!({"patches": patches, "errors": errors}))
    })
}

/// `replay_turns(demo, config…)`: what the replay model (`--model replay`) answers for the
/// demonstration file `demo`: its tool calls written in the configured format.
#[pyfunction]
#[pyo3(signature = (demo, config_file=None, presets=Vec::new(), sets=Vec::new()))]
fn replay_turns(
    py: Python<'_>,
    demo: PathBuf,
    config_file: Option<PathBuf>,
    presets: Vec<String>,
    sets: Vec<String>,
) -> PyResult<Vec<String>> {
    detached(py, || {
        let config = config(config_file, presets, sets)?;
        swerve_rollout::models::replay_turns(config.format()?.as_ref(), &demo)
    })
}

/// `export(run, files, format, …)`: trainer rows of a run's trajectories (or of trajectory
/// files in any format `swerve traj convert` reads), as `swerve data export` makes them;
/// JSON text of `{"rows", "exported", "below_min_reward", "no_reward", "warnings"}`.
#[pyfunction]
#[pyo3(signature = (run, files, format, min_reward=None, max_response_len=None, tokenizer=None, chat_template=None, config_file=None, presets=Vec::new(), sets=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn export(
    py: Python<'_>,
    run: Option<PathBuf>,
    files: Vec<PathBuf>,
    format: String,
    min_reward: Option<f64>,
    max_response_len: Option<usize>,
    tokenizer: Option<PathBuf>,
    chat_template: Option<PathBuf>,
    config_file: Option<PathBuf>,
    presets: Vec<String>,
    sets: Vec<String>,
) -> PyResult<String> {
    use swerve_train::export::exporter::{Exporter, Format, Options};
    detached(py, || {
        let config = config(config_file, presets, sets)?;
        let format = Format::parse(&format)?;
        let model = tokenizer
            .map(|dir| swerve_train::agile::tokens::load_model(&dir, chat_template.as_deref()))
            .transpose()?;
        let mut exporter = Exporter::new(Options {
            format,
            reward: &config.reward,
            min_reward,
            max_response_len,
            retokenizer: model.as_ref(),
        })?;
        let files = swerve_rollout::run_dir::trajectory_files(run.as_deref(), &files)?;
        let mut rows = Vec::new();
        for loaded in swerve_core::trajectory::import::load_all(&files)? {
            rows.extend(exporter.rows(&loaded)?);
        }
        text(&serde_json::json!({
            "rows": rows,
            "exported": exporter.exported,
            "below_min_reward": exporter.below_min_reward,
            "no_reward": exporter.no_reward,
            "warnings": exporter.warnings,
        }))
    })
}

/// `resolve_config(file, presets, sets)`: the configuration as TOML (what `swerve config
/// show` prints).
#[pyfunction]
#[pyo3(signature = (file=None, presets=Vec::new(), sets=Vec::new()))]
fn resolve_config(
    py: Python<'_>,
    file: Option<PathBuf>,
    presets: Vec<String>,
    sets: Vec<String>,
) -> PyResult<String> {
    detached(py, || config(file, presets, sets)?.to_toml())
}

/// `evaluate(task_file, patches, config…, log_dir, workers)`: grades `patches` (JSON text of
/// `{instance_id: patch or null}`) of tasks in `task_file` as `swerve eval` does; JSON text
/// of `{instance_id: {"report", "reward"}}`.
#[pyfunction]
#[pyo3(signature = (task_file, patches, log_dir, workers=4, config_file=None, presets=Vec::new(), sets=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn evaluate(
    py: Python<'_>,
    task_file: PathBuf,
    patches: String,
    log_dir: PathBuf,
    workers: usize,
    config_file: Option<PathBuf>,
    presets: Vec<String>,
    sets: Vec<String>,
) -> PyResult<String> {
    detached(py, || {
        let config = config(config_file, presets, sets)?;
        let patches: serde_json::Map<String, Value> =
            serde_json::from_str(&patches).context("patches: not a JSON object")?;
        let ids: Vec<String> = patches.keys().cloned().collect();
        let tasks = open::selected_tasks(&task_file, &ids)?;
        let jobs: Vec<(Task, Option<String>)> = tasks
            .into_iter()
            .map(|task| {
                let patch = patches[&task.instance_id].as_str().map(str::to_owned);
                (task, patch)
            })
            .collect();
        let runtime = runtime()?;
        let grader = {
            let _entered = runtime.enter();
            grading::grader(
                &config,
                config.run.evaluator,
                &task_file,
                config.eval_settings(log_dir),
                &grading::analyses(&config)?,
            )?
        };
        let grades = runtime.block_on(grading::grade_all(grader, jobs, workers, |_, _| {}))?;
        let results: serde_json::Map<String, Value> = grades
            .into_iter()
            .map(|(task, grade)| {
                let report = serde_json::json!({
                    "report": grade.to_json(),
                    "reward": grading::reward_of(&grade),
                });
                (task.instance_id, report)
            })
            .collect();
        text(&results)
    })
}

/// A gym environment over one task; `swerve.Env` is the API over it.
#[pyclass(module = "swerve._swerve")]
struct NativeEnv {
    task: Task,
    task_file: PathBuf,
    config: Config,
    log_dir: PathBuf,
    env: Mutex<Option<GymEnv>>,
}

impl NativeEnv {
    /// Runs `work` on the open environment (an error when there is none).
    fn with_env<T>(&self, work: impl FnOnce(&mut GymEnv) -> Result<T>) -> Result<T> {
        let mut env = self.env.lock().unwrap_or_else(|e| e.into_inner());
        let env = env
            .as_mut()
            .context("the environment is not open: call reset() first (or it was closed)")?;
        work(env)
    }
}

#[pymethods]
impl NativeEnv {
    /// `NativeEnv(task_json, task_file, log_dir, config_file, presets, sets)`.
    #[new]
    #[pyo3(signature = (task, task_file, log_dir, config_file=None, presets=Vec::new(), sets=Vec::new()))]
    fn new(
        py: Python<'_>,
        task: String,
        task_file: PathBuf,
        log_dir: PathBuf,
        config_file: Option<PathBuf>,
        presets: Vec<String>,
        sets: Vec<String>,
    ) -> PyResult<Self> {
        let (task, config) = detached(py, || {
            let task: Task = serde_json::from_str(&task).context("task")?;
            let config = config(config_file, presets, sets)?;
            config.format()?;
            Ok((task, config))
        })?;
        Ok(Self {
            task,
            task_file,
            config,
            log_dir,
            env: Mutex::new(None),
        })
    }

    /// `reset(id)`: opens a fresh workspace (destroying the previous one); the opening as
    /// JSON text.
    fn reset(&self, py: Python<'_>, id: String) -> PyResult<String> {
        detached(py, || {
            let mut slot = self.env.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(previous) = slot.take() {
                previous.destroy()?;
            }
            // SWE-World's and SWE-Edit's tools call their models on the runtime.
            let _entered = runtime()?.enter();
            let env = GymEnv::open(id, self.config.clone(), &self.task_file, self.task.clone())?;
            let opening = text(env.opening())?;
            *slot = Some(env);
            Ok(opening)
        })
    }

    /// `step_call(name, arguments_json)`: runs a tool call; the step as JSON text.
    fn step_call(&self, py: Python<'_>, name: String, arguments: String) -> PyResult<String> {
        detached(py, || {
            let arguments =
                serde_json::from_str(&arguments).context("the tool call's arguments")?;
            self.with_env(|env| text(&env.step(Action::Call(ToolCall { name, arguments }))?))
        })
    }

    /// `step_reply(text, tool_calls_json, reasoning, response_ids, logprobs)`: takes a
    /// model's reply (read with the configured format) through the agent's step; the step as
    /// JSON text.
    #[pyo3(signature = (reply, tool_calls, reasoning=None, response_ids=None, logprobs=None))]
    fn step_reply(
        &self,
        py: Python<'_>,
        reply: String,
        tool_calls: String,
        reasoning: Option<String>,
        response_ids: Option<Vec<u32>>,
        logprobs: Option<Vec<f64>>,
    ) -> PyResult<String> {
        detached(py, || {
            let tool_calls: Vec<Value> =
                serde_json::from_str(&tool_calls).context("the reply's tool_calls")?;
            self.with_env(|env| {
                text(&env.step(Action::Reply(Reply {
                    text: reply,
                    tool_calls,
                    reasoning,
                    response_ids,
                    logprobs,
                }))?)
            })
        })
    }

    /// `is_done()`: whether the episode has ended.
    fn is_done(&self) -> bool {
        let env = self.env.lock().unwrap_or_else(|e| e.into_inner());
        env.as_ref().is_some_and(GymEnv::is_done)
    }

    /// `patch()`: the workspace's diff against the task's base commit.
    fn patch(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || self.with_env(|env| env.patch()))
    }

    /// `evaluate(trajectory)`: grades the current patch and shapes the reward by `[reward]`
    /// from the episode's record; JSON text of `id`, `instance_id`, `reward` (the shaped
    /// total; null when grading failed for the machinery's reason), `reward_terms`, `score`,
    /// `resolved`, `patch`, `report`, `exit_reason`, `steps`. With `trajectory`, the graded
    /// episode is written there as a swerve trajectory file (as `swerve run --eval` writes
    /// one).
    #[pyo3(signature = (trajectory=None))]
    fn evaluate(&self, py: Python<'_>, trajectory: Option<PathBuf>) -> PyResult<String> {
        detached(py, || {
            let evaluation = self.with_env(|env| env.evaluation())?;
            let runtime = runtime()?;
            let grader = {
                let _entered = runtime.enter();
                grading::grader(
                    &self.config,
                    self.config.run.evaluator,
                    &self.task_file,
                    self.config.eval_settings(self.log_dir.clone()),
                    &grading::analyses(&self.config)?,
                )?
            };
            let graded = runtime.block_on(
                runtime.spawn(async move { evaluation.grade(grader.as_ref()).await }),
            )??;
            if let Some(path) = trajectory {
                swerve_core::trajectory::write_trajectory(&path, &graded.trajectory)?;
            }
            text(&graded.result)
        })
    }

    /// `close()`: destroys the workspace (nothing when none is open).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || {
            let env = self.env.lock().unwrap_or_else(|e| e.into_inner()).take();
            match env {
                Some(env) => env.destroy(),
                None => Ok(()),
            }
        })
    }
}

/// `run(task_file, out, ids, redo, config…)`: runs the agent over the tasks of `task_file`
/// (those in `ids`, all when empty) into the run directory `out`, as `swerve run` does
/// (resuming what is there unless `redo`); JSON text of the run's `summary.json`.
#[pyfunction]
#[pyo3(signature = (task_file, out, ids=Vec::new(), redo=false, config_file=None, presets=Vec::new(), sets=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    task_file: PathBuf,
    out: PathBuf,
    ids: Vec<String>,
    redo: bool,
    config_file: Option<PathBuf>,
    presets: Vec<String>,
    sets: Vec<String>,
) -> PyResult<String> {
    detached(py, || {
        let config = config(config_file, presets, sets)?;
        let summary = swerve_rollout::run::run(
            &config,
            &task_file,
            &ids,
            &out,
            redo,
            std::sync::Arc::new(Unobserved),
        )?;
        text(&summary)
    })
}

/// A run's progress, unobserved: Python reads the summary and the run directory.
struct Unobserved;

impl swerve_rollout::batch::Observer<swerve_core::trajectory::Outcome> for Unobserved {
    fn started(&self, _name: &str) {}
    fn finished(&self, _name: &str, _result: &Result<swerve_core::trajectory::Outcome, String>) {}
}

/// `set_init_command(program, args)`: how sandbox inits start (see
/// `swerve_sandbox::set_init_command`); the package sets it on import to the interpreter
/// loading this module's file. False when it was set already.
#[pyfunction]
fn set_init_command(program: PathBuf, args: Vec<String>) -> bool {
    swerve_sandbox::set_init_command(program, args.into_iter().map(Into::into).collect())
}

/// The module `swerve._swerve`: its functions, and the names `export` and `run.evaluator`
/// take (`EXPORT_FORMATS`, `EVALUATORS`), from the Rust lists.
#[pymodule]
fn _swerve(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("SwerveError", module.py().get_type::<SwerveError>())?;
    let names = |names: Vec<&'static str>| PyTuple::new(module.py(), names);
    module.add(
        "EXPORT_FORMATS",
        names(swerve_train::export::exporter::Format::names())?,
    )?;
    module.add(
        "EVALUATORS",
        names(swerve_rollout::config::EvaluatorKind::names())?,
    )?;
    module.add_function(wrap_pyfunction!(load_tasks, module)?)?;
    module.add_function(wrap_pyfunction!(resolve_config, module)?)?;
    module.add_function(wrap_pyfunction!(read_trajectory, module)?)?;
    module.add_function(wrap_pyfunction!(load_predictions, module)?)?;
    module.add_function(wrap_pyfunction!(replay_turns, module)?)?;
    module.add_function(wrap_pyfunction!(export, module)?)?;
    module.add_function(wrap_pyfunction!(evaluate, module)?)?;
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add_function(wrap_pyfunction!(set_init_command, module)?)?;
    module.add_class::<NativeEnv>()?;
    Ok(())
}
