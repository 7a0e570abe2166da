//! The builder: runs a parsed Dockerfile's stages over swerve's image store and sandbox.
//!
//! Each stage starts from a stored image (or `scratch`); `RUN` runs in a sandbox whose root is
//! the stage's layers so far under a writable layer, which becomes the next layer (its diff,
//! [`super::layer::diff_upper`]); `COPY`/`ADD` write their layer's tar directly; the other
//! instructions change the configuration only. Each layer is cached under a key chained as
//! BuildKit's: the parent's key, the instruction after substitution (with, for `RUN`, the
//! environment it runs with), and for `COPY`/`ADD` the digest of the files read, so a
//! rebuild after a changed line reruns only from that line.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use swerve_core::Shell;
use swerve_sandbox::{Cache, ImageRoot, SandboxConfig, Workspace, WorkspaceOptions};

use super::image::{self, Empty, Healthcheck, History, ImageSpec, LAYER_TAR};
use super::layer::{self, Attributes, LayerTar};
use super::parse::{Dockerfile, DockerfileError, Flag, Instruction};
use super::tree::{self, Tree};
use super::words::{self, Lookup};
use crate::ImageError;
use crate::manifest::{Descriptor, ImageConfig, RootFs};
use crate::store::{ImageRecord, Store};
use crate::unpack::IdMapping;

/// What to build.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The Dockerfile.
    pub dockerfile: PathBuf,
    /// The build context directory.
    pub context: PathBuf,
    /// References to store the image under.
    pub tags: Vec<String>,
    /// `--build-arg NAME=value`.
    pub build_args: BTreeMap<String, String>,
    /// The stage to build (the last one when `None`).
    pub target: Option<String>,
    /// Whether `RUN` (and `ADD` of a URL) may use the network.
    pub network: bool,
    /// Whether to ignore the layer cache.
    pub no_cache: bool,
}

/// What went wrong in a build.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// At an instruction (or in the Dockerfile as a whole): file, line, what to do.
    #[error(transparent)]
    Dockerfile(#[from] DockerfileError),
    /// In the image store.
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// A built image.
#[derive(Debug, Clone)]
pub struct Built {
    /// The manifest's digest.
    pub manifest_digest: String,
    /// The records stored (one per tag).
    pub records: Vec<ImageRecord>,
    /// Layer steps taken from the cache, and run.
    pub cached: usize,
    /// Layer steps run.
    pub ran: usize,
}

/// The build-time platform arguments BuildKit defines.
const PLATFORM_ARGS: &[(&str, &str)] = &[
    ("TARGETPLATFORM", "linux/amd64"),
    ("TARGETOS", "linux"),
    ("TARGETARCH", "amd64"),
    ("TARGETVARIANT", ""),
    ("BUILDPLATFORM", "linux/amd64"),
    ("BUILDOS", "linux"),
    ("BUILDARCH", "amd64"),
    ("BUILDVARIANT", ""),
];

/// How long one `RUN` may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

/// A Dockerfile builder over a store, a sandbox cache and a sandbox configuration.
pub struct Builder<'a> {
    /// Where images and layers are stored.
    pub store: &'a Store,
    /// Where workspaces are made.
    pub cache: &'a Cache,
    /// The sandbox `RUN` runs in (network, limits and isolation; the rest is the stage's).
    pub sandbox: SandboxConfig,
    /// Where progress goes.
    pub progress: &'a mut dyn Write,
}

/// A stage's state as its instructions run.
#[derive(Clone)]
struct State {
    spec: ImageSpec,
    layers: Vec<Descriptor>,
    args: BTreeMap<String, Option<String>>,
    key: String,
}

struct Stage<'d> {
    name: Option<String>,
    from: &'d Instruction,
    body: Vec<&'d Instruction>,
}

/// A file a `COPY`/`ADD` writes.
enum Content {
    Dir,
    File(PathBuf),
    Data(Vec<u8>),
    Symlink(PathBuf),
    Archive(PathBuf),
}

struct Entry {
    path: String,
    content: Content,
    attributes: Attributes,
}

struct Run<'d, 'b> {
    builder: &'b mut Builder<'d>,
    file: &'b Dockerfile,
    options: &'b BuildOptions,
    ids: IdMapping,
    context: Tree,
    stages: Vec<Stage<'b>>,
    built: Vec<Option<State>>,
    global_args: BTreeMap<String, Option<String>>,
    used_args: BTreeSet<String>,
    step: usize,
    cached: usize,
    ran: usize,
}

impl<'a> Builder<'a> {
    /// Builds `options.dockerfile` and stores the image under `options.tags`.
    pub fn build(&mut self, options: &BuildOptions) -> Result<Built, BuildError> {
        let name = options.dockerfile.display().to_string();
        let whole = |message: String| DockerfileError {
            file: name.clone(),
            line: 0,
            instruction: String::new(),
            message,
        };
        let text = std::fs::read_to_string(&options.dockerfile)
            .map_err(|error| whole(format!("cannot read the Dockerfile: {error}")))?;
        let file = Dockerfile::parse(&name, &text)?;
        let context = Tree::context(&options.context).map_err(|error| {
            whole(format!(
                "cannot read the build context {}: {error}",
                options.context.display()
            ))
        })?;
        if !options.context.is_dir() {
            return Err(whole(format!(
                "the build context {} is not a directory",
                options.context.display()
            ))
            .into());
        }
        let ids = IdMapping::for_sandbox(&self.sandbox)?;
        let mut run = Run {
            builder: self,
            file: &file,
            options,
            ids,
            context,
            stages: Vec::new(),
            built: Vec::new(),
            global_args: BTreeMap::new(),
            used_args: BTreeSet::new(),
            step: 0,
            cached: 0,
            ran: 0,
        };
        run.split_stages()?;
        let target = match &options.target {
            None => run.stages.len() - 1,
            Some(target) => run.stage_index(target).ok_or_else(|| {
                whole(format!(
                    "the target stage \"{target}\" is not in the Dockerfile (stages: {})",
                    run.stage_names()
                ))
            })?,
        };
        let state = run.build_stage(target)?;
        let unused: Vec<&String> = options
            .build_args
            .keys()
            .filter(|name| !run.used_args.contains(*name))
            .collect();
        if !unused.is_empty() {
            run.say(&format!(
                "[warning] build arguments not consumed by any ARG: {}",
                unused
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        run.step += 1;
        let step = run.step;
        run.say(&format!("#{step} exporting to image"));
        let mut spec = state.spec.clone();
        spec.created = Some(image::now_rfc3339());
        let (manifest_digest, records) =
            image::write_image(run.builder.store, &spec, &state.layers, &options.tags)?;
        run.say(&format!("#{step} writing image {manifest_digest}"));
        for tag in &options.tags {
            run.say(&format!("#{step} naming to {tag}"));
        }
        Ok(Built {
            manifest_digest,
            records,
            cached: run.cached,
            ran: run.ran,
        })
    }
}

/// A cache key: the hash of the parent's key and `parts`.
fn chain(parent: &str, parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(parent.as_bytes());
    for part in parts {
        hasher.update([0u8]);
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    format!("{:x}", hasher.finalize())
}

/// Shell-quotes `word` for `/bin/sh`.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl<'d, 'b> Run<'d, 'b> {
    fn say(&mut self, line: &str) {
        let _ = writeln!(self.builder.progress, "{line}");
    }

    fn error(&self, instruction: &Instruction, message: impl Into<String>) -> BuildError {
        self.file.error(instruction, message).into()
    }

    fn stage_names(&self) -> String {
        self.stages
            .iter()
            .enumerate()
            .map(|(i, s)| s.name.clone().unwrap_or_else(|| i.to_string()))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn stage_index(&self, name: &str) -> Option<usize> {
        self.stages
            .iter()
            .position(|stage| stage.name.as_deref() == Some(&name.to_ascii_lowercase()))
            .or_else(|| name.parse().ok().filter(|i| *i < self.stages.len()))
    }

    /// Global `ARG`s (before the first `FROM`) and the stages.
    fn split_stages(&mut self) -> Result<(), BuildError> {
        let file = self.file;
        for instruction in &file.instructions {
            if instruction.keyword == "FROM" {
                let words = words::split(&instruction.args, file.escape);
                let name = match words.as_slice() {
                    [_] => None,
                    [_, as_, name] if as_.eq_ignore_ascii_case("as") => {
                        Some(name.to_ascii_lowercase())
                    }
                    _ => {
                        return Err(self.error(instruction, "expected `FROM image [AS name]`"));
                    }
                };
                self.stages.push(Stage {
                    name,
                    from: instruction,
                    body: Vec::new(),
                });
                continue;
            }
            match self.stages.last_mut() {
                Some(stage) => stage.body.push(instruction),
                None if instruction.keyword == "ARG" => {
                    let vars = |_: &str| None;
                    for (name, default) in self.arg_pairs(instruction, &vars)? {
                        let value = self.options.build_args.get(&name).cloned().or(default);
                        self.used_args.insert(name.clone());
                        self.global_args.insert(name, value);
                    }
                }
                None => {
                    return Err(self.error(
                        instruction,
                        "only ARG may come before the first FROM (a Dockerfile starts with FROM)",
                    ));
                }
            }
        }
        if self.stages.is_empty() {
            return Err(DockerfileError {
                file: file.file.clone(),
                line: 0,
                instruction: String::new(),
                message: "no FROM instruction: a Dockerfile must have at least one stage".into(),
            }
            .into());
        }
        self.built = vec![None; self.stages.len()];
        Ok(())
    }

    /// `ARG name[=default] …`: names and expanded defaults.
    fn arg_pairs(
        &self,
        instruction: &Instruction,
        vars: Lookup<'_>,
    ) -> Result<Vec<(String, Option<String>)>, BuildError> {
        let escape = self.file.escape;
        let words = words::split(&instruction.args, escape);
        if words.is_empty() {
            return Err(self.error(instruction, "needs a name: ARG NAME[=default]"));
        }
        words
            .iter()
            .map(|word| match word.split_once('=') {
                Some((name, value)) => Ok((
                    name.to_owned(),
                    Some(
                        words::expand(value, escape, vars)
                            .map_err(|why| self.error(instruction, why))?,
                    ),
                )),
                None => Ok((word.clone(), None)),
            })
            .collect()
    }

    fn build_stage(&mut self, index: usize) -> Result<State, BuildError> {
        if let Some(state) = &self.built[index] {
            return Ok(state.clone());
        }
        let (from, body, label) = {
            let stage = &self.stages[index];
            let label = match (&stage.name, self.stages.len()) {
                (_, 1) => String::new(),
                (Some(name), _) => format!("{name} "),
                (None, _) => format!("stage-{index} "),
            };
            (stage.from, stage.body.clone(), label)
        };
        let total = body.len() + 1;
        let mut state = self.from(index, from, &format!("[{label}1/{total}]"))?;
        for (position, instruction) in body.iter().enumerate() {
            let step = format!("[{label}{}/{total}]", position + 2);
            self.instruction(&mut state, instruction, &step)?;
        }
        self.built[index] = Some(state.clone());
        Ok(state)
    }

    fn announce(&mut self, step: &str, instruction: &Instruction, text: &str) -> usize {
        self.step += 1;
        let number = self.step;
        self.say(&format!("#{number} {step} {} {text}", instruction.keyword));
        number
    }

    fn from(
        &mut self,
        index: usize,
        instruction: &Instruction,
        step: &str,
    ) -> Result<State, BuildError> {
        let escape = self.file.escape;
        for flag in &instruction.flags {
            match (flag.name.as_str(), flag.value.as_deref()) {
                ("platform", Some(platform)) => {
                    let global = self.global_lookup();
                    let platform = words::expand(platform, escape, &global)
                        .map_err(|why| self.error(instruction, why))?;
                    if platform != "linux/amd64" {
                        return Err(self.error(
                            instruction,
                            format!(
                                "--platform={platform} is not this machine's platform: swerve builds linux/amd64 images only (drop --platform or build elsewhere)"
                            ),
                        ));
                    }
                }
                (name, _) => {
                    return Err(self.error(
                        instruction,
                        format!("unknown flag --{name} (FROM takes --platform)"),
                    ));
                }
            }
        }
        let words = words::split(&instruction.args, escape);
        let image_name = {
            let global = self.global_lookup();
            words::expand(&words[0], escape, &global).map_err(|why| self.error(instruction, why))?
        };
        let number = self.announce(step, instruction, &image_name);
        let args = BTreeMap::new();
        if image_name.eq_ignore_ascii_case("scratch") {
            let mut spec = ImageSpec {
                architecture: "amd64".into(),
                os: "linux".into(),
                ..ImageSpec::default()
            };
            with_default_path(&mut spec);
            return Ok(State {
                spec,
                layers: Vec::new(),
                args,
                key: chain("", &["scratch"]),
            });
        }
        if let Some(stage) = self
            .stage_index(&image_name)
            .filter(|_| !image_name.chars().all(|c| c.is_ascii_digit()))
        {
            if stage >= index {
                return Err(self.error(
                    instruction,
                    format!("stage \"{image_name}\" is not defined before this FROM"),
                ));
            }
            let mut state = self.build_stage(stage)?;
            state.args = args;
            return Ok(state);
        }
        let store = self.builder.store;
        let record = store.record(&image_name)?.ok_or_else(|| {
            self.error(
                instruction,
                format!(
                    "image {image_name} is not in swerve's image store: `swerve images pull {image_name}` (or `--from` a layout) first"
                ),
            )
        })?;
        let bytes = std::fs::read(store.blobs().path(&record.config_digest))
            .map_err(ImageError::io("reading the base image's configuration"))?;
        let mut spec: ImageSpec = serde_json::from_slice(&bytes).map_err(|error| {
            self.error(
                instruction,
                format!("the configuration of {image_name} is not an image configuration: {error}"),
            )
        })?;
        if spec.config.on_build.as_ref().is_some_and(|t| !t.is_empty()) {
            return Err(self.error(
                instruction,
                format!("{image_name} has ONBUILD triggers, which swerve's builder does not run"),
            ));
        }
        self.say(&format!("#{number} {}", record.manifest_digest));
        with_default_path(&mut spec);
        Ok(State {
            spec,
            layers: record.layers.clone(),
            args,
            key: chain("", &["image", &record.manifest_digest]),
        })
    }

    fn global_lookup(&self) -> impl Fn(&str) -> Option<String> + '_ {
        move |name: &str| self.global_args.get(name).cloned().flatten()
    }

    /// Variables in a stage: `ENV` first, then the `ARG`s in scope.
    fn lookup<'s>(state: &'s State) -> impl Fn(&str) -> Option<String> + 's {
        move |name: &str| {
            state
                .spec
                .config
                .env_var(name)
                .or_else(|| state.args.get(name).cloned().flatten())
        }
    }

    fn expand(
        &self,
        instruction: &Instruction,
        state: &State,
        word: &str,
    ) -> Result<String, BuildError> {
        let vars = Self::lookup(state);
        words::expand(word, self.file.escape, &vars).map_err(|why| self.error(instruction, why))
    }

    fn no_flags(&self, instruction: &Instruction) -> Result<(), BuildError> {
        match instruction.flags.first() {
            None => Ok(()),
            Some(flag) => Err(self.error(
                instruction,
                format!("{} takes no flags (--{})", instruction.keyword, flag.name),
            )),
        }
    }

    fn instruction(
        &mut self,
        state: &mut State,
        instruction: &Instruction,
        step: &str,
    ) -> Result<(), BuildError> {
        let escape = self.file.escape;
        let args = instruction.args.as_str();
        if !matches!(
            instruction.keyword.as_str(),
            "RUN" | "COPY" | "ADD" | "HEALTHCHECK"
        ) {
            self.no_flags(instruction)?;
        }
        let needs_args = !matches!(instruction.keyword.as_str(), "RUN" | "COPY" | "ADD");
        if needs_args && args.is_empty() {
            return Err(self.error(
                instruction,
                format!("{} needs arguments", instruction.keyword),
            ));
        }
        let mut history = format!("{} {args}", instruction.keyword);
        match instruction.keyword.as_str() {
            "RUN" => return self.run(state, instruction, step),
            "COPY" | "ADD" => return self.copy(state, instruction, step),
            "WORKDIR" => return self.workdir(state, instruction, step),
            "ENV" => {
                let pairs = {
                    let vars = Self::lookup(state);
                    words::pairs(args, escape, &vars, true)
                        .map_err(|why| self.error(instruction, why))?
                };
                for (name, value) in pairs {
                    state.spec.config.set_env(&name, &value);
                }
            }
            "ARG" => {
                let pairs = {
                    let vars = Self::lookup(state);
                    self.arg_pairs(instruction, &vars)?
                };
                for (name, default) in pairs {
                    let value = self
                        .options
                        .build_args
                        .get(&name)
                        .cloned()
                        .or(default)
                        .or_else(|| self.global_args.get(&name).cloned().flatten())
                        .or_else(|| {
                            PLATFORM_ARGS
                                .iter()
                                .find(|(arg, _)| *arg == name)
                                .map(|(_, value)| (*value).to_owned())
                        });
                    self.used_args.insert(name.clone());
                    state.args.insert(name, value);
                }
            }
            "LABEL" => {
                let pairs = {
                    let vars = Self::lookup(state);
                    words::pairs(args, escape, &vars, true)
                        .map_err(|why| self.error(instruction, why))?
                };
                let labels = state.spec.config.labels.get_or_insert_with(BTreeMap::new);
                labels.extend(pairs);
            }
            "MAINTAINER" => state.spec.author = Some(args.to_owned()),
            "USER" => {
                let user = self.expand(instruction, state, args)?;
                state.spec.config.user = Some(user);
            }
            "EXPOSE" => {
                let mut ports = BTreeMap::new();
                for word in words::split(args, escape) {
                    let port = self.expand(instruction, state, &word)?;
                    let port = if port.contains('/') {
                        port.to_ascii_lowercase()
                    } else {
                        format!("{port}/tcp")
                    };
                    let (number, protocol) = port.split_once('/').unwrap_or((&port, "tcp"));
                    let valid = !number.is_empty()
                        && number.split('-').all(|n| n.parse::<u16>().is_ok())
                        && matches!(protocol, "tcp" | "udp" | "sctp");
                    if !valid {
                        return Err(self.error(
                            instruction,
                            format!("\"{word}\" is not a port (80, 80/udp, 8000-8010)"),
                        ));
                    }
                    ports.insert(port, Empty {});
                }
                state
                    .spec
                    .config
                    .exposed_ports
                    .get_or_insert_with(BTreeMap::new)
                    .extend(ports);
            }
            "VOLUME" => {
                let paths = match words::json_form(args) {
                    Some(paths) => paths,
                    None => words::split(args, escape),
                };
                let mut expanded = Vec::new();
                for path in paths {
                    expanded.push(self.expand(instruction, state, &path)?);
                }
                let volumes = state.spec.config.volumes.get_or_insert_with(BTreeMap::new);
                for path in expanded {
                    volumes.insert(path, Empty {});
                }
            }
            "STOPSIGNAL" => {
                let signal = self.expand(instruction, state, args)?;
                state.spec.config.stop_signal = Some(signal);
            }
            "SHELL" => {
                let shell = words::json_form(args)
                    .filter(|shell| !shell.is_empty())
                    .ok_or_else(|| {
                        self.error(
                            instruction,
                            "SHELL takes the JSON form: SHELL [\"/bin/bash\", \"-c\"]",
                        )
                    })?;
                state.spec.config.shell = Some(shell);
            }
            "CMD" | "ENTRYPOINT" => {
                let command = match words::json_form(args) {
                    Some(command) => command,
                    None => {
                        let mut shell = self.shell(state);
                        shell.push(args.to_owned());
                        shell
                    }
                };
                if instruction.keyword == "CMD" {
                    state.spec.config.cmd = Some(command);
                } else {
                    state.spec.config.entrypoint = Some(command);
                    // Docker resets an inherited CMD when ENTRYPOINT is set.
                    state.spec.config.cmd = None;
                }
            }
            "HEALTHCHECK" => {
                state.spec.config.healthcheck = Some(self.healthcheck(state, instruction)?);
            }
            "ONBUILD" => {
                return Err(self.error(
                    instruction,
                    "ONBUILD is not supported by swerve's builder: put the instructions in the Dockerfiles that would use this image",
                ));
            }
            other => {
                return Err(self.error(instruction, format!("unknown instruction {other}")));
            }
        }
        if instruction.keyword == "ARG" {
            history = format!("ARG {args}");
        }
        state.spec.history.push(History {
            created: Some(image::now_rfc3339()),
            created_by: Some(history.clone()),
            empty_layer: true,
        });
        state.key = chain(&state.key, &[&history, &self.expand_for_key(state)]);
        Ok(())
    }

    /// What of a stage's configuration later layers depend on, for cache keys.
    fn expand_for_key(&self, state: &State) -> String {
        serde_json::to_string(&(
            &state.spec.config.env,
            &state.args,
            &state.spec.config.working_dir,
            &state.spec.config.user,
            &state.spec.config.shell,
        ))
        .unwrap_or_default()
    }

    fn shell(&self, state: &State) -> Vec<String> {
        state
            .spec
            .config
            .shell
            .clone()
            .unwrap_or_else(|| vec!["/bin/sh".into(), "-c".into()])
    }

    fn healthcheck(
        &self,
        state: &State,
        instruction: &Instruction,
    ) -> Result<Healthcheck, BuildError> {
        let args = instruction.args.as_str();
        if args.eq_ignore_ascii_case("none") {
            return Ok(Healthcheck {
                test: vec!["NONE".into()],
                ..Healthcheck::default()
            });
        }
        let (word, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        if !word.eq_ignore_ascii_case("cmd") || rest.trim().is_empty() {
            return Err(self.error(
                instruction,
                "expected HEALTHCHECK [OPTIONS] CMD command, or HEALTHCHECK NONE",
            ));
        }
        let rest = rest.trim();
        let test = match words::json_form(rest) {
            Some(command) => std::iter::once("CMD".to_owned()).chain(command).collect(),
            None => vec!["CMD-SHELL".into(), rest.to_owned()],
        };
        let mut check = Healthcheck {
            test,
            ..Healthcheck::default()
        };
        for Flag { name, value } in &instruction.flags {
            let value = value.as_deref().unwrap_or("");
            let value = self.expand(instruction, state, value)?;
            let duration = || {
                parse_duration(&value).ok_or_else(|| {
                    self.error(
                        instruction,
                        format!("--{name}={value} is not a duration (30s, 1m30s, 500ms)"),
                    )
                })
            };
            match name.as_str() {
                "interval" => check.interval = Some(duration()?),
                "timeout" => check.timeout = Some(duration()?),
                "start-period" => check.start_period = Some(duration()?),
                "start-interval" => check.start_interval = Some(duration()?),
                "retries" => {
                    check.retries = Some(value.parse().map_err(|_| {
                        self.error(instruction, format!("--retries={value} is not a number"))
                    })?)
                }
                other => {
                    return Err(self.error(instruction, format!("unknown flag --{other} (HEALTHCHECK takes --interval, --timeout, --start-period, --start-interval, --retries)")));
                }
            }
        }
        Ok(check)
    }

    /// The stage's root for reading: its layers unpacked, topmost first.
    fn layer_dirs(&self, state: &State) -> Result<Vec<PathBuf>, BuildError> {
        let record = ImageRecord {
            reference: "the build".into(),
            source: String::new(),
            manifest_digest: String::new(),
            config_digest: String::new(),
            config: ImageConfig {
                rootfs: RootFs {
                    diff_ids: state.spec.rootfs.diff_ids.clone(),
                },
                ..ImageConfig::default()
            },
            layers: state.layers.clone(),
        };
        Ok(self.builder.store.root_for(&record, self.ids)?.layers)
    }

    fn workdir_of(state: &State) -> String {
        state
            .spec
            .config
            .working_dir
            .clone()
            .filter(|dir| !dir.is_empty())
            .unwrap_or_else(|| "/".into())
    }

    /// The layer cached under `key`, if any (and not `--no-cache`).
    fn cached(&self, key: &str) -> Option<Option<Descriptor>> {
        if self.options.no_cache {
            return None;
        }
        let path = self.builder.store.root().join("build-cache").join(key);
        let bytes = std::fs::read(path).ok()?;
        let layer: Option<Descriptor> = serde_json::from_slice(&bytes).ok()?;
        match &layer {
            Some(descriptor) if !self.builder.store.blobs().has(&descriptor.digest) => None,
            _ => Some(layer),
        }
    }

    fn remember(&self, key: &str, layer: &Option<Descriptor>) -> Result<(), BuildError> {
        let dir = self.builder.store.root().join("build-cache");
        std::fs::create_dir_all(&dir)
            .map_err(ImageError::io(format!("creating {}", dir.display())))?;
        let path = dir.join(key);
        swerve_core::atomic::write_json_atomically(&path, layer)
            .map_err(ImageError::io(format!("writing {}", path.display())))?;
        Ok(())
    }

    /// A step that ran (not `CACHED`): its layer remembered under `key` for later builds,
    /// counted, announced `DONE` with its time when `shown` (its number and start), and
    /// added to `state`.
    fn ran_step(
        &mut self,
        state: &mut State,
        key: String,
        layer: Option<Descriptor>,
        history: String,
        shown: Option<(usize, Instant)>,
    ) -> Result<(), BuildError> {
        self.remember(&key, &layer)?;
        self.ran += 1;
        if let Some((number, started)) = shown {
            self.say(&format!(
                "#{number} DONE {:.1}s",
                started.elapsed().as_secs_f64()
            ));
        }
        self.add_layer(state, key, layer, history);
        Ok(())
    }

    /// Adds `layer` (or none) to `state` under `key`, with its history.
    fn add_layer(
        &mut self,
        state: &mut State,
        key: String,
        layer: Option<Descriptor>,
        created_by: String,
    ) {
        let empty_layer = layer.is_none();
        if let Some(layer) = layer {
            state.spec.rootfs.diff_ids.push(layer.digest.clone());
            state.layers.push(layer);
        }
        state.spec.history.push(History {
            created: Some(image::now_rfc3339()),
            created_by: Some(created_by),
            empty_layer,
        });
        state.key = key;
    }

    /// Stores a written tar as a blob; its descriptor.
    fn store_layer(&self, written: layer::Written) -> Result<Descriptor, BuildError> {
        let dest = self.builder.store.blobs().path(&written.digest);
        std::fs::rename(&written.path, &dest).map_err(ImageError::io(format!(
            "storing the layer {}",
            dest.display()
        )))?;
        Ok(Descriptor {
            media_type: LAYER_TAR.into(),
            digest: written.digest,
            size: written.size,
            platform: None,
            annotations: None,
        })
    }

    fn tmp_dir(&self) -> PathBuf {
        self.builder.store.root().join("build-tmp")
    }

    fn run(
        &mut self,
        state: &mut State,
        instruction: &Instruction,
        step: &str,
    ) -> Result<(), BuildError> {
        let mut network = self.options.network;
        for Flag { name, value } in &instruction.flags {
            match (name.as_str(), value.as_deref()) {
                ("network", Some("none")) => network = false,
                ("network", Some("default" | "host")) if self.options.network => {}
                ("network", Some(other)) => {
                    return Err(self.error(instruction, format!("--network={other} needs the build's network: run `swerve images build --network`")));
                }
                ("mount", _) => {
                    return Err(self.error(instruction, "RUN --mount (cache, bind, secret, ssh, tmpfs mounts) is not supported by swerve's builder: COPY what the command needs into the image, or drop the mount"));
                }
                (other, _) => {
                    return Err(self.error(
                        instruction,
                        format!("RUN --{other} is not supported by swerve's builder"),
                    ));
                }
            }
        }
        let user = state.spec.config.user.clone().unwrap_or_default();
        if !matches!(user.as_str(), "" | "root" | "0" | "0:0" | "root:root") {
            return Err(self.error(instruction, format!("RUN as USER {user} is not supported yet: swerve's sandbox runs build commands as root; move `USER {user}` after the RUN instructions (it is recorded in the image either way)")));
        }
        let args = instruction.args.as_str();
        let command = match words::json_form(args) {
            Some(argv) if !argv.is_empty() => {
                argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
            }
            Some(_) => return Err(self.error(instruction, "RUN [] has no command")),
            None => self.shell_command(state, instruction)?,
        };
        let command = match words::json_form(args) {
            Some(_) => format!("exec {command}"),
            None => command,
        };
        if command.trim().is_empty() {
            return Err(self.error(instruction, "RUN needs a command"));
        }
        let workdir = Self::workdir_of(state);
        let mut env: Vec<(String, String)> = state
            .args
            .iter()
            .filter_map(|(name, value)| Some((name.clone(), value.clone()?)))
            .filter(|(name, _)| state.spec.config.env_var(name).is_none())
            .collect();
        env.extend(
            state
                .spec
                .config
                .env
                .iter()
                .flatten()
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
        );
        let display = if instruction.heredocs.is_empty() {
            args.to_owned()
        } else {
            format!("{args} …")
        };
        let number = self.announce(step, instruction, &display);
        let env_key = serde_json::to_string(&env).unwrap_or_default();
        let key = chain(
            &state.key,
            &["RUN", &command, &env_key, &workdir, &network.to_string()],
        );
        let history = format!("RUN {}", args);
        if let Some(layer) = self.cached(&key) {
            self.say(&format!("#{number} CACHED"));
            self.cached += 1;
            self.add_layer(state, key, layer, history);
            return Ok(());
        }
        let started = Instant::now();
        let lowers = self.layer_dirs(state)?;
        let tree_before = Tree::layers(lowers.clone());
        let lowers = if lowers.is_empty() {
            let empty = self.tmp_dir().join("empty");
            std::fs::create_dir_all(&empty).map_err(ImageError::io("creating an empty layer"))?;
            vec![empty]
        } else {
            lowers
        };
        let home = state
            .spec
            .config
            .env_var("HOME")
            .unwrap_or_else(|| "/root".into());
        let mut sandbox = self.builder.sandbox.clone();
        sandbox.network = network;
        sandbox.workdir = Some(PathBuf::from(&workdir));
        sandbox.home = PathBuf::from(&home);
        sandbox.env = BTreeMap::new();
        sandbox.hosts = BTreeMap::new();
        sandbox.limits.disk_bytes = None;
        let root = ImageRoot {
            reference: format!("{}:{}", self.file.file, instruction.line),
            layers: lowers,
            env,
            working_dir: Some(PathBuf::from(&workdir)),
            user: None,
        };
        let options = WorkspaceOptions {
            sandbox,
            ..WorkspaceOptions::default()
        };
        let sandbox_error = |error: String| {
            self.error(
                instruction,
                format!("cannot start the build sandbox: {error}"),
            )
        };
        let workspace = Workspace::create_over_layers(self.builder.cache, &root, &options)
            .map_err(|error| sandbox_error(error.to_string()))?;
        let outcome = workspace
            .sandbox()
            .run(&command, RUN_TIMEOUT)
            .map_err(|error| sandbox_error(error.to_string()))?;
        for stream in [&outcome.stdout, &outcome.stderr] {
            let text = String::from_utf8_lossy(stream);
            for line in text.lines() {
                let elapsed = started.elapsed().as_secs_f64();
                self.say(&format!("#{number} {elapsed:.3} {line}"));
            }
        }
        if outcome.exit_code != Some(0) {
            let status = match (outcome.exit_code, outcome.signal, outcome.timed_out) {
                (_, _, true) => "timed out".to_owned(),
                (Some(code), _, _) => format!("exit code {code}"),
                (None, Some(signal), _) => format!("signal {signal}"),
                _ => "an unknown status".to_owned(),
            };
            return Err(self.error(
                instruction,
                format!("the command failed with {status}: {args}"),
            ));
        }
        let tmp = self.tmp_dir();
        std::fs::create_dir_all(&tmp).map_err(ImageError::io("creating build-tmp"))?;
        let upper = tmp.join(format!("upper-{}-{number}", std::process::id()));
        crate::remove_tree(&upper);
        workspace.keep_changes(&upper).map_err(|error| {
            self.error(
                instruction,
                format!("cannot keep the command's changes: {error}"),
            )
        })?;
        remove_stubs(&upper, &tree_before, &home);
        let layer = self.finish_upper(&upper);
        crate::remove_tree(&upper);
        let layer = layer?;
        self.ran_step(state, key, layer, history, Some((number, started)))
    }

    /// The layer of a `RUN`'s changes at `upper`: its diff stored as a blob, and `upper`
    /// itself kept as the unpacked layer when none is there yet.
    fn finish_upper(&self, upper: &Path) -> Result<Option<Descriptor>, BuildError> {
        let mut tar =
            LayerTar::create(&self.tmp_dir()).map_err(ImageError::io("creating a layer"))?;
        layer::diff_upper(&mut tar, upper, self.ids)
            .map_err(ImageError::io("writing the layer"))?;
        let Some(written) = tar.finish().map_err(ImageError::io("writing the layer"))? else {
            return Ok(None);
        };
        let descriptor = self.store_layer(written)?;
        let unpacked = self
            .builder
            .store
            .root()
            .join("layers")
            .join(self.ids.key())
            .join(descriptor.digest.trim_start_matches("sha256:"));
        if !unpacked.exists() {
            let _ = std::fs::create_dir_all(unpacked.parent().unwrap_or(Path::new("/")));
            let _ = std::fs::rename(upper, &unpacked);
        }
        Ok(Some(descriptor))
    }

    /// A shell-form `RUN`'s command for `/bin/sh -c`, with its heredocs.
    fn shell_command(
        &self,
        state: &State,
        instruction: &Instruction,
    ) -> Result<String, BuildError> {
        let args = instruction.args.trim();
        let mut script = match instruction.heredocs.as_slice() {
            // `RUN <<EOF`: the heredoc is the script.
            [only]
                if args
                    .trim_start_matches("<<")
                    .trim_start_matches('-')
                    .trim_matches(['"', '\''])
                    == only.name =>
            {
                if only.content.starts_with("#!") {
                    let marker = "SWERVE_HEREDOC_END";
                    if only.content.lines().any(|line| line == marker) {
                        return Err(self.error(
                            instruction,
                            format!(
                                "the heredoc holds a line {marker}, which swerve uses to pass it"
                            ),
                        ));
                    }
                    format!(
                        "cat > /tmp/.swerve-heredoc <<'{marker}'\n{}{marker}\nchmod +x /tmp/.swerve-heredoc && exec /tmp/.swerve-heredoc",
                        only.content
                    )
                } else {
                    only.content.clone()
                }
            }
            heredocs => {
                let mut text = args.to_owned();
                text.push('\n');
                for heredoc in heredocs {
                    text.push_str(&heredoc.content);
                    text.push_str(&heredoc.name);
                    text.push('\n');
                }
                text
            }
        };
        let shell = self.shell(state);
        if shell != ["/bin/sh", "-c"] {
            let mut argv: Vec<String> = shell.iter().map(|w| quote(w)).collect();
            argv.push(quote(&script));
            script = format!("exec {}", argv.join(" "));
        }
        Ok(script)
    }

    fn workdir(
        &mut self,
        state: &mut State,
        instruction: &Instruction,
        step: &str,
    ) -> Result<(), BuildError> {
        let dir = self.expand(instruction, state, &instruction.args)?;
        let current = Self::workdir_of(state);
        let dir = normalize(&if dir.starts_with('/') {
            dir
        } else {
            format!("{current}/{dir}")
        });
        state.spec.config.working_dir = Some(dir.clone());
        let number = self.announce(step, instruction, &dir);
        let key = chain(&state.key, &["WORKDIR", &dir]);
        let history = format!("WORKDIR {dir}");
        if let Some(layer) = self.cached(&key) {
            self.say(&format!("#{number} CACHED"));
            self.cached += 1;
            self.add_layer(state, key, layer, history);
            return Ok(());
        }
        let tree = Tree::layers(self.layer_dirs(state)?);
        let relative = dir.trim_start_matches('/').to_owned();
        let mut entries = Vec::new();
        if !relative.is_empty() && tree.get(&relative).is_none() {
            self.parents(&tree, &format!("{relative}/x"), &mut entries);
        }
        let layer = self.write_entries(instruction, entries)?;
        self.ran_step(state, key, layer, history, None)
    }

    /// Entries for the directories leading to `path` (relative): those the stage has, as it
    /// has them; the others made `0755` and owned by root.
    fn parents(&self, tree: &Tree, path: &str, entries: &mut Vec<Entry>) {
        let parts: Vec<&str> = path.split('/').collect();
        let now = now_secs();
        for n in 1..parts.len() {
            let dir = parts[..n].join("/");
            if entries.iter().any(|entry| entry.path == dir) {
                continue;
            }
            let attributes = tree
                .get(&dir)
                .and_then(|host| std::fs::symlink_metadata(host).ok())
                .filter(|meta| meta.is_dir())
                .map(|meta| layer::attributes(self.ids, &meta))
                .unwrap_or(Attributes {
                    uid: 0,
                    gid: 0,
                    mode: 0o755,
                    mtime: now,
                });
            entries.push(Entry {
                path: dir,
                content: Content::Dir,
                attributes,
            });
        }
    }

    /// Writes `entries` as a layer and stores it; `None` when there are none.
    fn write_entries(
        &self,
        instruction: &Instruction,
        entries: Vec<Entry>,
    ) -> Result<Option<Descriptor>, BuildError> {
        let io =
            |error: std::io::Error| self.error(instruction, format!("writing the layer: {error}"));
        let mut tar = LayerTar::create(&self.tmp_dir()).map_err(io)?;
        for entry in &entries {
            match &entry.content {
                Content::Dir => tar.dir(&entry.path, entry.attributes),
                Content::File(host) => tar.file(&entry.path, entry.attributes, host),
                Content::Data(data) => tar.data(&entry.path, entry.attributes, data),
                Content::Symlink(target) => tar.symlink(&entry.path, entry.attributes, target),
                Content::Archive(host) => extract_into(&mut tar, &entry.path, host),
            }
            .map_err(io)?;
        }
        match tar.finish().map_err(io)? {
            Some(written) => Ok(Some(self.store_layer(written)?)),
            None => Ok(None),
        }
    }

    fn copy(
        &mut self,
        state: &mut State,
        instruction: &Instruction,
        step: &str,
    ) -> Result<(), BuildError> {
        let add = instruction.keyword == "ADD";
        let escape = self.file.escape;
        let (mut from, mut chown, mut chmod) = (None, None, None);
        for Flag { name, value } in &instruction.flags {
            let value = value.clone().unwrap_or_default();
            match name.as_str() {
                "from" if !add => from = Some(self.expand(instruction, state, &value)?),
                "chown" => chown = Some(self.expand(instruction, state, &value)?),
                "chmod" => {
                    chmod = Some(u32::from_str_radix(&value, 8).map_err(|_| {
                        self.error(
                            instruction,
                            format!("--chmod={value} is not an octal mode (e.g. 0755)"),
                        )
                    })?)
                }
                "link" => {}
                other => {
                    return Err(self.error(
                        instruction,
                        format!(
                            "{} --{other} is not supported by swerve's builder",
                            instruction.keyword
                        ),
                    ));
                }
            }
        }
        let raw = match words::json_form(&instruction.args) {
            Some(words) => words,
            None => words::split(&instruction.args, escape),
        };
        let mut words = Vec::new();
        for word in &raw {
            words.push(self.expand(instruction, state, word)?);
        }
        let Some((dest, sources)) = words.split_last().filter(|(_, s)| !s.is_empty()) else {
            return Err(self.error(
                instruction,
                format!("expected {} SOURCE… DEST", instruction.keyword),
            ));
        };
        let source_tree = match &from {
            None => None,
            Some(name) => Some(self.source_stage(instruction, name)?),
        };
        let stage_tree = Tree::layers(self.layer_dirs(state)?);
        let workdir = Self::workdir_of(state);
        let dest_abs = normalize(&if dest.starts_with('/') {
            dest.clone()
        } else {
            format!("{workdir}/{dest}")
        });
        let dest_rel = dest_abs.trim_start_matches('/').to_owned();
        let owner = match &chown {
            Some(spec) => {
                resolve_owner(&stage_tree, spec).map_err(|why| self.error(instruction, why))?
            }
            None => (0, 0),
        };
        let tree = source_tree.as_ref().unwrap_or(&self.context);
        let mut items: Vec<(String, Option<String>)> = Vec::new(); // (relative source, heredoc content)
        for source in sources {
            if let Some(heredoc) = source.strip_prefix("<<").and_then(|name| {
                let name = name.trim_start_matches('-').trim_matches(['"', '\'']);
                instruction.heredocs.iter().find(|h| h.name == name)
            }) {
                let content = if heredoc.expand {
                    let vars = Self::lookup(state);
                    words::substitute(&heredoc.content, escape, &vars)
                        .map_err(|why| self.error(instruction, why))?
                } else {
                    heredoc.content.clone()
                };
                items.push((heredoc.name.clone(), Some(content)));
                continue;
            }
            if source.contains("://") || source.starts_with("git@") {
                return Err(self.error(instruction, if add {
                    format!("ADD of a URL ({source}) is not supported by swerve's builder yet: download it in a RUN (with `swerve images build --network`)")
                } else {
                    format!("COPY takes no URLs ({source}); ADD fetches URLs")
                }));
            }
            let relative = normalize(&format!("/{source}"))
                .trim_start_matches('/')
                .to_owned();
            if tree::has_magic(&relative) {
                let matched = tree.glob(&relative);
                if matched.is_empty() {
                    return Err(self.error(
                        instruction,
                        format!(
                            "no source files match {source} in {}",
                            self.where_from(&from)
                        ),
                    ));
                }
                items.extend(matched.into_iter().map(|m| (m, None)));
            } else if tree.get(&relative).is_some() || relative.is_empty() {
                items.push((relative, None));
            } else {
                return Err(self.error(
                    instruction,
                    format!(
                        "{source} not found in {} (is it excluded by .dockerignore?)",
                        self.where_from(&from)
                    ),
                ));
            }
        }
        let dest_is_dir = dest.ends_with('/')
            || dest.ends_with("/.")
            || dest == "."
            || stage_tree
                .get(&dest_rel)
                .and_then(|host| std::fs::metadata(host).ok())
                .is_some_and(|meta| meta.is_dir());
        if items.len() > 1 && !dest_is_dir {
            return Err(self.error(instruction, format!("with more than one source the destination must be a directory ending in /: {dest}/")));
        }
        let now = now_secs();
        let mut entries: Vec<Entry> = Vec::new();
        let attributes = |meta: &std::fs::Metadata| Attributes {
            uid: owner.0,
            gid: owner.1,
            mode: chmod
                .unwrap_or(std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o7777),
            mtime: std::os::unix::fs::MetadataExt::mtime(meta).max(0) as u64,
        };
        let mut hasher = Sha256::new();
        for (relative, heredoc) in &items {
            if let Some(content) = heredoc {
                let path = if dest_is_dir {
                    tree::join(&dest_rel, relative)
                } else {
                    dest_rel.clone()
                };
                hasher.update(format!("heredoc {path} {}\n", content.len()));
                hasher.update(content.as_bytes());
                self.parents(&stage_tree, &path, &mut entries);
                entries.push(Entry {
                    path,
                    content: Content::Data(content.clone().into_bytes()),
                    attributes: Attributes {
                        uid: owner.0,
                        gid: owner.1,
                        mode: chmod.unwrap_or(0o644),
                        mtime: now,
                    },
                });
                continue;
            }
            let resolved = resolve(tree, relative).ok_or_else(|| {
                self.error(
                    instruction,
                    format!(
                        "{relative}: a symbolic link that leads nowhere in {}",
                        self.where_from(&from)
                    ),
                )
            })?;
            let host = tree.get(&resolved).ok_or_else(|| {
                self.error(
                    instruction,
                    format!(
                        "{relative}: a symbolic link to {resolved}, which is not in {}",
                        self.where_from(&from)
                    ),
                )
            })?;
            let meta = std::fs::metadata(&host)
                .map_err(|error| self.error(instruction, format!("{relative}: {error}")))?;
            if meta.is_dir() {
                if !dest_rel.is_empty() {
                    self.parents(&stage_tree, &dest_rel, &mut entries);
                    if !entries.iter().any(|e| e.path == dest_rel) {
                        entries.push(Entry {
                            path: dest_rel.clone(),
                            content: Content::Dir,
                            attributes: attributes(&meta),
                        });
                    }
                }
                self.copy_dir(
                    tree,
                    &resolved,
                    &dest_rel,
                    &attributes,
                    &mut entries,
                    &mut hasher,
                )
                .map_err(|error| self.error(instruction, format!("{relative}: {error}")))?;
                continue;
            }
            let name = relative.rsplit('/').next().unwrap_or(relative);
            let archive = add
                && is_archive(&host)
                    .map_err(|why| self.error(instruction, format!("{relative}: {why}")))?;
            let path = if dest_is_dir && !archive {
                tree::join(&dest_rel, name)
            } else {
                dest_rel.clone()
            };
            self.parents(&stage_tree, &path, &mut entries);
            hash_file(&mut hasher, &path, &meta, &host)
                .map_err(|error| self.error(instruction, format!("{relative}: {error}")))?;
            entries.push(Entry {
                path,
                content: if archive {
                    Content::Archive(host)
                } else {
                    Content::File(host)
                },
                attributes: attributes(&meta),
            });
        }
        let display = instruction.args.clone();
        let number = self.announce(step, instruction, &display);
        let text = format!(
            "{} {:?} {:?} {:?} {:?} {}",
            instruction.keyword, from, chown, chmod, words, dest_abs
        );
        let digest = format!("{:x}", hasher.finalize());
        let key = chain(&state.key, &[&text, &digest]);
        let history = format!("{} {}", instruction.keyword, instruction.args);
        if let Some(layer) = self.cached(&key) {
            self.say(&format!("#{number} CACHED"));
            self.cached += 1;
            self.add_layer(state, key, layer, history);
            return Ok(());
        }
        let started = Instant::now();
        let layer = self.write_entries(instruction, entries)?;
        self.ran_step(state, key, layer, history, Some((number, started)))
    }

    fn where_from(&self, from: &Option<String>) -> String {
        match from {
            None => format!("the build context {}", self.options.context.display()),
            Some(stage) => format!("stage {stage}"),
        }
    }

    /// The tree `COPY --from=NAME` reads: an earlier stage (by name or index), or a stored
    /// image.
    fn source_stage(&mut self, instruction: &Instruction, name: &str) -> Result<Tree, BuildError> {
        if let Some(index) = self.stage_index(name) {
            let current = self
                .stages
                .iter()
                .position(|s| s.body.iter().any(|i| std::ptr::eq(*i, instruction)))
                .unwrap_or(usize::MAX);
            if index >= current {
                return Err(self.error(instruction, format!("--from={name} names this stage or a later one; only earlier stages can be copied from")));
            }
            let state = self.build_stage(index)?;
            return Ok(Tree::layers(self.layer_dirs(&state)?));
        }
        let record = self.builder.store.record(name)?.ok_or_else(|| {
            self.error(instruction, format!("--from={name} is neither a stage of this Dockerfile ({}) nor an image in swerve's store", self.stage_names()))
        })?;
        Ok(Tree::layers(
            self.builder.store.root_for(&record, self.ids)?.layers,
        ))
    }

    /// Entries for the contents of the directory `source` of `tree` under `dest`.
    fn copy_dir(
        &self,
        tree: &Tree,
        source: &str,
        dest: &str,
        attributes: &dyn Fn(&std::fs::Metadata) -> Attributes,
        entries: &mut Vec<Entry>,
        hasher: &mut Sha256,
    ) -> std::io::Result<()> {
        for (name, host) in tree.list(source) {
            let path = tree::join(dest, &name);
            let meta = std::fs::symlink_metadata(&host)?;
            hash_file(hasher, &path, &meta, &host)?;
            let content = if meta.is_dir() {
                Content::Dir
            } else if meta.file_type().is_symlink() {
                Content::Symlink(std::fs::read_link(&host)?)
            } else if meta.is_file() {
                Content::File(host.clone())
            } else {
                continue;
            };
            let is_dir = meta.is_dir();
            entries.push(Entry {
                path: path.clone(),
                content,
                attributes: attributes(&meta),
            });
            if is_dir {
                self.copy_dir(
                    tree,
                    &tree::join(source, &name),
                    &path,
                    attributes,
                    entries,
                    hasher,
                )?;
            }
        }
        Ok(())
    }
}

/// `relative` with its symbolic links resolved inside `tree` (at most 40).
fn resolve(tree: &Tree, relative: &str) -> Option<String> {
    let mut current = relative.to_owned();
    for _ in 0..40 {
        let Some(host) = tree.get(&current) else {
            return Some(current);
        };
        let Ok(target) = std::fs::read_link(&host) else {
            return Some(current);
        };
        let target = target.to_string_lossy().into_owned();
        let base = match current.rsplit_once('/') {
            Some((dir, _)) => format!("/{dir}"),
            None => String::new(),
        };
        current = normalize(&if target.starts_with('/') {
            target
        } else {
            format!("{base}/{target}")
        })
        .trim_start_matches('/')
        .to_owned();
    }
    None
}

/// Hashes what a copied entry is (not its modification time), for the cache key.
fn hash_file(
    hasher: &mut Sha256,
    path: &str,
    meta: &std::fs::Metadata,
    host: &Path,
) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    hasher.update(format!("{path}\0{:o}\0{}\0", meta.mode(), meta.len()));
    if meta.file_type().is_symlink() {
        hasher.update(std::fs::read_link(host)?.as_os_str().as_encoded_bytes());
    } else if meta.is_file() {
        std::io::copy(&mut std::fs::File::open(host)?, hasher)?;
    }
    Ok(())
}

/// `path` absolute with `.` and `..` resolved (never above `/`) and no trailing `/`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Go-style durations: `1h2m3s`, `500ms`, `1.5s`, in nanoseconds.
fn parse_duration(text: &str) -> Option<u64> {
    let mut total = 0f64;
    let mut rest = text;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    Some(total as u64)
}

/// `user[:group]` as ids, names looked up in the stage's `/etc/passwd` and `/etc/group`.
fn resolve_owner(tree: &Tree, spec: &str) -> Result<(u64, u64), String> {
    let lookup = |file: &str, name: &str| -> Result<(u64, u64), String> {
        if let Ok(id) = name.parse::<u64>() {
            return Ok((id, id));
        }
        let text = tree
            .get(file)
            .and_then(|host| std::fs::read_to_string(host).ok())
            .ok_or_else(|| {
                format!(
                    "--chown: cannot look up \"{name}\": the image has no /{file}; use numeric ids"
                )
            })?;
        text.lines()
            .map(|line| line.split(':').collect::<Vec<_>>())
            .find(|fields| fields.first() == Some(&name))
            .and_then(|fields| {
                let id = fields.get(2)?.parse().ok()?;
                let group = fields.get(3).and_then(|g| g.parse().ok()).unwrap_or(id);
                Some((id, group))
            })
            .ok_or_else(|| format!("--chown: no \"{name}\" in the image's /{file}"))
    };
    match spec.split_once(':') {
        Some((user, group)) => Ok((lookup("etc/passwd", user)?.0, lookup("etc/group", group)?.0)),
        None => lookup("etc/passwd", spec),
    }
}

/// Whether the host file `path` is a tar archive `ADD` extracts (plain, gzip or zstd); an
/// error for bzip2 and xz archives, which swerve cannot read.
fn is_archive(path: &Path) -> Result<bool, String> {
    use std::io::Read;
    let mut head = [0u8; 512];
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(error) => return Err(error.to_string()),
        }
    }
    let head = &head[..n];
    if head.starts_with(b"BZh") || head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        return Err("a bzip2 or xz archive, which swerve's builder cannot extract: decompress it first, or ADD a .tar, .tar.gz or .tar.zst".into());
    }
    if head.starts_with(&[0x1f, 0x8b]) || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return Ok(true);
    }
    Ok(n >= 262 && &head[257..262] == b"ustar")
}

/// Copies the entries of the archive `host` into `tar` under the directory `dest`.
fn extract_into(tar: &mut LayerTar, dest: &str, host: &Path) -> std::io::Result<()> {
    let file = std::io::BufReader::new(std::fs::File::open(host)?);
    let mut head = [0u8; 4];
    {
        use std::io::Read;
        let _ = std::fs::File::open(host)?.read(&mut head)?;
    }
    let reader: Box<dyn std::io::Read> = if head[..2] == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else if head == [0x28, 0xb5, 0x2f, 0xfd] {
        Box::new(ruzstd::decoding::StreamingDecoder::new(file).map_err(std::io::Error::other)?)
    } else {
        Box::new(file)
    };
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        let clean = normalize(&format!("/{}", path.to_string_lossy()));
        if clean == "/" {
            continue;
        }
        let target = format!("{dest}{clean}").trim_start_matches('/').to_owned();
        let header = entry.header().clone();
        let link = match header.entry_type() {
            tar::EntryType::Link => entry.link_name()?.map(|link| {
                PathBuf::from(
                    format!(
                        "{dest}{}",
                        normalize(&format!("/{}", link.to_string_lossy()))
                    )
                    .trim_start_matches('/'),
                )
            }),
            tar::EntryType::Symlink => entry.link_name()?.map(|link| link.into_owned()),
            _ => None,
        };
        tar.entry(&target, &header, link.as_deref(), &mut entry)?;
    }
    Ok(())
}

/// Removes from a `RUN`'s changes the mount points its sandbox made (`/proc`, `/sys`, `/dev`,
/// `/tmp`, `/run`, `HOME`) where the stage had none and they are empty, as BuildKit removes
/// its mount stubs.
fn remove_stubs(upper: &Path, before: &Tree, home: &str) {
    let home = home.trim_start_matches('/');
    for stub in ["proc", "sys", "dev", "tmp", "run", home] {
        if stub.is_empty() || before.get(stub).is_some() {
            continue;
        }
        let mut path = upper.join(stub);
        loop {
            if std::fs::remove_dir(&path).is_err() {
                break;
            }
            // Parents the sandbox made for HOME (`/home` of `/home/user`), if now empty.
            match path.parent() {
                Some(parent)
                    if parent != upper
                        && before
                            .get(
                                parent
                                    .strip_prefix(upper)
                                    .map(|p| p.to_string_lossy().into_owned())
                                    .unwrap_or_default()
                                    .as_str(),
                            )
                            .is_none() =>
                {
                    path = parent.to_path_buf()
                }
                _ => break,
            }
        }
    }
}

/// Linux's default `PATH`, which BuildKit (and buildah) give a stage whose base image sets none
/// (`scratch` included), so `RUN` finds its programs and the built image records it.
const DEFAULT_PATH: &str = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Adds [`DEFAULT_PATH`] to `spec`'s environment when it has no `PATH`.
fn with_default_path(spec: &mut ImageSpec) {
    let env = spec.config.env.get_or_insert_with(Vec::new);
    if !env.iter().any(|entry| entry.starts_with("PATH=")) {
        env.insert(0, DEFAULT_PATH.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_paths() {
        assert_eq!(parse_duration("30s"), Some(30_000_000_000));
        assert_eq!(parse_duration("1m30s"), Some(90_000_000_000));
        assert_eq!(parse_duration("500ms"), Some(500_000_000));
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(normalize("/a/./b/../c/"), "/a/c");
        assert_eq!(normalize("../../x"), "/x");
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
