//! Cached evaluation environments: a Python virtual environment (and whatever a recipe's
//! install step leaves in the repository) built once, then layered copy-on-write into every
//! evaluation sandbox.
//!
//! An environment is built in a sandbox over the task's base checkout, with
//! [`ENV_MOUNT_POINT`] mounted writable: create the venv with the wanted interpreter (found
//! under pyenv, with `uv python find`, or on `PATH`), run the recipe's pre-install commands,
//! `pip install` its packages, run its install command in the repository. The venv directory
//! and the repository changes are cached under `<cache>/envs/<key>/`; the key covers the
//! recipe and, when there is an install step, the base commit and [`BASE_FORMAT`] (an install
//! over a base without tags gave projects versioned from their tags a wrong version). Builds
//! may use the network (package registries) and honour the host's `PIP_*` / `UV_*` settings;
//! evaluation sandboxes do not get the network.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};
use swerve_sandbox::{
    BASE_FORMAT, BaseCheckout, Cache, ExtraLayer, LayerAccess, SandboxError, Strategy, Workspace,
    WorkspaceOptions,
};

/// Where the environment appears inside sandboxes.
pub const ENV_MOUNT_POINT: &str = "/swerve-env";

/// The layout of cached environments, part of every key: layers written before sandboxes
/// had their own user namespace keep overlay's markers in `trusted.*` attributes, which a
/// sandbox no longer reads, so they are rebuilt.
const LAYOUT: &str = "userns1";

/// What an environment is built from (taken from a test spec's recipe).
#[derive(Debug, Clone, Default)]
pub struct EnvironmentRecipe {
    /// A stable key for everything below.
    pub key: String,
    /// Python version wanted, e.g. `3.9`; `None` = the `python3` on `PATH`.
    pub python: Option<String>,
    /// Shell commands run in the repository before installing packages.
    pub pre_install: Vec<String>,
    /// pip requirement strings.
    pub packages: Vec<String>,
    /// Requirement files in the repository, installed with `pip install -r`.
    pub requirements: Vec<String>,
    /// Debian packages the environment needs on the host (checked, not installed: the
    /// sandbox's system directories are read-only).
    pub system_packages: Vec<String>,
    /// Extra arguments for `pip install` (e.g. `--no-index --find-links /wheels`).
    pub pip_args: Vec<String>,
    /// Run in the repository after the packages, e.g. `python -m pip install -e .`.
    pub install: Option<String>,
    /// Environment variables for the build and for the tests.
    pub env: BTreeMap<String, String>,
}

impl From<&crate::spec::Recipe> for EnvironmentRecipe {
    fn from(recipe: &crate::spec::Recipe) -> Self {
        EnvironmentRecipe {
            key: recipe.key(),
            python: recipe.python.clone(),
            pre_install: recipe.pre_install.clone(),
            packages: recipe.packages.clone(),
            requirements: recipe.requirements.clone(),
            system_packages: recipe.system_packages.clone(),
            pip_args: recipe.pip_args.clone(),
            install: recipe.install.clone(),
            env: recipe.env.clone(),
        }
    }
}

/// A built environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The virtual environment's directory (mounted at [`ENV_MOUNT_POINT`]).
    pub venv: PathBuf,
    /// What the install step changed in the repository (a repository layer).
    pub repository_layer: PathBuf,
    /// Variables the recipe sets.
    pub env: BTreeMap<String, String>,
}

/// Why an environment could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// The wanted interpreter is not installed.
    #[error(
        "Python {version} not found ({looked}); install it, e.g. `pyenv install {version}` or `uv python install {version}`"
    )]
    MissingInterpreter { version: String, looked: String },
    /// A build step failed.
    #[error("building the environment failed at `{step}` (exit {status}); full log: {log}\n{tail}")]
    BuildFailed {
        step: String,
        status: i32,
        log: PathBuf,
        tail: String,
    },
    /// System packages the recipe needs are not installed on the host.
    #[error(
        "the environment needs system packages that are not installed: {}; install them (e.g. `apt-get install {}`) and run again",
        missing.join(", "),
        missing.join(" ")
    )]
    MissingSystemPackages { missing: Vec<String> },
    /// The sandbox could not be set up.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

fn io_error(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnvironmentError {
    let context = context.into();
    move |source| EnvironmentError::Io { context, source }
}

impl Environment {
    /// Adds this environment to workspace options: the venv copy-on-write at
    /// [`ENV_MOUNT_POINT`], the repository layer, its interpreter's installation read-only,
    /// and `PATH` / `VIRTUAL_ENV` / recipe variables.
    pub fn apply(&self, options: &mut WorkspaceOptions) {
        if let Some(prefix) = venv_interpreter_prefix(&self.venv) {
            expose_interpreter(&mut options.sandbox, &prefix);
        }
        options.extra_layers.push(ExtraLayer {
            source: self.venv.clone(),
            mount_point: ENV_MOUNT_POINT.into(),
            access: LayerAccess::CopyOnWrite,
        });
        options
            .repository_layers
            .insert(0, self.repository_layer.clone());
        options.strategy = Strategy::Overlay;
        activate(&mut options.sandbox.env, &self.env);
    }
}

/// The installation directory of the interpreter a venv was made with: the parent of the
/// `home` its `pyvenv.cfg` names.
fn venv_interpreter_prefix(venv: &Path) -> Option<PathBuf> {
    let config = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    let home = config.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })?;
    home.parent().map(Path::to_path_buf)
}

/// Shows an interpreter's installation `prefix` read-only in the sandbox, unless it is in
/// the system directories every sandbox sees.
fn expose_interpreter(sandbox: &mut swerve_sandbox::SandboxConfig, prefix: &Path) {
    let system = ["/usr", "/bin", "/sbin", "/lib", "/lib64"];
    if prefix.is_absolute()
        && !system.iter().any(|dir| prefix.starts_with(dir))
        && !sandbox
            .expose
            .iter()
            .any(|exposure| prefix.starts_with(&exposure.path))
    {
        sandbox
            .expose
            .push(swerve_sandbox::Exposure::read_only(prefix));
    }
}

/// Sets `PATH` and `VIRTUAL_ENV` for the venv at [`ENV_MOUNT_POINT`], plus `extra`.
fn activate(env: &mut BTreeMap<String, String>, extra: &BTreeMap<String, String>) {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    env.insert("PATH".into(), format!("{ENV_MOUNT_POINT}/bin:{path}"));
    env.insert("VIRTUAL_ENV".into(), ENV_MOUNT_POINT.into());
    env.extend(
        extra
            .iter()
            .map(|(name, value)| (name.clone(), value.clone())),
    );
}

/// Builds environments into a cache with one set of sandbox settings.
pub struct Environments<'a> {
    /// The cache holding environments under `envs/`.
    pub cache: &'a Cache,
    /// Sandbox settings for the build (the venv layer is added to them).
    pub template: &'a WorkspaceOptions,
    /// Let builds reach package registries.
    pub network: bool,
    /// Time allowed for each build step.
    pub timeout: Duration,
}

impl Environments<'_> {
    /// Returns the cached environment for `recipe` over `base`, building it on first use.
    pub fn prepare(
        &self,
        base: &BaseCheckout,
        recipe: &EnvironmentRecipe,
    ) -> Result<Environment, EnvironmentError> {
        let cache = self.cache;
        // Steps that can change the repository make the environment specific to its commit,
        // and to what its base contains (an install reads the tags for the project's version).
        let changes_repository = recipe.install.is_some()
            || !recipe.pre_install.is_empty()
            || !recipe.requirements.is_empty();
        let key = if changes_repository {
            format!(
                "{}-{LAYOUT}-{}-b{BASE_FORMAT}",
                recipe.key,
                &base.commit[..12.min(base.commit.len())]
            )
        } else {
            format!("{}-{LAYOUT}", recipe.key)
        };
        let root = cache.root().join("envs");
        std::fs::create_dir_all(&root).map_err(io_error(format!("creating {}", root.display())))?;
        let dir = root.join(&key);
        let environment = Environment {
            venv: dir.join("venv"),
            repository_layer: dir.join("repository"),
            env: recipe.env.clone(),
        };
        let ready = root.join(format!("{key}.ready"));
        if ready.exists() {
            return Ok(environment);
        }
        let lock_path = root.join(format!("{key}.lock"));
        let lock = File::create(&lock_path)
            .map_err(io_error(format!("creating {}", lock_path.display())))?;
        let _lock = Flock::lock(lock, FlockArg::LockExclusive).map_err(|(_, errno)| {
            io_error(format!("locking {}", lock_path.display()))(errno.into())
        })?;
        if ready.exists() {
            return Ok(environment);
        }
        check_system_packages(&recipe.system_packages)?;
        let interpreter = find_interpreter(recipe.python.as_deref())?;
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&environment.venv)
            .map_err(io_error(format!("creating {}", environment.venv.display())))?;
        let log_path = root.join(format!("{key}.log"));
        let result = self.build(base, recipe, &interpreter, &environment, &log_path);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        result?;
        std::fs::write(&ready, &key).map_err(io_error(format!("writing {}", ready.display())))?;
        Ok(environment)
    }

    /// Creates the venv and runs the recipe's steps in a sandbox over `base`.
    fn build(
        &self,
        base: &BaseCheckout,
        recipe: &EnvironmentRecipe,
        interpreter: &Path,
        environment: &Environment,
        log_path: &Path,
    ) -> Result<(), EnvironmentError> {
        let Environments {
            cache,
            template,
            network,
            timeout,
        } = *self;
        let mut options = template.clone();
        options.strategy = Strategy::Overlay;
        options.sandbox.network = network;
        options.sandbox.pass_env.extend(
            std::env::vars()
                .map(|(name, _)| name)
                .filter(|name| name.starts_with("PIP_") || name.starts_with("UV_")),
        );
        options.extra_layers.push(ExtraLayer {
            source: environment.venv.clone(),
            mount_point: ENV_MOUNT_POINT.into(),
            access: LayerAccess::ReadWrite,
        });
        activate(&mut options.sandbox.env, &recipe.env);
        if let Some(prefix) = interpreter.parent().and_then(Path::parent) {
            expose_interpreter(&mut options.sandbox, prefix);
        }
        let workspace = Workspace::create(cache, base, &options)?;
        let shell = workspace.shell();
        let mut steps = vec![format!(
            "{} -m venv {ENV_MOUNT_POINT}",
            interpreter.display()
        )];
        steps.extend(recipe.pre_install.iter().cloned());
        if !recipe.packages.is_empty() {
            let quoted: Vec<String> = recipe
                .packages
                .iter()
                .chain(&recipe.pip_args)
                .map(|arg| shell_quote(arg))
                .collect();
            steps.push(format!("python -m pip install {}", quoted.join(" ")));
        }
        steps.extend(
            recipe
                .requirements
                .iter()
                .map(|file| format!("python -m pip install -r {}", shell_quote(file))),
        );
        steps.extend(recipe.install.iter().cloned());
        let mut log = String::new();
        for step in &steps {
            let outcome = shell
                .run(step, timeout)
                .map_err(io_error(format!("running `{step}`")))?;
            log.push_str(&format!(
                "$ {step}\n{}{}\n",
                outcome.stdout_text(),
                outcome.stderr_text()
            ));
            if !outcome.success() {
                let _ = std::fs::write(log_path, &log);
                let tail: Vec<&str> = log.lines().rev().take(15).collect();
                return Err(EnvironmentError::BuildFailed {
                    step: step.clone(),
                    status: outcome.shell_status(),
                    log: log_path.to_path_buf(),
                    tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
                });
            }
        }
        let _ = std::fs::write(log_path, &log);
        workspace.keep_changes(&environment.repository_layer)?;
        Ok(())
    }
}

/// Fails naming the packages of `packages` that `dpkg-query` does not report installed.
fn check_system_packages(packages: &[String]) -> Result<(), EnvironmentError> {
    let installed = |package: &String| {
        std::process::Command::new("dpkg-query")
            .args(["-W", "-f=${Status}", package])
            .output()
            .is_ok_and(|output| {
                String::from_utf8_lossy(&output.stdout).contains("install ok installed")
            })
    };
    let missing: Vec<String> = packages
        .iter()
        .filter(|package| !installed(package))
        .cloned()
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(EnvironmentError::MissingSystemPackages { missing })
    }
}

/// Quotes `text` for `/bin/sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Finds the interpreter for `version` (`3.9`, `3.11.7`): pyenv versions, then
/// `uv python find`, then `pythonX.Y` on `PATH`. `None` asks for `python3` on `PATH`.
pub fn find_interpreter(version: Option<&str>) -> Result<PathBuf, EnvironmentError> {
    let Some(version) = version else {
        return real_python("python3").ok_or_else(|| EnvironmentError::MissingInterpreter {
            version: "3".into(),
            looked: "no python3 on PATH".into(),
        });
    };
    let mut looked = Vec::new();
    let pyenv_root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")));
    if let Some(versions) = pyenv_root.map(|root| root.join("versions")) {
        let mut matching: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(&versions)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let matches = name == version || name.starts_with(&format!("{version}."));
                let parts: Option<Vec<u32>> =
                    name.split('.').map(|part| part.parse().ok()).collect();
                matches.then_some(())?;
                Some((parts?, entry.path().join("bin").join("python")))
            })
            .filter(|(_, python)| python.exists())
            .collect();
        matching.sort();
        if let Some((_, python)) = matching.pop() {
            return Ok(python);
        }
        looked.push(format!("no {version}.* under {}", versions.display()));
    }
    if let Ok(output) = std::process::Command::new("uv")
        .args(["python", "find", version])
        .output()
    {
        if output.status.success() {
            return Ok(PathBuf::from(
                String::from_utf8_lossy(&output.stdout).trim(),
            ));
        }
        looked.push(format!("`uv python find {version}` found none"));
    }
    let short: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
    if let Some(python) = real_python(&format!("python{short}")).filter(|python| {
        version_of(python)
            .is_some_and(|found| found == version || found.starts_with(&format!("{version}.")))
    }) {
        return Ok(python);
    }
    looked.push(format!("no python{short} on PATH"));
    Err(EnvironmentError::MissingInterpreter {
        version: version.into(),
        looked: looked.join(", "),
    })
}

/// The real executable behind `program` on `PATH` (resolving version-manager shims).
fn real_python(program: &str) -> Option<PathBuf> {
    python_prints(Path::new(program), "import sys; print(sys.executable)").map(PathBuf::from)
}

fn version_of(python: &Path) -> Option<String> {
    python_prints(python, "import platform; print(platform.python_version())")
}

/// What `python -c code` prints, trimmed; `None` if it cannot run or fails.
fn python_prints(python: &Path, code: &str) -> Option<String> {
    let output = std::process::Command::new(python)
        .args(["-c", code])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
