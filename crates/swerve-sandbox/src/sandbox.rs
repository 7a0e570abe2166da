//! A running sandbox: the host's handle on one workspace's isolated command runner.
//!
//! With namespaces, a sandbox is a small init process (this crate's own code, started by
//! re-executing the current binary, see [`crate::init`]) that owns the namespaces and
//! starts each command on request; this side writes its user namespace's id maps
//! ([`crate::identity`]) and watches its disk quota ([`crate::quota`]). Without namespaces,
//! commands are plain subprocesses in the workspace directory, in their own process group,
//! with rlimits. Either way [`Sandbox`] implements [`Shell`], and dropping it ends every
//! process the sandbox started.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::{Pid, pipe2};
use swerve_core::{ExecOutcome, FileOwner, Shell};

use crate::SandboxError;
use crate::capture::{self, Ended, Stream};
use crate::cgroup::{Cgroup, CgroupSupport};
use crate::config::{Isolation, SandboxConfig};
use crate::identity::IdMap;
use crate::init::{self, INIT_ENV, InitSpec, LayerSpec};
use crate::long_command::{LONG_COMMAND_BYTES, script_file, script_path};
use crate::protocol::{self, Reply, Request, RunRequest};
use crate::quota::{DiskQuota, human_bytes};
use crate::view::HostView;

/// Runs before `main` in every binary that links this crate: a process started as a
/// sandbox init becomes one and never reaches `main`.
#[ctor::ctor(unsafe)]
fn become_init_if_asked() {
    if let Some(spec) = std::env::var_os(INIT_ENV) {
        init::run(&spec.to_string_lossy());
    }
}

/// How a sandbox's init is started: a program and its arguments, with the init's spec in the
/// environment. `None` (the default) re-executes the current binary.
static INIT_COMMAND: std::sync::OnceLock<(PathBuf, Vec<OsString>)> = std::sync::OnceLock::new();

/// Starts sandbox inits as `program args…` instead of re-executing the current binary: for a
/// process whose executable does not link this crate (a Python interpreter that loaded it
/// as an extension module), the command must load the code that links it, whose
/// constructor then becomes the init. Set once, before the first sandbox starts; a later
/// call is refused (false).
pub fn set_init_command(program: PathBuf, args: Vec<OsString>) -> bool {
    INIT_COMMAND.set((program, args)).is_ok()
}

/// The isolation a sandbox actually got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationInForce {
    /// Namespaces (and cgroup limits when `cgroups` is true).
    Namespaces {
        /// Whether the sandbox's processes are in their own cgroup, with its limits.
        cgroups: bool,
    },
    /// A plain subprocess: no isolation.
    None,
}

/// The host's handle on one sandbox.
pub struct Sandbox {
    backend: Backend,
    config: SandboxConfig,
    /// Where the host sees the sandbox's repository (the mount point's host-side path).
    host_root: PathBuf,
    next_id: AtomicU64,
    cgroup: Option<Cgroup>,
    /// The host directory that is the sandbox's `HOME`.
    home: PathBuf,
    /// The host owner of what the sandbox's root creates.
    owner: (u32, u32),
    quota: Option<Arc<DiskQuota>>,
    /// Variables naming the exposed toolchains (see [`HostView::env`]).
    toolchain_env: Vec<(String, String)>,
    /// An image's `Env`: commands start from it instead of the host's `pass_env`.
    image_env: Option<Vec<(String, String)>>,
}

enum Backend {
    Namespaces {
        control: Arc<Mutex<UnixStream>>,
        init: Mutex<Child>,
        /// Joining the user namespace keeps the caller's ids (a one-id map, no setgroups).
        keep_credentials: bool,
    },
    Plain,
}

/// Where a sandbox lives on the host: its unique name (for its cgroups), the host paths it
/// must not see, the cgroup layout to use, the layers it mounts besides the repository, its
/// ids, its `HOME` and its disk quota.
pub(crate) struct Placement<'a> {
    pub name: &'a str,
    pub hide: &'a [PathBuf],
    pub cgroups: CgroupSupport,
    /// Layers mounted besides the repository, each at its path inside the sandbox.
    pub extra_layers: &'a [(PathBuf, LayerSpec)],
    /// The sandbox's user and group ids on the host.
    pub ids: &'a IdMap,
    /// The host directory mounted (or, without namespaces, used) as `HOME`.
    pub home: &'a Path,
    /// What the sandbox may write, if limited.
    pub quota: Option<Arc<DiskQuota>>,
    /// The base root whose system directories and `/etc` the sandbox shows instead of the
    /// host's (`sandbox.userland = "base"`); unused with an image.
    pub system_root: Option<&'a Path>,
}

impl InitSpec {
    /// The part of an init's spec every sandbox takes from its settings and placement
    /// alike (network, names, packet dropping, `/tmp` size, cgroups, `HOME`, CPUs); the
    /// layers, root, hidden and shown paths are left empty for the caller to set.
    fn from_config(
        config: &SandboxConfig,
        placement: &Placement<'_>,
        cgroup: Option<&Cgroup>,
        cpus: &[usize],
    ) -> Self {
        InitSpec {
            layers: Vec::new(),
            network: config.network,
            hosts: config
                .hosts
                .iter()
                .map(|(name, address)| (name.clone(), *address))
                .collect(),
            drop_outbound: config.drop_outbound && !config.network,
            tmp_bytes: config.limits.tmp_bytes,
            hide_paths: Vec::new(),
            cgroup_procs: cgroup.map(Cgroup::procs_files).unwrap_or_default(),
            home: (placement.home.to_path_buf(), config.home.clone()),
            exposures: Vec::new(),
            masked_files: Vec::new(),
            image_root: None,
            cpus: cpus.to_vec(),
            system_root: None,
        }
    }
}

/// What the workspace layer hands to [`Sandbox::start`].
pub(crate) enum Layer<'a> {
    Overlay {
        lowers: &'a [PathBuf],
        upper: &'a Path,
        work: &'a Path,
    },
    Directory(&'a Path),
    /// An image's layers (topmost first) as the sandbox's root, the workspace's writable
    /// layer over them; commands start from the image's environment.
    Image {
        lowers: &'a [PathBuf],
        upper: &'a Path,
        work: &'a Path,
        env: &'a [(String, String)],
    },
}

impl Sandbox {
    /// Starts a sandbox over `layer` with `config` at `placement`.
    pub(crate) fn start(
        layer: Layer<'_>,
        config: &SandboxConfig,
        placement: &Placement<'_>,
    ) -> Result<Self, SandboxError> {
        if config.isolation == Isolation::None {
            return Self::plain(layer, config, placement);
        }
        // Chosen first: a configuration this host cannot meet is an error, not a reason to
        // run without isolation.
        crate::hosts::check(&config.hosts)?;
        let cpus = crate::cpus::choose(config.limits.cpus)?;
        let attempt = match Self::namespaced(&layer, config, placement, &cpus) {
            // A silent death of the init is retried once: it is rare and carries no setup error.
            Err(SandboxError::InitDied(detail)) => {
                tracing::warn!("{detail}; starting the sandbox again");
                Self::namespaced(&layer, config, placement, &cpus)
            }
            other => other,
        };
        match attempt {
            Ok(sandbox) => Ok(sandbox),
            // Only missing namespaces justify running without isolation, not a crashed init.
            Err(error)
                if config.isolation == Isolation::Auto
                    && matches!(layer, Layer::Directory(_))
                    && placement.system_root.is_none()
                    && !matches!(error, SandboxError::InitDied(_)) =>
            {
                tracing::warn!(
                    "SANDBOX DISABLED: {error}. Commands run as plain subprocesses with NO isolation \
                     (network, processes and the host filesystem are reachable). Run `swerve doctor` for details."
                );
                Self::plain(layer, config, placement)
            }
            Err(error) => Err(error),
        }
    }

    fn plain(
        layer: Layer<'_>,
        config: &SandboxConfig,
        placement: &Placement<'_>,
    ) -> Result<Self, SandboxError> {
        if placement.system_root.is_some() {
            return Err(SandboxError::Unsupported(
                "sandbox.userland = \"base\" needs namespaces (a plain subprocess runs the host's tools); \
                 set sandbox.userland = \"host\", or run `swerve doctor` to see why namespaces are unavailable"
                    .into(),
            ));
        }
        if !config.hosts.is_empty() || config.drop_outbound {
            return Err(SandboxError::Unsupported(
                "sandbox.hosts and sandbox.drop_outbound need namespaces (a plain subprocess \
                 shares the host's /etc/hosts and network); run `swerve doctor` to see why \
                 namespaces are unavailable"
                    .into(),
            ));
        }
        if let Some((mount_point, _)) = placement.extra_layers.first() {
            return Err(SandboxError::Unsupported(format!(
                "the layer at {} needs namespaces (a plain subprocess cannot mount it); \
                 run `swerve doctor` to see why namespaces are unavailable",
                mount_point.display()
            )));
        }
        let Layer::Directory(dir) = layer else {
            return Err(SandboxError::Unsupported(
                "an overlay workspace needs namespaces; use the copy or reflink strategy without them".into(),
            ));
        };
        Ok(Self {
            backend: Backend::Plain,
            config: config.clone(),
            host_root: dir.to_path_buf(),
            next_id: AtomicU64::new(0),
            cgroup: None,
            home: placement.home.to_path_buf(),
            owner: placement.ids.root_owner(),
            quota: None,
            toolchain_env: Vec::new(),
            image_env: None,
        })
    }

    fn namespaced(
        layer: &Layer<'_>,
        config: &SandboxConfig,
        placement: &Placement<'_>,
        cpus: &[usize],
    ) -> Result<Self, SandboxError> {
        let name = placement.name;
        let cgroup = Cgroup::create(placement.cgroups, name, &config.limits).map_err(|error| {
            SandboxError::Setup(format!("cannot create cgroup for {name}: {error}"))
        })?;
        if let Layer::Image {
            lowers,
            upper,
            work,
            env,
        } = layer
        {
            let spec = InitSpec {
                layers: placement.extra_layers.to_vec(),
                hide_paths: config.hide_paths.clone(),
                exposures: config
                    .expose
                    .iter()
                    .map(|exposure| (exposure.path.clone(), exposure.writable))
                    .collect(),
                masked_files: Vec::new(),
                image_root: Some(LayerSpec::Overlay {
                    lowers: lowers.to_vec(),
                    upper: upper.to_path_buf(),
                    work: work.to_path_buf(),
                }),
                system_root: None,
                ..InitSpec::from_config(config, placement, cgroup.as_ref(), cpus)
            };
            return Self::launch(
                spec,
                config,
                placement,
                cgroup,
                Vec::new(),
                Some(env.to_vec()),
            );
        }
        let repository = match layer {
            Layer::Image { .. } => unreachable!("handled above"),
            Layer::Overlay {
                lowers,
                upper,
                work,
            } => LayerSpec::Overlay {
                lowers: lowers.to_vec(),
                upper: upper.to_path_buf(),
                work: work.to_path_buf(),
            },
            Layer::Directory(dir) => LayerSpec::Bind {
                source: dir.to_path_buf(),
            },
        };
        let layers: Vec<(PathBuf, LayerSpec)> =
            std::iter::once((config.mount_point.clone(), repository))
                .chain(placement.extra_layers.iter().cloned())
                .collect();
        let layer_points: Vec<PathBuf> = layers
            .iter()
            .map(|(mount_point, _)| mount_point.clone())
            .collect();
        let host_home = std::env::var_os("HOME").map(PathBuf::from);
        let view = HostView::new(
            config,
            &config.command_env(),
            &layer_points,
            host_home.as_deref(),
        )?;
        let toolchain_env = view.env.clone();
        let spec = InitSpec {
            layers,
            hide_paths: placement
                .hide
                .iter()
                .chain(&config.hide_paths)
                .cloned()
                .collect(),
            exposures: view.exposures,
            masked_files: view.masked_files,
            image_root: None,
            system_root: placement.system_root.map(Path::to_path_buf),
            ..InitSpec::from_config(config, placement, cgroup.as_ref(), cpus)
        };
        Self::launch(spec, config, placement, cgroup, toolchain_env, None)
    }

    /// Starts the init for `spec` and waits until it serves.
    fn launch(
        spec: InitSpec,
        config: &SandboxConfig,
        placement: &Placement<'_>,
        cgroup: Option<Cgroup>,
        toolchain_env: Vec<(String, String)>,
        image_env: Option<Vec<(String, String)>>,
    ) -> Result<Self, SandboxError> {
        let (host_end, init_end) = UnixStream::pair().map_err(SandboxError::io("socketpair"))?;
        let (exe, args) = match INIT_COMMAND.get() {
            Some((program, args)) => (program.clone(), args.clone()),
            None => (
                std::env::current_exe()
                    .map_err(SandboxError::io("locating the current executable"))?,
                Vec::new(),
            ),
        };
        // The control socket is the init's standard input, so the spawn needs no code between
        // fork and exec: the standard library then starts the child with `posix_spawn`
        // (vfork) instead of copying this process's page tables, which costs milliseconds of
        // system time in a process running hundreds of rollouts.
        let child = Command::new(exe)
            .args(args)
            .env_clear()
            .env(
                INIT_ENV,
                serde_json::to_string(&spec).expect("spec serializes"),
            )
            .stdin(Stdio::from(OwnedFd::from(init_end)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(SandboxError::io("starting the sandbox init"))?;
        let mut child = child;
        expect_reply(&host_end, &mut child, |reply| {
            matches!(reply, Reply::AwaitingIdMap)
        })?;
        if let Err(error) = placement.ids.apply(child.id()) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SandboxError::Setup(format!(
                "cannot map the sandbox's user and group ids ({}): {error}",
                placement.ids.describe()
            )));
        }
        protocol::send(&host_end, &Request::IdsMapped, &[])
            .map_err(SandboxError::io("answering the sandbox init"))?;
        expect_reply(&host_end, &mut child, |reply| matches!(reply, Reply::Ready))?;
        let host_root = PathBuf::from(format!("/proc/{}/root", child.id())).join(
            config
                .mount_point
                .strip_prefix("/")
                .unwrap_or(&config.mount_point),
        );
        let control = Arc::new(Mutex::new(host_end));
        if let Some(quota) = &placement.quota {
            let control = Arc::clone(&control);
            DiskQuota::watch(
                quota,
                Box::new(move || {
                    let control = control
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    let _ = protocol::send(&control, &Request::KillAll, &[]);
                }),
            );
        }
        Ok(Self {
            backend: Backend::Namespaces {
                control,
                init: Mutex::new(child),
                keep_credentials: placement.ids.count == 1,
            },
            config: config.clone(),
            host_root,
            next_id: AtomicU64::new(1),
            cgroup,
            home: placement.home.to_path_buf(),
            owner: placement.ids.root_owner(),
            quota: placement.quota.clone(),
            toolchain_env,
            image_env,
        })
    }

    /// Where the host reads and writes the sandbox's repository.
    pub fn host_root(&self) -> &Path {
        &self.host_root
    }

    /// The isolation in force for this sandbox.
    pub fn isolation(&self) -> IsolationInForce {
        match self.backend {
            Backend::Namespaces { .. } => IsolationInForce::Namespaces {
                cgroups: self.cgroup.is_some(),
            },
            Backend::Plain => IsolationInForce::None,
        }
    }

    /// A host program (a helper such as `git`) run inside the sandbox's namespaces, in the
    /// repository directory, with a clean environment and without any capability: it reads
    /// files the agent wrote (a repository's own git configuration may name programs to
    /// run), so it gets the sandbox's confinement, less the seccomp filter and cgroup
    /// limits, which its short runs do not need.
    ///
    /// With namespaces the program is started by `nsenter` (util-linux), which joins the
    /// sandbox's user, mount, PID, network, IPC, UTS and cgroup namespaces as the sandbox's
    /// root and enters the repository, then `setpriv` (util-linux), which drops every
    /// capability and sets `no_new_privs`. Every program is named by its absolute path and
    /// no code runs between fork and exec, so the standard library spawns with `posix_spawn`
    /// (vfork) rather than `fork`: forking a large multithreaded process costs milliseconds
    /// of system time per command.
    pub fn host_command(&self, program: &str) -> std::io::Result<Command> {
        let mut command = match &self.backend {
            Backend::Plain => {
                let mut command = Command::new(find_program(program)?);
                command.current_dir(&self.host_root);
                command
            }
            Backend::Namespaces {
                init,
                keep_credentials,
                ..
            } => {
                let pid = init
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .id();
                let mut command = Command::new(find_program("nsenter")?);
                command.arg(format!("--user=/proc/{pid}/ns/user"));
                if *keep_credentials {
                    // setgroups is denied in a one-id namespace; the caller's ids are its root.
                    command.arg("--preserve-credentials");
                }
                // `--wd` opens the directory before joining the namespaces (through
                // `/proc/PID/root`, which reaches the sandbox's mounts) and enters it after.
                let mut workdir = OsString::from("--wd=");
                workdir.push(&self.host_root);
                command
                    .arg(format!("--mount=/proc/{pid}/ns/mnt"))
                    .arg(format!("--pid=/proc/{pid}/ns/pid_for_children"))
                    .arg(format!("--net=/proc/{pid}/ns/net"))
                    .arg(format!("--ipc=/proc/{pid}/ns/ipc"))
                    .arg(format!("--uts=/proc/{pid}/ns/uts"))
                    .arg(format!("--cgroup=/proc/{pid}/ns/cgroup"))
                    .arg(workdir)
                    .arg("--")
                    .arg(find_program("setpriv")?)
                    .args([
                        "--no-new-privs",
                        "--inh-caps=-all",
                        "--bounding-set=-all",
                        "--",
                    ])
                    .arg(program);
                command
            }
        };
        command
            .env_clear()
            .envs(
                self.config
                    .command_env()
                    .into_iter()
                    .filter(|(name, _)| name == "PATH"),
            )
            .env("HOME", self.home_path());
        Ok(command)
    }

    /// A scratch directory for host helpers: its path as [`Sandbox::host_command`] programs
    /// see it, and as this process sees it. Removed when the returned guard drops.
    pub(crate) fn scratch(&self) -> std::io::Result<Scratch> {
        // Numbered across the process, not per sandbox: without namespaces every sandbox's
        // scratch directories share the host's temporary directory, and two rollouts of one
        // task extracting their patches at once must not pick the same name.
        static SCRATCH_IDS: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            ".swerve-{}-{}",
            std::process::id(),
            SCRATCH_IDS.fetch_add(1, Ordering::Relaxed)
        );
        let (inside, host) = match &self.backend {
            Backend::Plain => {
                let dir = std::env::temp_dir().join(&name);
                (dir.clone(), dir)
            }
            Backend::Namespaces { init, .. } => {
                let pid = init
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .id();
                (
                    Path::new("/tmp").join(&name),
                    PathBuf::from(format!("/proc/{pid}/root/tmp")).join(&name),
                )
            }
        };
        self.create_as_owner(|| std::fs::create_dir(&host))?;
        Ok(Scratch { inside, host })
    }

    /// `HOME` as commands see it: the configured path inside a namespaced sandbox, the host
    /// directory for plain subprocesses.
    fn home_path(&self) -> PathBuf {
        match self.backend {
            Backend::Namespaces { .. } => self.config.home.clone(),
            Backend::Plain => self.home.clone(),
        }
    }

    /// Who this process must create files as inside the sandbox: its root's host ids, when
    /// they differ from this process's (swerve running as root). See [`FileOwner`].
    pub fn file_owner(&self) -> Option<FileOwner> {
        let (uid, gid) = self.owner;
        let differs =
            uid != nix::unistd::geteuid().as_raw() || gid != nix::unistd::getegid().as_raw();
        (matches!(self.backend, Backend::Namespaces { .. }) && differs)
            .then_some(FileOwner { uid, gid })
    }

    /// Runs `create` as [`Sandbox::file_owner`] (or as this process when that is `None`).
    pub(crate) fn create_as_owner<T>(&self, create: impl FnOnce() -> T) -> T {
        match self.file_owner() {
            Some(owner) => owner.create_as(create),
            None => create(),
        }
    }

    /// The environment commands start with: the configuration's, then the variables naming
    /// the exposed toolchains (unless the configuration names them).
    fn command_env(&self) -> Vec<(String, String)> {
        if let Some(image_env) = &self.image_env {
            return image_command_env(image_env, &self.config);
        }
        let mut env = self.config.command_env();
        for (name, value) in &self.toolchain_env {
            if !env.iter().any(|(existing, _)| existing == name) {
                env.push((name.clone(), value.clone()));
            }
        }
        env
    }

    /// The command's file size limit: the configured one, and never past the disk quota.
    fn file_size_limit(&self) -> Option<u64> {
        let limits = &self.config.limits;
        match (
            limits.file_size_bytes,
            self.quota.as_ref().map(|quota| quota.limit),
        ) {
            (Some(file), Some(disk)) => Some(file.min(disk)),
            (file, disk) => file.or(disk),
        }
    }

    /// Kills every process of the sandbox but its init: whatever earlier commands left
    /// running in the background, so that nothing of theirs watches what the next command
    /// does (the grader kills them before it writes its canary tests). Returns once the
    /// init has them all killed (it serves requests in order). `false` for a sandbox without
    /// namespaces, whose processes are the host's.
    pub fn kill_all(&self) -> bool {
        match &self.backend {
            Backend::Namespaces { control, .. } => {
                let control = control
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                protocol::send(&control, &Request::KillAll, &[]).is_ok()
            }
            Backend::Plain => false,
        }
    }

    /// Whether the sandbox's root is an image's (see [`Layer::Image`]).
    pub fn runs_image(&self) -> bool {
        self.image_env.is_some()
    }

    /// The configuration this sandbox was started with.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    fn run_namespaced(
        &self,
        control: &Mutex<UnixStream>,
        command: &str,
        timeout: Duration,
    ) -> std::io::Result<ExecOutcome> {
        let started = Instant::now();
        let (out_read, out_write) = pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let (err_read, err_write) = pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let (status_read, status_write) = pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = Request::Run(RunRequest {
            id,
            command: command.to_owned(),
            env: self.command_env(),
            workdir: self.config.workdir(),
            file_size_limit: self.file_size_limit(),
            max_processes: self
                .cgroup
                .is_none()
                .then_some(self.config.limits.max_processes)
                .flatten(),
            address_space_limit: self
                .cgroup
                .is_none()
                .then_some(self.config.limits.memory_bytes)
                .flatten(),
        });
        {
            let control = control
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let fds =
                protocol::raw_fds(&[out_write.as_fd(), err_write.as_fd(), status_write.as_fd()]);
            protocol::send(&control, &request, &fds)?;
            drop((out_write, err_write, status_write));
            match protocol::receive::<Reply>(&control)? {
                Some((Reply::Started { .. }, _)) => {}
                Some((Reply::Error { message }, _)) => return Err(std::io::Error::other(message)),
                other => {
                    return Err(std::io::Error::other(format!(
                        "unexpected reply from the sandbox: {other:?}"
                    )));
                }
            }
        }
        let cap = self.config.output_cap_bytes;
        let (mut stdout, mut stderr) = (Stream::new(out_read, cap), Stream::new(err_read, cap));
        let mut status_file = std::fs::File::from(status_read);
        let ended = capture::pump_until(
            &mut stdout,
            &mut stderr,
            Some(&status_fd(&status_file)?),
            started + timeout,
            |ready| ready.then(|| read_status(&mut status_file)),
        );
        let mut outcome = outcome_from(stdout, stderr, started);
        match ended {
            Ended::Finished(Some(raw)) => set_status(&mut outcome, raw),
            Ended::Finished(None) => outcome.signal = Some(Signal::SIGKILL as i32),
            Ended::TimedOut => {
                let control = control
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                protocol::send(&control, &Request::Kill { id }, &[])?;
                outcome.timed_out = true;
            }
        }
        // A command that ended within a few milliseconds cannot have written much: the
        // watchdog counts it at its next pass, and the round trip of short commands stays cheap.
        // Either way the command hears of the quota only if the workspace is still over it
        // when it ends: a stop the watchdog flagged late, for writes of an earlier command
        // still landing on a loaded machine, is not charged to a command that made room.
        if let Some(quota) = &self.quota
            && (quota.take_exceeded() || started.elapsed() >= QUOTA_CHECK_AFTER)
            && quota.is_over()
        {
            outcome.disk_limit = Some(quota.limit);
            outcome.stderr.extend_from_slice(
                format!(
                    "\nswerve: the workspace is over its disk quota of {} (disk_limit): \
                     commands that write are stopped; delete files you do not need\n",
                    human_bytes(quota.limit)
                )
                .as_bytes(),
            );
        }
        outcome.duration = started.elapsed();
        Ok(outcome)
    }

    fn run_plain(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome> {
        let started = Instant::now();
        let limits = self.config.limits.clone();
        let script = (command.len() > LONG_COMMAND_BYTES)
            .then(|| script_file(command, false))
            .transpose()?;
        let script_fd = script.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
        let mut child = Command::new("/bin/sh");
        match &script {
            Some(script) => child.arg(script_path(script)),
            None => child.arg("-c").arg(command),
        };
        child
            .current_dir(&self.host_root)
            .env_clear()
            .envs(self.config.command_env())
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: setrlimit and fcntl are async-signal-safe.
        unsafe {
            child.pre_exec(move || {
                if let Some(fd) = script_fd
                    && libc::fcntl(fd, libc::F_SETFD, 0) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(bytes) = limits.file_size_bytes {
                    setrlimit(Resource::RLIMIT_FSIZE, bytes, bytes)?;
                }
                if let Some(bytes) = limits.memory_bytes {
                    setrlimit(Resource::RLIMIT_AS, bytes, bytes)?;
                }
                Ok(())
            });
        }
        let mut child = child.spawn()?;
        let cap = self.config.output_cap_bytes;
        let mut stdout = Stream::new(OwnedFd::from(child.stdout.take().expect("piped")), cap);
        let mut stderr = Stream::new(OwnedFd::from(child.stderr.take().expect("piped")), cap);
        let ended = capture::pump_until(&mut stdout, &mut stderr, None, started + timeout, |_| {
            child.try_wait().ok().flatten()
        });
        let group = Pid::from_raw(child.id() as i32);
        let mut outcome = outcome_from(stdout, stderr, started);
        match ended {
            Ended::Finished(status) => {
                outcome.exit_code = status.code();
                outcome.signal = status.signal();
            }
            Ended::TimedOut => {
                let _ = killpg(group, Signal::SIGKILL);
                let _ = child.wait();
                outcome.timed_out = true;
            }
        }
        outcome.duration = started.elapsed();
        Ok(outcome)
    }

    /// Ends every process of the sandbox and waits for the init to exit.
    fn shutdown(&mut self) {
        if let Backend::Namespaces { control, init, .. } = &self.backend {
            let control = control
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let _ = control.shutdown(std::net::Shutdown::Both);
            let mut init = init.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match init.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() >= deadline => {
                        let _ = init.kill();
                        let _ = init.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_micros(200)),
                }
            }
        }
    }
}

impl Shell for Sandbox {
    fn run(&self, command: &str, timeout: Duration) -> std::io::Result<ExecOutcome> {
        match &self.backend {
            Backend::Namespaces { control, .. } => self.run_namespaced(control, command, timeout),
            Backend::Plain => self.run_plain(command, timeout),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Commands that run at least this long are measured against the disk quota when they end.
const QUOTA_CHECK_AFTER: Duration = Duration::from_millis(10);

/// Reads the init's next reply and checks it is the one `wanted` accepts; a setup failure
/// or a silent death becomes the matching error.
fn expect_reply(
    control: &UnixStream,
    child: &mut Child,
    wanted: impl Fn(&Reply) -> bool,
) -> Result<(), SandboxError> {
    match protocol::receive::<Reply>(control) {
        Ok(Some((reply, _))) if wanted(&reply) => Ok(()),
        Ok(Some((Reply::SetupFailed { message }, _))) => {
            let _ = child.wait();
            Err(SandboxError::Setup(message))
        }
        other => Err(SandboxError::InitDied(format!(
            "the sandbox init ended without a word ({other:?}); {}",
            exit_of(child)
        ))),
    }
}

/// How `child` ended, waiting up to a second for it (killing it if it is still running).
fn exit_of(child: &mut Child) -> String {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return format!("it exited with {status}"),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return "it was still running and was killed".to_owned();
            }
            Err(error) => return format!("its status is unknown: {error}"),
        }
    }
}

/// A scratch directory seen from both sides of the sandbox; removed on drop.
pub(crate) struct Scratch {
    /// The path host helpers started with [`Sandbox::host_command`] use.
    pub inside: PathBuf,
    /// The path this process uses.
    pub host: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.host);
    }
}

/// The absolute path of `name` on this process's `PATH`.
fn find_program(name: &str) -> std::io::Result<PathBuf> {
    static FOUND: Mutex<Vec<(String, PathBuf)>> = Mutex::new(Vec::new());
    let mut found = FOUND
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, path)) = found.iter().find(|(known, _)| known == name) {
        return Ok(path.clone());
    }
    let path = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "`{name}` was not found on PATH\nhint: install it (nsenter is part of util-linux)"
                ),
            )
        })?;
    found.push((name.to_owned(), path.clone()));
    Ok(path)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

fn status_fd(file: &std::fs::File) -> std::io::Result<OwnedFd> {
    file.as_fd().try_clone_to_owned()
}

/// Reads the 4-byte wait status the reaper writes; `None` if the pipe closed without one.
fn read_status(file: &mut std::fs::File) -> Option<i32> {
    use std::io::Read;
    let mut raw = [0u8; 4];
    file.read_exact(&mut raw)
        .ok()
        .map(|_| i32::from_le_bytes(raw))
}

fn set_status(outcome: &mut ExecOutcome, raw: i32) {
    let status = std::process::ExitStatus::from_raw(raw);
    outcome.exit_code = status.code();
    outcome.signal = status.signal();
}

fn outcome_from(stdout: Stream, stderr: Stream, started: Instant) -> ExecOutcome {
    ExecOutcome {
        stdout_truncated: stdout.truncated,
        stderr_truncated: stderr.truncated,
        stdout: stdout.bytes,
        stderr: stderr.bytes,
        duration: started.elapsed(),
        ..ExecOutcome::default()
    }
}

/// The environment of a command in an image: the image's `Env` (with a default `PATH`),
/// `HOME`, `PYTHONDONTWRITEBYTECODE=1`, then the configured `env`. The host's `pass_env`
/// does not apply: the host's `PATH` and toolchains mean nothing in an image.
fn image_command_env(
    image_env: &[(String, String)],
    config: &SandboxConfig,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = image_env.to_vec();
    if !env.iter().any(|(name, _)| name == "PATH") {
        env.push((
            "PATH".into(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
        ));
    }
    for (name, value) in [
        (
            "HOME".to_owned(),
            config.home.to_string_lossy().into_owned(),
        ),
        ("PYTHONDONTWRITEBYTECODE".to_owned(), "1".to_owned()),
    ]
    .into_iter()
    .chain(config.env.iter().map(|(n, v)| (n.clone(), v.clone())))
    {
        env.retain(|(existing, _)| *existing != name);
        env.push((name, value));
    }
    env
}
