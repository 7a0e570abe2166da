//! Cached evaluation environments: a Python prefix per (repository, version, recipe), and per
//! commit a thin layer with what the project install changed, both layered copy-on-write into
//! every workspace of the task (rollouts and grading alike, through [`crate::prepare`]).
//!
//! The prefix is a real installation, as the conda environments of SWE-bench's images are,
//! not a virtual environment: the interpreter's installation is copied to
//! [`ENV_MOUNT_POINT`] (without the host's site-packages) and the packages go into its own
//! site-packages, so an interpreter reached through a symlink to `/swerve-env/bin/python`
//! (tox-current-env's `.tox/py39/bin/python`), or a `virtualenv --system-site-packages` made
//! from it, still finds them (a venv's interpreter started through a symlink does not find
//! its `pyvenv.cfg`). Only a system interpreter (under `/usr`), which cannot be copied on its
//! own, still gets a venv.
//!
//! An environment is built in two stages, each in a sandbox over the task's base checkout
//! with the network on (package registries) and the host's `PIP_*` / `UV_*` settings:
//!
//! 1. **Dependencies**, cached under `<cache>/envs/deps-<key>/prefix` and shared by every
//!    commit: lay out the prefix from the wanted interpreter (found under pyenv, with `uv
//!    python find`, or on `PATH`; [`lay_out_prefix`]); install `setuptools` and `wheel` unless the recipe names them or
//!    the build has no index to fetch them from (conda's Python, which SWE-bench's images
//!    use, has both); then the recipe's packages and each of its requirement files that
//!    exists. Packages go in with `uv pip` where uv can be installed from PyPI into the build
//!    (Python 3.8 or later, the network on, no `--no-index`), with pip otherwise and for any
//!    step uv fails; `SWERVE_ENV_INSTALLER=pip` forces pip. A recipe's conda environment
//!    file (the first of `environment_files` in the checkout) is converted to pip
//!    requirements ([`crate::conda`]) and installed before the packages, with them, so the
//!    resolution fits their pins; `exclude_newer` is passed to uv (and bounds the install
//!    step, below). The key covers the
//!    recipe's fields but `pre_install` and `install`, the requirement files' contents, the
//!    environment file's content and conversion, the installer and the cache layout.
//! 2. **The commit layer**, when the recipe has `pre_install` or `install` steps: they run
//!    with the dependencies' prefix copy-on-write at [`ENV_MOUNT_POINT`]; between them the
//!    wheels of the project's `[build-system] requires` are downloaded into [`BUILD_WHEELS`]
//!    (not installed: the tested packages stay as the recipe pins them), where
//!    [`Environment::apply`] points pip, so the eval script's offline re-install builds.
//!    With `exclude_newer`, the install step runs under `PIP_CONSTRAINT`: the project's
//!    requirements resolved by uv as of that date ([`DATED_RESOLUTION`]), so an unpinned
//!    `pip install -e .[test]` does not take releases newer than the recipe's date.
//!    What the steps changed in the prefix (an editable install's `.pth` and metadata, entry
//!    points) and in the repository (egg-info, in-place builds) is kept under
//!    `<cache>/envs/<key>/` as two layers stacked over the prefix and the base. The key covers
//!    the whole recipe, the base commit and [`BASE_FORMAT`] (an install reads the base's
//!    tags for the project's version). Rollouts and evaluations of a commit reuse its layer.
//!
//! Evaluation sandboxes do not get the network.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::fcntl::{Flock, FlockArg};
use swerve_sandbox::{
    BASE_FORMAT, BaseCheckout, Cache, ExtraLayer, LayerAccess, SandboxError, Strategy, Userland,
    WorkspaceOptions,
};

use crate::conda::{self, Converted, EnvironmentFileError};
use crate::workspaces::{self, Origin};

/// Where the environment appears inside sandboxes.
pub const ENV_MOUNT_POINT: &str = "/swerve-env";

/// The layout of cached environments, part of every key: layers written before sandboxes
/// had their own user namespace keep overlay's markers in `trusted.*` attributes, which a
/// sandbox no longer reads, environments built before the dependencies were shared between
/// commits are laid out differently, and venvs are not prefixes, so all are rebuilt.
const LAYOUT: &str = "userns1-deps3-prefix1";

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
    /// Conda environment files in the repository; the first that exists is converted to pip
    /// requirements ([`crate::conda`]) and installed before `packages`.
    pub environment_files: Vec<String>,
    /// Resolve as of this date (uv's `--exclude-newer`).
    pub exclude_newer: Option<String>,
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

impl EnvironmentRecipe {
    /// Whether the recipe installs from its own wheel directory only (`--no-index`): no
    /// package index to fetch uv or a dated resolution from.
    fn offline_index(&self) -> bool {
        self.pip_args.iter().any(|arg| arg == "--no-index")
    }
}

impl From<&crate::spec::Recipe> for EnvironmentRecipe {
    fn from(recipe: &crate::spec::Recipe) -> Self {
        EnvironmentRecipe {
            key: recipe.key(),
            python: recipe.python.clone(),
            pre_install: recipe.pre_install.clone(),
            packages: recipe.packages.clone(),
            requirements: recipe.requirements.clone(),
            environment_files: recipe.environment_files.clone(),
            exclude_newer: recipe.exclude_newer.clone(),
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
    /// The dependencies' prefix (mounted at [`ENV_MOUNT_POINT`]), shared by every commit
    /// built with the same recipe.
    pub prefix: PathBuf,
    /// What the commit's install steps changed in the prefix, stacked over it; `None`
    /// without such steps.
    pub prefix_layer: Option<PathBuf>,
    /// The host installation of the interpreter the prefix was made from, shown read-only:
    /// the copied interpreter loads its shared library from there (its `RUNPATH` names it),
    /// a venv's interpreter runs from there.
    pub installation: PathBuf,
    /// What the install steps changed in the repository (a repository layer; empty without
    /// such steps).
    pub repository_layer: PathBuf,
    /// Variables the recipe sets.
    pub env: BTreeMap<String, String>,
}

/// Which tool installs the dependencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installer {
    /// `uv pip`, when uv can be installed into the build; pip otherwise.
    Auto,
    /// pip only.
    Pip,
}

impl Installer {
    /// From `SWERVE_ENV_INSTALLER` (`pip` forces pip; anything else, or nothing, is auto).
    pub fn from_env() -> Installer {
        match std::env::var("SWERVE_ENV_INSTALLER").as_deref() {
            Ok("pip") => Installer::Pip,
            _ => Installer::Auto,
        }
    }
}

/// Why an environment could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// The wanted interpreter is not installed.
    #[error(
        "Python {version} not found ({looked})\nhint: install it, e.g. `pyenv install {version}` or `uv python install {version}`"
    )]
    MissingInterpreter {
        /// The Python version the recipe asks for, e.g. `3.9`.
        version: String,
        /// Where swerve looked, for the message.
        looked: String,
    },
    /// A build step failed.
    #[error("building the environment failed at `{step}` (exit {status}); full log: {log}\n{tail}")]
    BuildFailed {
        /// The command that failed.
        step: String,
        /// Its exit status, as the shell reports it.
        status: i32,
        /// The build log on the host, with every step's output.
        log: PathBuf,
        /// The log's last lines.
        tail: String,
    },
    /// System packages the recipe needs are not installed in the sandbox's userland (the
    /// host's, or the base root's).
    #[error(
        "the environment needs system packages that are not installed: {}\nhint: {fix}",
        missing.join(", ")
    )]
    MissingSystemPackages {
        /// The Debian package names that are missing.
        missing: Vec<String>,
        /// How to install them.
        fix: String,
    },
    /// The recipe's conda environment file could not be read as one.
    #[error("reading the conda environment file: {0}")]
    EnvironmentFile(#[from] EnvironmentFileError),
    /// The sandbox could not be set up.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. ``running `pip install -e .` ``.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

fn io_error(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnvironmentError {
    let context = context.into();
    move |source| EnvironmentError::Io { context, source }
}

impl Environment {
    /// Adds this environment to workspace options: the prefix (with the commit's layer over
    /// it) copy-on-write at [`ENV_MOUNT_POINT`], the repository layer, its interpreter's
    /// installation read-only, and `PATH` (`VIRTUAL_ENV` too for a venv) and the recipe's
    /// variables; with a
    /// commit layer, `PIP_FIND_LINKS` at its build requirements' wheels ([`BUILD_WHEELS`])
    /// and, in a sandbox without network, `PIP_NO_INDEX=1`, so `pip install -e .` (the eval
    /// script's re-install, an agent's) builds offline.
    pub fn apply(&self, options: &mut WorkspaceOptions) {
        expose_interpreter(&mut options.sandbox, &self.installation);
        options.extra_layers.push(ExtraLayer {
            source: self.prefix.clone(),
            mount_point: ENV_MOUNT_POINT.into(),
            access: LayerAccess::CopyOnWrite,
            layers: self.prefix_layer.iter().cloned().collect(),
        });
        options
            .repository_layers
            .insert(0, self.repository_layer.clone());
        options.strategy = Strategy::Overlay;
        activate(&mut options.sandbox.env, &self.env);
        if self.prefix.join("pyvenv.cfg").exists() {
            options
                .sandbox
                .env
                .insert("VIRTUAL_ENV".into(), ENV_MOUNT_POINT.into());
        }
        if self.prefix_layer.is_some() {
            options
                .sandbox
                .env
                .insert("PIP_FIND_LINKS".into(), BUILD_WHEELS.into());
            if !options.sandbox.network {
                // Without network an index only costs pip's retries.
                options
                    .sandbox
                    .env
                    .insert("PIP_NO_INDEX".into(), "1".into());
            }
        }
    }
}

/// Shows an interpreter's installation `prefix` read-only in the sandbox, unless it is in
/// the system directories every sandbox sees.
pub(crate) fn expose_interpreter(sandbox: &mut swerve_sandbox::SandboxConfig, prefix: &Path) {
    if prefix.is_absolute()
        && !swerve_sandbox::is_system_path(prefix)
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

/// Puts the environment at [`ENV_MOUNT_POINT`] first on `PATH`, and sets `extra`.
fn activate(env: &mut BTreeMap<String, String>, extra: &BTreeMap<String, String>) {
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    env.insert("PATH".into(), format!("{ENV_MOUNT_POINT}/bin:{path}"));
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
    /// Sandbox settings for the build (the prefix's layer is added to them).
    pub template: &'a WorkspaceOptions,
    /// Let builds reach package registries.
    pub network: bool,
    /// Time allowed for each build step.
    pub timeout: Duration,
}

impl Environments<'_> {
    /// Returns the cached environment for `recipe` over `base`, building what is missing
    /// on first use: the dependencies (shared by commits), then the commit's layer.
    pub fn prepare(
        &self,
        base: &BaseCheckout,
        recipe: &EnvironmentRecipe,
    ) -> Result<Environment, EnvironmentError> {
        let root = self.cache.root().join("envs");
        std::fs::create_dir_all(&root).map_err(io_error(format!("creating {}", root.display())))?;
        let installer = Installer::from_env();
        let requirements = existing_requirements(base, &recipe.requirements);
        // The first environment file that exists, with its content (part of the key).
        let environment_file = existing_requirements(base, &recipe.environment_files)
            .into_iter()
            .next();
        let converted = environment_file
            .as_ref()
            .map(|(file, text)| conda::convert(text, file).map(|converted| (file, converted)))
            .transpose()?;
        let environment_key = environment_file
            .as_ref()
            .zip(converted.as_ref())
            .map(|((file, text), (_, converted))| (file.as_str(), text.as_str(), converted));
        let userland = self.userland_tag();
        let deps_hash = dependencies_key(recipe, &requirements, environment_key, installer);
        let deps_key = format!("deps-{}-{LAYOUT}{userland}", &deps_hash[..16]);
        // With an environment file the commit layer also names the dependencies it was built
        // over: a new conversion rule rebuilds them for the same recipe and commit.
        let over = match environment_key {
            Some(_) => format!("-d{}", &deps_hash[..8]),
            None => String::new(),
        };
        let deps_dir = root.join(&deps_key);
        let prefix = deps_dir.join("prefix");
        let installation_file = deps_dir.join("installation");
        locked_build(&root, &deps_key, &deps_dir, || {
            check_system_packages(&recipe.system_packages, self.system_root()?.as_deref())?;
            let interpreter = find_interpreter(recipe.python.as_deref())?;
            let installation = installation_of(&interpreter)?;
            std::fs::create_dir_all(&prefix)
                .map_err(io_error(format!("creating {}", prefix.display())))?;
            std::fs::write(
                &installation_file,
                installation.as_os_str().as_encoded_bytes(),
            )
            .map_err(io_error(format!("writing {}", installation_file.display())))?;
            std::fs::create_dir_all(deps_dir.join("repository")).map_err(io_error(format!(
                "creating {}/repository",
                deps_dir.display()
            )))?;
            let log = root.join(format!("{deps_key}.log"));
            self.build_dependencies(
                base,
                recipe,
                &requirements
                    .iter()
                    .map(|(file, _)| file.as_str())
                    .collect::<Vec<_>>(),
                converted
                    .as_ref()
                    .map(|(file, converted)| (file.as_str(), converted)),
                &interpreter,
                &installation,
                installer,
                &prefix,
                &log,
            )
        })?;
        let installation = std::fs::read_to_string(&installation_file)
            .map(PathBuf::from)
            .map_err(io_error(format!("reading {}", installation_file.display())))?;
        if recipe.install.is_none() && recipe.pre_install.is_empty() {
            return Ok(Environment {
                prefix,
                prefix_layer: None,
                installation,
                repository_layer: deps_dir.join("repository"),
                env: recipe.env.clone(),
            });
        }
        // Layers built before the install step honoured `exclude_newer` are built again.
        let dated = match recipe.exclude_newer {
            Some(_) => "-dated1",
            None => "",
        };
        let key = format!(
            "{}{over}-{LAYOUT}-{}-b{BASE_FORMAT}{userland}{dated}",
            recipe.key,
            &base.commit[..12.min(base.commit.len())]
        );
        let dir = root.join(&key);
        let environment = Environment {
            prefix: prefix.clone(),
            prefix_layer: Some(dir.join("prefix-layer")),
            installation,
            repository_layer: dir.join("repository"),
            env: recipe.env.clone(),
        };
        locked_build(&root, &key, &dir, || {
            std::fs::create_dir_all(&dir)
                .map_err(io_error(format!("creating {}", dir.display())))?;
            let log = root.join(format!("{key}.log"));
            self.build_commit_layer(base, recipe, &environment, &log)
        })?;
        Ok(environment)
    }

    /// Sandbox options for a build step: the template with the network as configured, the
    /// host's pip and uv settings, and the recipe's variables.
    /// What the keys of environments built in a base userland end with (its key: what a
    /// build compiles links against its libraries); nothing for the host's.
    fn userland_tag(&self) -> String {
        match self.template.sandbox.userland {
            Userland::Host => String::new(),
            Userland::Base => format!("-u{}", self.template.sandbox.base_userland.key()),
        }
    }

    /// The base root builds run in, if the userland is a base root (built on first use).
    fn system_root(&self) -> Result<Option<PathBuf>, EnvironmentError> {
        Ok(match self.template.sandbox.userland {
            Userland::Host => None,
            Userland::Base => Some(
                self.cache
                    .base_root(&self.template.sandbox.base_userland)?
                    .path,
            ),
        })
    }

    fn build_options(&self, recipe: &EnvironmentRecipe) -> WorkspaceOptions {
        let mut options = self.template.clone();
        options.strategy = Strategy::Overlay;
        options.sandbox.network = self.network;
        options
            .sandbox
            .pass_env
            .extend(std::env::vars().map(|(name, _)| name).filter(|name| {
                name.starts_with("PIP_")
                    || name.starts_with("UV_")
                    || BUILD_VARIABLES.contains(&name.as_str())
            }));
        if options.sandbox.userland == Userland::Base {
            expose_host_certificates(&mut options.sandbox, |name| std::env::var_os(name));
        }
        activate(&mut options.sandbox.env, &recipe.env);
        options
    }

    /// Stage 1: the prefix, build tools, packages and requirements, written into `prefix`.
    #[allow(clippy::too_many_arguments)]
    fn build_dependencies(
        &self,
        base: &BaseCheckout,
        recipe: &EnvironmentRecipe,
        requirements: &[&str],
        environment_file: Option<(&str, &Converted)>,
        interpreter: &Path,
        installation: &Path,
        installer: Installer,
        prefix: &Path,
        log_path: &Path,
    ) -> Result<(), EnvironmentError> {
        let mut options = self.build_options(recipe);
        options.extra_layers.push(ExtraLayer {
            source: prefix.to_path_buf(),
            mount_point: ENV_MOUNT_POINT.into(),
            access: LayerAccess::ReadWrite,
            layers: Vec::new(),
        });
        expose_interpreter(&mut options.sandbox, installation);
        let workspace = workspaces::create(self.cache, Origin::Checkout(base), &options)?;
        let shell = workspace.shell();
        let mut log = BuildLog::new(log_path);
        log.run(
            shell.as_ref(),
            &lay_out_prefix(interpreter, installation),
            self.timeout,
        )?;
        let offline_index = recipe.offline_index();
        let modern = version_of(interpreter).is_some_and(|version| {
            let mut parts = version
                .split('.')
                .map(|part| part.parse::<u32>().unwrap_or(0));
            (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (3, 8)
        });
        let uv = installer == Installer::Auto
            && self.network
            && !offline_index
            && modern
            && log
                .try_run(shell.as_ref(), &install_uv(UV_DIR), self.timeout)
                .map_err(io_error("installing uv"))?;
        let exclude_newer = recipe
            .exclude_newer
            .as_ref()
            .map(|date| format!("--exclude-newer {} ", shell_quote(date)))
            .unwrap_or_default();
        if let Some(date) = &recipe.exclude_newer {
            log.note(&format!(
                "resolving as of {date} (uv --exclude-newer){}",
                if uv {
                    ""
                } else {
                    "; uv is not used, and pip installs without the date"
                }
            ));
        }
        let install = |arguments: &str| {
            let pip = format!("python -m pip install {arguments}");
            match uv {
                true => (
                    Some(format!(
                        "{UV_DIR}/bin/uv pip install --python {ENV_MOUNT_POINT}/bin/python {exclude_newer}{arguments}"
                    )),
                    pip,
                ),
                false => (None, pip),
            }
        };
        let pip_args: Vec<String> = recipe.pip_args.iter().map(|arg| shell_quote(arg)).collect();
        let names_build_tool = |tool: &str| {
            recipe.packages.iter().any(|package| {
                let name: String = package
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                    .collect();
                name.eq_ignore_ascii_case(tool)
            })
        };
        let tools: Vec<&str> = ["setuptools", "wheel"]
            .into_iter()
            .filter(|tool| !names_build_tool(tool))
            .collect();
        // With uv where it is installed, else pip: whether it succeeded. pip does not retry
        // what uv could not do: its resolver would only backtrack for long over the same
        // conflict, and it would resolve without `exclude_newer`.
        let try_step = |log: &mut BuildLog,
                        (with_uv, with_pip): (Option<String>, String)|
         -> Result<bool, EnvironmentError> {
            let step = with_uv.unwrap_or(with_pip);
            log.try_install(shell.as_ref(), step.trim(), self.timeout)
        };
        // uv first where it is installed; a step uv cannot do is done again with pip, whose
        // failure is the build's.
        let run_step = |log: &mut BuildLog,
                        (with_uv, with_pip): &(Option<String>, String)|
         -> Result<(), EnvironmentError> {
            if let Some(step) = with_uv
                && log
                    .try_run(shell.as_ref(), step.trim(), self.timeout)
                    .map_err(io_error(format!("running `{step}`")))?
            {
                return Ok(());
            }
            log.run(shell.as_ref(), with_pip.trim(), self.timeout)
        };
        let mut steps = Vec::new();
        if !tools.is_empty() && !offline_index && self.network {
            steps.push(install(&[tools.join(" "), pip_args.join(" ")].join(" ")));
        }
        for step in steps.drain(..) {
            run_step(&mut log, &step)?;
        }
        if environment_file.is_none() && !recipe.environment_files.is_empty() {
            log.note(&format!(
                "no conda environment file in the checkout (looked for {}): only the recipe's packages are installed",
                recipe.environment_files.join(", ")
            ));
        }
        if let Some((file, converted)) = environment_file {
            let quoted = |requirements: &[String]| -> String {
                requirements
                    .iter()
                    .chain(&recipe.packages)
                    .map(|arg| shell_quote(arg))
                    .chain(pip_args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            log.note(&environment_summary(file, converted));
            // All at once with the recipe's packages, so the resolution fits its pins (which
            // are installed again after, as SWE-bench does); else entry by entry, leaving out
            // (and listing) those that cannot be installed.
            if !converted.requirements.is_empty()
                && !try_step(&mut log, install(&quoted(&converted.requirements)))?
            {
                let mut failed = Vec::new();
                for requirement in &converted.requirements {
                    let step = install(&quoted(std::slice::from_ref(requirement)));
                    if !try_step(&mut log, step)? {
                        failed.push(requirement.as_str());
                    }
                }
                if !failed.is_empty() {
                    log.note(&format!(
                        "{file}: left out, as they could not be installed: {}",
                        failed.join(", ")
                    ));
                }
            }
        }
        if !recipe.packages.is_empty() {
            let quoted: Vec<String> = recipe
                .packages
                .iter()
                .map(|arg| shell_quote(arg))
                .chain(pip_args.iter().cloned())
                .collect();
            steps.push(install(&quoted.join(" ")));
        }
        for file in requirements {
            steps.push(install(&format!(
                "-r {} {}",
                shell_quote(file),
                pip_args.join(" ")
            )));
        }
        for step in &steps {
            run_step(&mut log, step)?;
        }
        if uv {
            log.run(shell.as_ref(), &format!("rm -rf {UV_DIR}"), self.timeout)?;
        }
        log.save();
        workspace.destroy()?;
        Ok(())
    }

    /// Stage 2: the recipe's pre-install and install steps over the dependencies' prefix
    /// (copy-on-write); keeps what they changed in the prefix and in the repository.
    fn build_commit_layer(
        &self,
        base: &BaseCheckout,
        recipe: &EnvironmentRecipe,
        environment: &Environment,
        log_path: &Path,
    ) -> Result<(), EnvironmentError> {
        let mut options = self.build_options(recipe);
        expose_interpreter(&mut options.sandbox, &environment.installation);
        let index = options.extra_layers.len();
        options.extra_layers.push(ExtraLayer {
            source: environment.prefix.clone(),
            mount_point: ENV_MOUNT_POINT.into(),
            access: LayerAccess::CopyOnWrite,
            layers: Vec::new(),
        });
        let workspace = workspaces::create(self.cache, Origin::Checkout(base), &options)?;
        let shell = workspace.shell();
        let mut log = BuildLog::new(log_path);
        for step in &recipe.pre_install {
            log.run(shell.as_ref(), step, self.timeout)?;
        }
        if self.network {
            let pip_args: Vec<String> =
                recipe.pip_args.iter().map(|arg| shell_quote(arg)).collect();
            // Best effort: without them only the eval script's offline re-install fails
            // (logged), and the tests run on this install.
            log.try_run(
                shell.as_ref(),
                &format!(
                    "python - {} <<'EOF'\n{BUILD_REQUIRES}EOF",
                    pip_args.join(" ")
                ),
                self.timeout,
            )
            .map_err(io_error("downloading the build requirements"))?;
        }
        if let Some(install) = &recipe.install {
            let constrained = match &recipe.exclude_newer {
                Some(date) if self.network && !recipe.offline_index() => {
                    self.resolve_as_of(shell.as_ref(), &mut log, date)?
                }
                _ => false,
            };
            let bounded = format!(
                "export PIP_CONSTRAINT=\"${{PIP_CONSTRAINT:+$PIP_CONSTRAINT }}{DATED_CONSTRAINTS}\"\n{install}"
            );
            let done = constrained
                && log
                    .try_run(shell.as_ref(), &bounded, self.timeout)
                    .map_err(io_error(format!("running `{install}`")))?;
            if constrained && !done {
                log.note(
                    "the install step failed under the date's constraints: it runs again without them, so what it takes is not bounded by the date",
                );
            }
            if !done {
                log.run(shell.as_ref(), install, self.timeout)?;
            }
        }
        log.save();
        let prefix_layer = environment
            .prefix_layer
            .clone()
            .expect("a commit layer has a prefix layer");
        workspace
            .keep_changes_with_layers(&environment.repository_layer, &[(index, prefix_layer)])?;
        Ok(())
    }

    /// Bounds the install step by the recipe's `exclude_newer` date: resolves the project's
    /// declared requirements (every extra, preferring what the prefix holds) with uv as of
    /// `date` into [`DATED_CONSTRAINTS`], for pip's `PIP_CONSTRAINT`. Without it, an install
    /// step such as `pip install -e .[test]` takes the newest release of every dependency the
    /// recipe does not pin, so the environment would depend on the day it was built. Whether
    /// the constraints were written; when they cannot be (uv does not install, the project's
    /// metadata does not resolve), the log says so and the step runs unbounded.
    fn resolve_as_of(
        &self,
        shell: &dyn swerve_core::Shell,
        log: &mut BuildLog,
        date: &str,
    ) -> Result<bool, EnvironmentError> {
        let resolved = log
            .try_run(shell, &install_uv(DATED_UV_DIR), self.timeout)
            .map_err(io_error("installing uv"))?
            && log
                .try_run(
                    shell,
                    &format!("date={}\n{DATED_RESOLUTION}", shell_quote(date)),
                    self.timeout,
                )
                .map_err(io_error("resolving the install step's requirements"))?;
        log.note(&match resolved {
            true => format!(
                "the install step runs with PIP_CONSTRAINT={DATED_CONSTRAINTS}: the project's requirements as of {date}"
            ),
            false => format!(
                "the project's requirements could not be resolved as of {date}: the install step takes the newest releases"
            ),
        });
        Ok(resolved)
    }
}

/// The step that installs uv from PyPI into `dir` with the environment's pip, and checks
/// that it runs.
fn install_uv(dir: &str) -> String {
    format!("python -m pip install --quiet --retries 1 --target {dir} uv && {dir}/bin/uv --version")
}

/// Where uv is installed for [`DATED_RESOLUTION`] (the sandbox's own `/tmp`, not kept).
const DATED_UV_DIR: &str = "/tmp/swerve-uv";

/// The constraints [`DATED_RESOLUTION`] writes.
const DATED_CONSTRAINTS: &str = "/tmp/swerve-dated-constraints.txt";

/// Resolves the project's requirements (its first of `setup.py`, `pyproject.toml`,
/// `setup.cfg`; every extra, else none) with the checkout itself as of `$date`, keeping the
/// versions the prefix holds where the project allows them, into [`DATED_CONSTRAINTS`] (its
/// pinned releases, but the project's own and those the prefix holds), and prints them.
const DATED_RESOLUTION: &str = r#"set -e
uv=/tmp/swerve-uv/bin/uv
project=
for candidate in setup.py pyproject.toml setup.cfg; do
    if [ -f "$candidate" ]; then project=$candidate; break; fi
done
if [ -z "$project" ]; then echo "no setup.py, pyproject.toml or setup.cfg to resolve"; exit 1; fi
# The checkout itself is part of the resolution, so that what depends on the project (a
# plugin needing a later release of it) is held to the checkout's version, as pip holds it.
echo "-e $(pwd)" > /tmp/swerve-dated-self.in
compile() {
    # The output file starts as what the prefix holds: uv prefers those versions where the
    # project allows them, as pip keeps what is installed.
    "$uv" pip freeze --python /swerve-env/bin/python | grep -E '^[A-Za-z0-9._-]+==' \
        > /tmp/swerve-installed.txt || true
    cp /tmp/swerve-installed.txt /tmp/swerve-dated-constraints.txt
    "$uv" pip compile --quiet --no-header --python /swerve-env/bin/python --exclude-newer "$date" \
        "$@" "$project" /tmp/swerve-dated-self.in -o /tmp/swerve-dated-constraints.txt
}
compile --all-extras || compile
# Constraints are pinned releases only: not the checkout's editable line, nor a release of
# the project itself (uv names the project by its file: `# via NAME (setup.py)`), nor what the
# prefix already holds at that version (pip keeps it where the project allows it; pinned, it
# would also bind the build requirements that setup_requires fetches apart).
python - "$project" <<'EOF'
import re, sys
path = "/tmp/swerve-dated-constraints.txt"
text = open(path).read()
normal = lambda name: re.sub(r"[-_.]+", "-", name).lower()
pin = lambda line: re.match(r"([A-Za-z0-9._-]+)==(\S+)", line)
key = lambda found: (normal(found.group(1)), found.group(2))
installed = {key(pin(line)) for line in open("/tmp/swerve-installed.txt") if pin(line)}
own = {normal(name) for name in re.findall(r"([A-Za-z0-9._-]+) \(" + re.escape(sys.argv[1]) + r"\)", text)}
kept = [line for line in text.splitlines()
        if pin(line) and normal(pin(line).group(1)) not in own and key(pin(line)) not in installed]
open(path, "w").write("\n".join(kept) + "\n")
EOF
cat /tmp/swerve-dated-constraints.txt
"#;

/// Where the wheels of the project's build requirements are kept in the prefix, for installs
/// without network (the eval script's re-install, an agent's `pip install -e .`).
pub const BUILD_WHEELS: &str = "/swerve-env/.swerve-build-wheels";

/// Downloads the wheels (or sources) of the project's `[build-system] requires`
/// (pyproject.toml; setuptools and wheel for a project without one, pip's own default) into
/// [`BUILD_WHEELS`]. Arguments are extra pip arguments.
const BUILD_REQUIRES: &str = r#"import re, subprocess, sys
try:
    text = open("pyproject.toml").read()
except OSError:
    text = ""
section = re.search(r"^\[build-system\]\s*$(.*?)(?=^\[|\Z)", text, re.S | re.M)
requires = section and re.search(r"^requires\s*=\s*\[(.*?)\]\s*$", section.group(1), re.S | re.M)
names = re.findall(r"[\"']([^\"']+)[\"']", requires.group(1)) if requires else ["setuptools>=40.8.0", "wheel"]
print("build requirements:", " ".join(names))
sys.exit(subprocess.call([sys.executable, "-m", "pip", "download", "--quiet", "-d", "/swerve-env/.swerve-build-wheels", *names, *sys.argv[1:]]))
"#;

/// Host variables builds see besides `PIP_*` and `UV_*`: certificate bundles (a proxy's CA,
/// which uv reads from `SSL_CERT_FILE`) and proxies.
const BUILD_VARIABLES: &[&str] = &[
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

/// In a base userland, `/etc` is the base root's: its certificate bundle is Debian's, without
/// the authorities the host trusts beyond it (a proxy's that re-signs TLS, as on machines
/// whose registries are reached through one). A build reaching package registries shows the
/// host's bundle files the certificate variables name, read-only at their paths, over the
/// base root's; a build without them would fail to verify `pypi.org`.
/// `host_variable` reads the host's environment.
fn expose_host_certificates(
    sandbox: &mut swerve_sandbox::SandboxConfig,
    host_variable: impl Fn(&str) -> Option<std::ffi::OsString>,
) {
    if !sandbox.network {
        return;
    }
    for name in CERTIFICATE_VARIABLES {
        let Some(value) = host_variable(name) else {
            continue;
        };
        let path = PathBuf::from(value);
        if path.is_absolute()
            && path.is_file()
            && !sandbox.expose.iter().any(|exposure| exposure.path == path)
        {
            sandbox
                .expose
                .push(swerve_sandbox::Exposure::read_only(path));
        }
    }
}

/// Host variables that name a certificate bundle file.
const CERTIFICATE_VARIABLES: &[&str] = &["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"];

/// Where uv is installed during a dependencies build (removed before the prefix is kept).
const UV_DIR: &str = "/swerve-env/.swerve-uv";

/// Runs `build` unless `<root>/<key>.ready` exists, under `<root>/<key>.lock`; removes
/// `dir` before and after a failed build, and marks success with the ready file.
fn locked_build(
    root: &Path,
    key: &str,
    dir: &Path,
    build: impl FnOnce() -> Result<(), EnvironmentError>,
) -> Result<(), EnvironmentError> {
    let ready = root.join(format!("{key}.ready"));
    if ready.exists() {
        return Ok(());
    }
    let lock_path = root.join(format!("{key}.lock"));
    let lock =
        File::create(&lock_path).map_err(io_error(format!("creating {}", lock_path.display())))?;
    let _lock = Flock::lock(lock, FlockArg::LockExclusive)
        .map_err(|(_, errno)| io_error(format!("locking {}", lock_path.display()))(errno.into()))?;
    if ready.exists() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(dir);
    let result = build();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(dir);
    }
    result?;
    std::fs::write(&ready, key).map_err(io_error(format!("writing {}", ready.display())))
}

/// A build's log: every step's command and output, written to its file on failure and at
/// the end.
struct BuildLog {
    path: PathBuf,
    text: String,
}

impl BuildLog {
    fn new(path: &Path) -> Self {
        BuildLog {
            path: path.to_path_buf(),
            text: String::new(),
        }
    }

    /// Adds a line of swerve's own to the log (`# swerve: …`).
    fn note(&mut self, text: &str) {
        for line in text.lines() {
            self.text.push_str(&format!("# swerve: {line}\n"));
        }
    }

    /// Runs `step`, logging it; whether it succeeded.
    fn try_run(
        &mut self,
        shell: &dyn swerve_core::Shell,
        step: &str,
        timeout: Duration,
    ) -> std::io::Result<bool> {
        let outcome = shell.run(step, timeout)?;
        self.text.push_str(&format!(
            "$ {step}\n{}{}\n",
            outcome.stdout_text(),
            outcome.stderr_text()
        ));
        Ok(outcome.success())
    }

    /// Runs `step`, logging it; a failure is a [`EnvironmentError::BuildFailed`] with the
    /// log's tail.
    fn run(
        &mut self,
        shell: &dyn swerve_core::Shell,
        step: &str,
        timeout: Duration,
    ) -> Result<(), EnvironmentError> {
        let outcome = shell
            .run(step, timeout)
            .map_err(io_error(format!("running `{step}`")))?;
        self.text.push_str(&format!(
            "$ {step}\n{}{}\n",
            outcome.stdout_text(),
            outcome.stderr_text()
        ));
        if outcome.success() {
            return Ok(());
        }
        Err(self.failed(step, outcome.shell_status()))
    }

    /// Runs the install `step`, logging it; whether it succeeded. A failure whose output shows
    /// the machine at fault rather than the packages ([`machine_failure`]: a full disk, an
    /// unreachable index) is the build's, so that what a build leaves out is only what cannot
    /// be installed, never what a bad moment kept out.
    fn try_install(
        &mut self,
        shell: &dyn swerve_core::Shell,
        step: &str,
        timeout: Duration,
    ) -> Result<bool, EnvironmentError> {
        let outcome = shell
            .run(step, timeout)
            .map_err(io_error(format!("running `{step}`")))?;
        let output = format!("{}{}", outcome.stdout_text(), outcome.stderr_text());
        self.text.push_str(&format!("$ {step}\n{output}\n"));
        if outcome.success() {
            return Ok(true);
        }
        if let Some(cause) = machine_failure(&output) {
            self.note(&format!(
                "the step failed because of the machine ({cause:?}), not the packages"
            ));
            return Err(self.failed(step, outcome.shell_status()));
        }
        Ok(false)
    }

    /// Saves the log and makes the [`EnvironmentError::BuildFailed`] for `step`.
    fn failed(&self, step: &str, status: i32) -> EnvironmentError {
        self.save();
        let tail: Vec<&str> = self.text.lines().rev().take(15).collect();
        EnvironmentError::BuildFailed {
            step: step.to_owned(),
            status,
            log: self.path.clone(),
            tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        }
    }

    fn save(&self) {
        let _ = std::fs::write(&self.path, &self.text);
    }
}

/// What in an install's output shows the machine at fault rather than the packages: a full
/// disk or quota, an unreachable index (uv's and pip's messages); the line found.
fn machine_failure(output: &str) -> Option<&str> {
    const MARKERS: [&str; 8] = [
        "No space left on device",
        "Disk quota exceeded",
        "over its disk quota",
        "Failed to fetch",
        "Temporary failure in name resolution",
        "NewConnectionError",
        "Network is unreachable",
        "dns error",
    ];
    output
        .lines()
        .find(|line| MARKERS.iter().any(|marker| line.contains(marker)))
        .map(str::trim)
}

/// What the build log says about an environment file's conversion.
fn environment_summary(file: &str, converted: &Converted) -> String {
    let mut lines = vec![format!(
        "{file}: conda environment file approximated with pip: {}",
        converted.requirements.join(" ")
    )];
    if !converted.skipped.is_empty() {
        lines.push(format!(
            "{file}: left out, as pip cannot install them: {}",
            converted.skipped.join("; ")
        ));
    }
    for note in &converted.notes {
        lines.push(format!("{file}: {note}"));
    }
    lines.join("\n")
}

/// The files of `files` that exist in `base`, in order, with their content.
fn existing_requirements(base: &BaseCheckout, files: &[String]) -> Vec<(String, String)> {
    files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(base.path.join(file)).ok()?;
            Some((file.clone(), text))
        })
        .collect()
}

/// The dependencies' cache key: every recipe field but the install steps, the requirement
/// files' names and contents, the environment file's name, content and conversion (so a
/// change of the conversion's rules rebuilds), and the installer.
fn dependencies_key(
    recipe: &EnvironmentRecipe,
    requirements: &[(String, String)],
    environment_file: Option<(&str, &str, &Converted)>,
    installer: Installer,
) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    let mut field = |name: &str, values: &[&str]| {
        hash.update(name.as_bytes());
        hash.update((values.len() as u64).to_le_bytes());
        for value in values {
            hash.update((value.len() as u64).to_le_bytes());
            hash.update(value.as_bytes());
        }
    };
    fn strings(values: &[String]) -> Vec<&str> {
        values.iter().map(String::as_str).collect()
    }
    field(
        "python",
        &recipe.python.as_deref().into_iter().collect::<Vec<_>>(),
    );
    field("packages", &strings(&recipe.packages));
    field("system_packages", &strings(&recipe.system_packages));
    field("pip_args", &strings(&recipe.pip_args));
    let env: Vec<&str> = recipe
        .env
        .iter()
        .flat_map(|(name, value)| [name.as_str(), value.as_str()])
        .collect();
    field("env", &env);
    let files: Vec<&str> = requirements
        .iter()
        .flat_map(|(file, text)| [file.as_str(), text.as_str()])
        .collect();
    field("requirements", &files);
    // Hashed only when set, so the keys of recipes without them stay as they were.
    if let Some((file, text, converted)) = environment_file {
        field("environment_file", &[file, text]);
        field(
            "environment_requirements",
            &strings(&converted.requirements),
        );
        field("environment_skipped", &strings(&converted.skipped));
    } else if !recipe.environment_files.is_empty() {
        field("environment_file", &[]);
    }
    if let Some(date) = &recipe.exclude_newer {
        field("exclude_newer", &[date]);
    }
    field(
        "installer",
        &[match installer {
            Installer::Auto => "auto",
            Installer::Pip => "pip",
        }],
    );
    hash.finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Fails naming the packages of `packages` that `dpkg-query` does not report installed.
/// Checks that the system packages are installed: on the host, or in the base root
/// `system_root` (whose dpkg database `dpkg-query --admindir` reads).
fn check_system_packages(
    packages: &[String],
    system_root: Option<&Path>,
) -> Result<(), EnvironmentError> {
    let installed = |package: &String| {
        let mut query = std::process::Command::new("dpkg-query");
        if let Some(root) = system_root {
            query.arg(format!(
                "--admindir={}",
                root.join("var/lib/dpkg").display()
            ));
        }
        query
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
        let fix = match system_root {
            None => format!("install them (e.g. `apt-get install {}`) and run again", missing.join(" ")),
            Some(_) => "add them to sandbox.base_userland.packages (the base userland is built again with them) and run again".into(),
        };
        Err(EnvironmentError::MissingSystemPackages { missing, fix })
    }
}

/// Quotes `text` for `/bin/sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The installation `interpreter` belongs to (its `sys.base_prefix`, also for a venv's).
fn installation_of(interpreter: &Path) -> Result<PathBuf, EnvironmentError> {
    python_prints(interpreter, "import sys; print(sys.base_prefix)")
        .map(PathBuf::from)
        .ok_or_else(|| EnvironmentError::MissingInterpreter {
            version: interpreter.display().to_string(),
            looked: format!("{} does not run", interpreter.display()),
        })
}

/// The shell step that lays the environment's interpreter out at [`ENV_MOUNT_POINT`]:
///
/// - an installation of its own (pyenv's, uv's, a python.org build) is copied there without
///   its site-packages (the host's packages stay out; `ensurepip` puts pip back, as venv
///   does), its `EXTERNALLY-MANAGED` marker dropped, and the text files naming its old place
///   (scripts' `#!` lines, `python3-config`, `_sysconfigdata`, pkg-config files, the build
///   `Makefile`) rewritten to the new one, as conda relocates a package;
/// - the system interpreter (`/usr`), whose installation cannot be copied on its own, gets a
///   venv as before: a symlink to its `bin/python` does not find the packages.
///
/// Either way the step ends by checking `sys.prefix` is [`ENV_MOUNT_POINT`].
fn lay_out_prefix(interpreter: &Path, installation: &Path) -> String {
    let check = format!(
        "{ENV_MOUNT_POINT}/bin/python -c 'import sys; assert sys.prefix == \"{ENV_MOUNT_POINT}\", sys.prefix'"
    );
    if swerve_sandbox::is_system_path(installation) {
        return format!(
            "{} -m venv {ENV_MOUNT_POINT} && {check}",
            interpreter.display()
        );
    }
    let from = shell_quote(&installation.to_string_lossy());
    format!(
        "tar -C {from} --exclude='./lib/python*/site-packages/*' -cf - . \
           | tar -C {ENV_MOUNT_POINT} --no-same-owner -xf - \
         && rm -f {ENV_MOUNT_POINT}/lib/python*/EXTERNALLY-MANAGED \
         && grep -rlIF --null -e {from} {ENV_MOUNT_POINT}/bin {ENV_MOUNT_POINT}/lib/pkgconfig \
              {ENV_MOUNT_POINT}/lib/python*/_sysconfigdata* {ENV_MOUNT_POINT}/lib/python*/config-* 2>/dev/null \
           | xargs -0 -r sed -i \"s|{}|{ENV_MOUNT_POINT}|g\" \
         && {{ [ -n \"$(ls {ENV_MOUNT_POINT}/lib/python*/site-packages | grep '^pip')\" ] \
              || {ENV_MOUNT_POINT}/bin/python -m ensurepip --default-pip >/dev/null; }} \
         && {check}",
        installation.display()
    )
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

#[cfg(test)]
mod tests {
    use super::{expose_host_certificates, machine_failure};

    #[test]
    fn builds_in_a_base_userland_see_the_hosts_certificate_bundles() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("ca-certificates.crt");
        std::fs::write(&bundle, "-----BEGIN CERTIFICATE-----\n").unwrap();
        let host = |name: &str| match name {
            "SSL_CERT_FILE" | "PIP_CERT" => Some(bundle.clone().into_os_string()),
            "REQUESTS_CA_BUNDLE" => Some("/no/such/bundle.crt".into()),
            _ => None,
        };
        let mut sandbox = swerve_sandbox::SandboxConfig {
            network: true,
            ..Default::default()
        };
        expose_host_certificates(&mut sandbox, host);
        // The bundle once (two variables name it); a missing file is not shown.
        assert_eq!(
            sandbox.expose,
            [swerve_sandbox::Exposure::read_only(bundle.clone())]
        );
        // Without the network a build reaches no registry: nothing to trust.
        let mut offline = swerve_sandbox::SandboxConfig::default();
        expose_host_certificates(&mut offline, host);
        assert!(offline.expose.is_empty());
    }

    #[test]
    fn machine_failures_are_told_from_package_failures() {
        let full = "Resolved 22 packages\nerror: Failed to download `h5py==3.11.0`\n  cause: failed to write to file `/root/.cache/uv/x.so`: No space left on device (os error 28)\n";
        assert!(machine_failure(full).is_some_and(|line| line.contains("os error 28")));
        let offline = "error: Failed to fetch: `https://pypi.org/simple/numpy/`\n";
        assert!(machine_failure(offline).is_some());
        let unsolvable = "  × No solution found when resolving dependencies:\n  ╰─▶ Because mypy==0.650 has no wheels with a matching Python ABI tag\n";
        assert_eq!(machine_failure(unsolvable), None);
        let build = "error: subprocess-exited-with-error\nERROR: Failed building wheel for h5py\n";
        assert_eq!(machine_failure(build), None);
    }
}
