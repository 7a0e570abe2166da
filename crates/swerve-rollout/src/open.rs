//! Opening a task's environment: load the task file (or choose tasks from a Parquet file
//! or a hub dataset, [`chosen_task_file`]), find the task, resolve its repository, prepare
//! the base and the task's environment, and create a sandboxed workspace with the
//! environment layered in ([`environment`], the factory of `swerve_sandbox`'s
//! [`Environment`] seam).
//!
//! Every rollout (`swerve run`, `swerve serve` rollouts and environments, `swerve env
//! exec | tool`, replays, and with them SWE-World's recording and SWE-Edit's subagents,
//! which work in the rollout's workspace) opens its workspace here ([`workspace`]): in the
//! task's image, or over its base checkout with the environment
//! [`swerve_eval::prepare::TaskEnvironments`] prepares, the place grading prepares its own.
//! Either way the workspace is made by [`swerve_eval::workspaces::create`], the one
//! workspace factory, which grading uses too: the agent sees the interpreter, packages,
//! project install, `PATH`, variables and paths its patch is graded with.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swerve_core::Task;
use swerve_core::task::{TaskFileFormat, load_tasks, save_tasks};
use swerve_datasets::{HubSettings, Selection, TaskSource};
use swerve_eval::evaluate::EvalSettings;
use swerve_eval::prepare::{PreparedTask, TaskEnvironments};
use swerve_eval::workspaces::{self, Origin};
use swerve_image::IdMapping;
use swerve_sandbox::{Cache, Environment, ImageRoot, Workspace};
use swerve_tools::{Toolbox, WorkspaceFs};

use crate::config::Config;

/// Loads `file`, a task file or a Parquet file (errors name the file, record or row, and
/// field).
pub fn tasks(file: &Path) -> Result<Vec<Task>> {
    swerve_datasets::load_file(file).map_err(|error| anyhow::anyhow!("{error}"))
}

/// `--tasks` and the options that choose among its tasks, as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskChoice<'a> {
    /// A task file, a Parquet file, or `hf://ORG/NAME[@REVISION]`.
    pub tasks: &'a str,
    /// The split of a hub dataset.
    pub split: Option<&'a str>,
    /// The subset of a hub dataset.
    pub subset: Option<&'a str>,
    /// A regular expression the chosen ids match at their start.
    pub filter: Option<&'a str>,
    /// A seed to shuffle the tasks with.
    pub shuffle: Option<u64>,
    /// A Python slice of the tasks.
    pub slice: Option<&'a str>,
}

/// The task file a command with output directory `dir` works from: a local file taken
/// whole is itself; the tasks chosen from a hub dataset, or by `--filter`, `--shuffle` or
/// `--slice`, are written to `dir/tasks.jsonl`, which every later step (rollouts, workers,
/// grading) reads, and which records what the run ran. A rerun in `dir` that chooses other
/// tasks is refused rather than overwriting the record.
pub fn chosen_task_file(choice: &TaskChoice, dir: &Path) -> Result<PathBuf> {
    let source = TaskSource::parse(choice.tasks, choice.split, choice.subset)?;
    let selection = Selection::new(choice.filter, choice.shuffle, choice.slice)?;
    if let (Some(file), true) = (source.file(), selection.is_empty()) {
        return Ok(file.to_path_buf());
    }
    let tasks = selection.apply(source.load(&HubSettings::from_env())?);
    if tasks.is_empty() {
        bail!("{source}: no task is left after --filter and --slice");
    }
    let path = dir.join("tasks.jsonl");
    if path.exists() {
        let recorded = load_tasks(&path).map_err(|error| anyhow::anyhow!("{error}"))?;
        if recorded != tasks {
            bail!(
                "{} holds other tasks than {source} with these options give (an earlier run's); \
                 use another output directory, or delete the file to start over",
                path.display()
            );
        }
        return Ok(path);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    save_tasks(&path, &tasks, TaskFileFormat::JsonLines)?;
    // A notice for the person at the terminal (the command line prints it as a plain line):
    // which file now stands for the dataset in this run.
    tracing::info!(
        target: crate::models::NOTICE,
        "{} tasks from {source} written to {}",
        tasks.len(),
        path.display()
    );
    Ok(path)
}

/// The tasks of `file` whose ids are in `ids` (all of them when `ids` is empty); an error
/// when none is left.
pub fn selected_tasks(file: &Path, ids: &[String]) -> Result<Vec<Task>> {
    let tasks: Vec<Task> = tasks(file)?
        .into_iter()
        .filter(|task| ids.is_empty() || ids.contains(&task.instance_id))
        .collect();
    if tasks.is_empty() {
        bail!(
            "{}: no task with the given ids ({})",
            file.display(),
            ids.join(", ")
        );
    }
    Ok(tasks)
}

/// The task `id` of `file`, or an error listing close matches.
pub fn task(file: &Path, id: &str) -> Result<Task> {
    let tasks = tasks(file)?;
    if let Some(task) = tasks.iter().find(|task| task.instance_id == id) {
        return Ok(task.clone());
    }
    let close: Vec<&str> = tasks
        .iter()
        .map(|task| task.instance_id.as_str())
        .filter(|candidate| candidate.contains(id) || id.contains(*candidate))
        .take(5)
        .collect();
    if close.is_empty() {
        bail!(
            "{}: no task with instance_id \"{id}\" (the file has {} tasks; `swerve tasks list {}` shows them)",
            file.display(),
            tasks.len(),
            file.display()
        )
    }
    bail!(
        "{}: no task with instance_id \"{id}\"; did you mean: {}?",
        file.display(),
        close.join(", ")
    )
}

/// The image `task` runs in: the one its row names (`image`, `docker_image`,
/// `image_name`), else the one `images.naming` derives, rewrites applied later.
pub fn task_image(config: &Config, task: &Task) -> Option<String> {
    config.images.image_for(task.image(), &task.instance_id)
}

/// The unpacked root of `image` for this configuration's sandboxes: pulled (or imported
/// earlier) into the image store, each layer unpacked once.
pub fn image_root(config: &Config, image: &str) -> Result<ImageRoot> {
    let store = config.image_store()?;
    let record = match store.record(image)? {
        Some(record) => record,
        None => store.pull_blocking(image)?,
    };
    let ids = IdMapping::for_sandbox(&config.sandbox)?;
    Ok(store.root_for(&record, ids)?)
}

/// The images of tasks for grading (`swerve eval`, `swerve run --eval`): the same choice as
/// [`workspace`] makes.
pub struct TaskImages(pub Config);

impl swerve_eval::evaluate::ImageProvider for TaskImages {
    fn image_root(&self, task: &Task) -> Option<std::result::Result<ImageRoot, String>> {
        let image = task_image(&self.0, task)?;
        Some(image_root(&self.0, &image).map_err(|error| format!("{image}: {error:#}")))
    }
}

/// A fresh workspace of `task` (loaded from `task_file`) under `config`, in `cache`.
///
/// Where rollouts choose how a task's environment is made: in its image when it has one
/// ([`task_image`], as [`TaskImages`] chooses for grading), else over a cached base checkout
/// of its repository with the task's environment (built on first use, then cached) layered
/// in, as grading does; [`workspaces::create`] makes the workspace.
pub fn workspace(
    config: &Config,
    cache: &Cache,
    task_file: &Path,
    task: &Task,
) -> Result<Workspace> {
    if let Some(image) = task_image(config, task) {
        let root = image_root(config, &image)
            .with_context(|| format!("task {}: image {image}", task.instance_id))?;
        // A SWE-smith row starts from the image's code with its bug applied, as it is graded.
        let origin = Origin::Image {
            root: &root,
            starting_patch: swerve_eval::rule::starting_patch(task),
        };
        return workspaces::create(cache, origin, &config.workspace_options()).with_context(|| {
            format!(
                "task {}: creating its workspace in image {image}",
                task.instance_id
            )
        });
    }
    let prepared = prepare(config, cache, task_file, task)?;
    prepared
        .workspace(cache)
        .with_context(|| format!("task {}: creating its workspace", task.instance_id))
}

/// The base checkout, test spec and environment of `task` under `config`: what grading
/// prepares for it, with the sandbox settings of `config`.
pub fn prepare(
    config: &Config,
    cache: &Cache,
    task_file: &Path,
    task: &Task,
) -> Result<PreparedTask> {
    // The shipped table is parsed once per process, not once per rollout.
    static SHIPPED: std::sync::OnceLock<swerve_eval::spec::RecipeTable> =
        std::sync::OnceLock::new();
    let loaded;
    let recipes = match &config.run.recipes {
        None => SHIPPED.get_or_init(swerve_eval::spec::RecipeTable::shipped),
        Some(file) => {
            loaded = swerve_eval::spec::RecipeTable::shipped_with(Some(file))
                .map_err(|error| anyhow::anyhow!("{error}"))?;
            &loaded
        }
    };
    let repos = config.repo_map(task_file);
    let workspace = config.workspace_options();
    let defaults = EvalSettings::default();
    let prepared = TaskEnvironments {
        cache,
        repos: &repos,
        recipes,
        workspace: &workspace,
        network: defaults.environment_network,
        timeout: defaults.environment_timeout,
    }
    .prepare(task)
    .with_context(|| format!("task {}", task.instance_id))?;
    if let Some(seconds) = prepared.environment_seconds {
        tracing::info!(
            task = %task.instance_id,
            seconds,
            "environment ready"
        );
    }
    Ok(prepared)
}

/// A fresh environment of `task` (loaded from `task_file`) under `config`, in `cache`: the
/// one factory of the [`Environment`] seam, which today makes the [`workspace`] the task's
/// image or its base checkout gives.
pub fn environment(
    config: &Config,
    cache: &Cache,
    task_file: &Path,
    task: &Task,
) -> Result<Box<dyn Environment>> {
    let workspace = workspace(config, cache, task_file, task)?;
    tracing::info!(
        workspace = %workspace.host_root().display(),
        strategy = ?workspace.strategy(),
        "workspace ready"
    );
    Ok(Box::new(workspace))
}

/// The native tools over `environment`, with paths as the sandbox shows them.
pub fn toolbox(config: &Config, environment: &dyn Environment) -> Toolbox {
    let mount_point = config.sandbox.mount_point.to_string_lossy();
    let fs = WorkspaceFs::with_sandbox_root(environment.host_root(), &mount_point)
        .owned_by(environment.file_owner());
    Toolbox::new(fs, environment.shell(), config.tools.clone())
}
