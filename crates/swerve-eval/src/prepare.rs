//! The one place a task's environment is prepared, for the agent and for the grader alike.
//!
//! [`TaskEnvironments::prepare`] prepares the base checkout (cached), resolves the task's
//! [`TestSpec`] (task fields, recipe table, detection), builds or reuses the spec's cached
//! [`Environment`](crate::environment::Environment) and returns a [`PreparedTask`] whose
//! [`workspace_options`](PreparedTask::workspace_options) layer that environment in: the prefix
//! copy-on-write at [`ENV_MOUNT_POINT`](crate::environment::ENV_MOUNT_POINT), the install
//! step's repository layer, the interpreter's installation read-only, `PATH`
//! and the recipe's variables, and the recipe's network fixtures ([`Fixtures`]). Rollouts (`swerve run`, `swerve serve`, `swerve env`) and
//! [`Evaluator::evaluate`](crate::evaluate::Evaluator::evaluate) both create their
//! workspaces from these options ([`PreparedTask::workspace`], through the one workspace
//! factory [`workspaces::create`]), so an agent runs `python -m pytest` with the interpreter,
//! packages, project install, variables and paths its grade is computed with. A task with
//! no recipe (no environment fields and no table entry) gets the sandbox as configured.

use std::time::{Duration, Instant};

use swerve_core::Task;
use swerve_sandbox::{
    BaseCheckout, Cache, RepoMap, SandboxError, Submodules, Workspace, WorkspaceOptions,
};

use crate::environment::{Environment, EnvironmentError, EnvironmentRecipe, Environments};
use crate::fixtures::{Fixtures, StartError};
use crate::spec::{RecipeTable, SpecError, TestSpec, resolve_spec};
use crate::workspaces::{self, Origin};

/// Prepares tasks' environments into one cache, with one set of settings.
pub struct TaskEnvironments<'a> {
    /// The cache holding bases and environments.
    pub cache: &'a Cache,
    /// Where tasks' repositories come from.
    pub repos: &'a RepoMap,
    /// The recipe table (shipped, plus `--recipes` / `run.recipes` files).
    pub recipes: &'a RecipeTable,
    /// Workspace and sandbox settings the environment is layered onto.
    pub workspace: &'a WorkspaceOptions,
    /// Whether environment builds may use the network (package registries).
    pub network: bool,
    /// Time allowed for each environment build step.
    pub timeout: Duration,
}

/// A task's base checkout and test spec, before its environment is built.
#[derive(Debug, Clone)]
pub struct ResolvedTask {
    /// The verified, cached base checkout.
    pub base: BaseCheckout,
    /// How the task is tested, including its environment recipe.
    pub spec: TestSpec,
}

/// A task ready for workspaces: its base, spec, environment and the options that layer
/// the environment in.
#[derive(Debug, Clone)]
pub struct PreparedTask {
    /// The verified, cached base checkout.
    pub base: BaseCheckout,
    /// How the task is tested.
    pub spec: TestSpec,
    /// The cached environment, when the spec has a recipe.
    pub environment: Option<Environment>,
    /// The recipe's network fixtures (none without a recipe or `services`), already in
    /// [`workspace_options`](Self::workspace_options); started in each workspace.
    pub fixtures: Fixtures,
    /// Workspace options with the environment and the fixtures layered in.
    pub workspace_options: WorkspaceOptions,
    /// Seconds spent building or finding the environment and the fixtures (`None` without
    /// a recipe).
    pub environment_seconds: Option<f64>,
}

/// How long the network fixtures may take to start in a fresh workspace.
pub const FIXTURES_START_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a prepared task's workspace could not be made.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The workspace could not be created.
    #[error("{0}")]
    Create(#[source] SandboxError),
    /// Its network fixtures did not start.
    #[error("{0}")]
    Fixtures(#[source] StartError),
}

impl PreparedTask {
    /// A fresh workspace of the task with its environment (made by [`workspaces::create`])
    /// and its network fixtures started, as the agent works in it. Grading starts the
    /// fixtures itself, to log them and to tell their failure from the sandbox's.
    pub fn workspace(&self, cache: &Cache) -> Result<Workspace, WorkspaceError> {
        let workspace =
            workspaces::create(cache, Origin::Checkout(&self.base), &self.workspace_options)
                .map_err(WorkspaceError::Create)?;
        self.fixtures
            .start(workspace.shell().as_ref(), FIXTURES_START_TIMEOUT)
            .map_err(WorkspaceError::Fixtures)?;
        Ok(workspace)
    }
}

/// What `task`'s base checkout does with its submodules: its recipe entry's `submodules`
/// (checked out unless the entry says the dataset's images hold none), from the
/// repositories, or from their URLs when `network` allows.
pub fn submodules_for(recipes: &RecipeTable, task: &Task, network: bool) -> Submodules {
    match recipes.lookup(&task.repo, task.version.as_deref()) {
        Some(entry) if !entry.submodules => Submodules::Leave,
        _ => Submodules::CheckOut { network },
    }
}

/// Why a task could not be prepared; the message says which phase failed.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The base checkout could not be prepared.
    #[error("preparing the base checkout: {0}")]
    Base(#[source] SandboxError),
    /// The task's fields or the recipe table do not say how to test it.
    #[error("working out how to test the task: {0}")]
    Spec(#[source] SpecError),
    /// The environment could not be built.
    #[error("preparing the environment: {0}")]
    Environment(#[source] EnvironmentError),
    /// The recipe's network fixtures could not be built.
    #[error("preparing the network fixtures: {0}")]
    Fixtures(#[source] EnvironmentError),
}

impl TaskEnvironments<'_> {
    /// The base checkout and test spec of `task`.
    pub fn resolve(&self, task: &Task) -> Result<ResolvedTask, PrepareError> {
        let base = self
            .cache
            .prepare_task_base(
                self.repos,
                task,
                submodules_for(self.recipes, task, self.network),
            )
            .map_err(PrepareError::Base)?;
        let spec = resolve_spec(task, &base.path, self.recipes).map_err(PrepareError::Spec)?;
        Ok(ResolvedTask { base, spec })
    }

    /// Builds (or finds cached) the environment of a resolved task.
    pub fn environment(&self, resolved: ResolvedTask) -> Result<PreparedTask, PrepareError> {
        let ResolvedTask { base, spec } = resolved;
        let mut workspace_options = self.workspace.clone();
        let Some(recipe) = &spec.recipe else {
            return Ok(PreparedTask {
                base,
                spec,
                environment: None,
                fixtures: Fixtures::default(),
                workspace_options,
                environment_seconds: None,
            });
        };
        let started = Instant::now();
        let builds = Environments {
            cache: self.cache,
            template: self.workspace,
            network: self.network,
            timeout: self.timeout,
        };
        let environment = builds
            .prepare(&base, &EnvironmentRecipe::from(recipe))
            .map_err(PrepareError::Environment)?;
        environment.apply(&mut workspace_options);
        let fixtures = match recipe.services.is_empty() {
            true => Fixtures::default(),
            false => Fixtures::prepare(&builds, &base, &recipe.services, recipe.python.as_deref())
                .map_err(PrepareError::Fixtures)?,
        };
        fixtures.apply(&mut workspace_options);
        Ok(PreparedTask {
            base,
            spec,
            environment: Some(environment),
            fixtures,
            workspace_options,
            environment_seconds: Some(started.elapsed().as_secs_f64()),
        })
    }

    /// [`resolve`](Self::resolve), then [`environment`](Self::environment).
    pub fn prepare(&self, task: &Task) -> Result<PreparedTask, PrepareError> {
        self.environment(self.resolve(task)?)
    }
}
