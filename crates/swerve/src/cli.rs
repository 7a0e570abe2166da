//! Command-line syntax: every subcommand and option of `swerve`.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use swerve_agent::agile::WindowPolicy;
use swerve_core::registry::Registry;
use swerve_train::export::exporter::Format;
use swerve_train::tts::SelectBy;

use swerve_rollout::config::EvaluatorKind;
use swerve_rollout::config::layers::{given, toml_string};

/// swerve: run, grade and learn from software-engineering agents.
#[derive(Debug, Parser)]
#[command(name = "swerve", version = env!("SWERVE_VERSION"), about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOptions,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand accepts.
#[derive(Debug, Args)]
pub struct GlobalOptions {
    /// Configuration file (default: ./swerve.toml if present).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Apply a preset over the configuration file: a built-in name (`swerve config presets`)
    /// or a TOML file. Repeatable; later ones win.
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub preset: Vec<String>,
    /// Override one setting, e.g. `--set agent.max_steps=30` or `--set model.sampling.temperature=0.6`.
    /// Applied after everything else. Repeatable.
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Cache directory for base checkouts and workspaces (default: ~/.cache/swerve).
    #[arg(long, global = true, value_name = "DIR", env = "SWERVE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Directory holding task repositories as DIR/owner/name (a clone, a .git or a .bundle).
    #[arg(long, global = true, value_name = "DIR")]
    pub repos: Option<PathBuf>,
    /// Isolation of commands.
    #[arg(long, global = true, value_enum)]
    pub isolation: Option<IsolationArg>,
    /// How workspaces are layered over their base.
    #[arg(long, global = true, value_enum)]
    pub strategy: Option<StrategyArg>,
    /// Let sandboxed commands use the network (off by default).
    #[arg(long, global = true)]
    pub network: bool,
    /// More logging (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum IsolationArg {
    Auto,
    Namespaces,
    None,
}

/// The values of an option taking a [`Registry`]'s names: clap's possible values, so
/// `--help` lists each with its description and an error for any other value names them
/// all, parsed to the member.
fn registry<T: Registry + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(
        T::ALL
            .iter()
            .map(|member| PossibleValue::new(member.name()).help(member.description())),
    )
    .try_map(|name| T::parse(&name))
}

/// `--by`: [`SelectBy`] as the command line writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SelectByArg {
    /// The highest mean SWR score.
    Swr,
    /// The highest share of FAIL_TO_PASS and PASS_TO_PASS tests passing in real evaluation.
    Tests,
    /// Resolved (by real evaluation) if any candidate is: the pass@k upper bound.
    Oracle,
}

impl From<SelectByArg> for SelectBy {
    fn from(arg: SelectByArg) -> SelectBy {
        match arg {
            SelectByArg::Swr => SelectBy::Swr,
            SelectByArg::Tests => SelectBy::Tests,
            SelectByArg::Oracle => SelectBy::Oracle,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    Auto,
    Overlay,
    Reflink,
    Copy,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect and check task files.
    #[command(subcommand)]
    Tasks(TasksCommand),
    /// Poke at a task's environment by hand.
    #[command(subcommand)]
    Env(EnvCommand),
    /// Replay solution demonstrations through the tools and check their tests pass.
    Demo(DemoArgs),
    /// Run the agent on tasks: trajectories, patches (SWE-bench predictions), a summary.
    Run(RunArgs),
    /// Convert and read trajectories (swerve, mini-swe-agent, SWE-agent, R2E-Gym, OpenHands).
    #[command(subcommand)]
    Traj(TrajCommand),
    /// Grade predictions (or gold / empty patches) by SWE-bench's rules, without Docker.
    Eval(EvalArgs),
    /// Re-execute recorded trajectories (swerve, mini-swe-agent, SWE-agent, R2E-Gym,
    /// OpenHands) in fresh workspaces of their tasks and report, step by step, how swerve's
    /// environment answers beside the recorded one (docs/replay.md).
    Replay(ReplayArgs),
    /// SWE-AGILE's reasoning context: exact tokens per step, compression rates, the
    /// context-size figure, the compression-aware reward.
    #[command(subcommand)]
    Context(ContextCommand),
    /// Training data from trajectories.
    #[command(subcommand)]
    Data(DataCommand),
    /// PR-Edit, SWE-Edit's editor benchmark: mine instances from a git history, run an
    /// editor model on them.
    #[command(subcommand)]
    EditBench(EditBenchCommand),
    /// The rollout service: rollouts, gym-style environments and rewards over HTTP for
    /// trainers (docs/serve.md).
    Serve(ServeArgs),
    /// A Ray node's swerve worker: the run's setup, then jobs, as JSON lines on stdin;
    /// replies on stdout (started by `swerve run --ray`, docs/cluster.md).
    #[command(hide = true)]
    Worker,
    /// Test-time scaling: pick one of K candidate rollouts per task (by the reward
    /// model's score, the real tests or the oracle); TTS@k beside pass@k.
    Select(SelectArgs),
    /// SWE-World's world models measured against real execution.
    #[command(subcommand)]
    World(WorldCommand),
    /// Task images: pull, list, remove, prune (`docs/images.md`).
    #[command(subcommand)]
    Images(ImagesCommand),
    /// A web viewer of runs and trajectories: run summaries and tables, trajectories step by
    /// step, context and token charts, live while a run writes (docs/view.md).
    View(ViewArgs),
    /// Report sandbox capabilities, git, Python interpreters and cache locations.
    Doctor,
    /// Show the resolved configuration, or the built-in presets.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print a shell completion script, e.g. `swerve completions bash > ~/.local/share/bash-completion/completions/swerve`.
    Completions(CompletionsArgs),
    /// Write man pages: swerve(1) on standard output, or one page per command into a directory.
    Man(ManArgs),
}

/// `swerve completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `swerve man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write swerve.1 and a page per command (swerve-run.1, swerve-data-export.1, …) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the configuration that the file, presets and `--set` add up to, as TOML.
    Show,
    /// List the built-in presets with what each sets.
    Presets,
}

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// Load task files and report every problem (exit 1 if any is an error).
    Validate {
        /// Task files (JSON array, JSON lines, or one JSON object).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the tasks of a file: id, repository, base commit, test counts.
    List {
        /// A task file.
        file: PathBuf,
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Select tasks for training: gold patch size, determinism, difficulty from past
    /// runs, duplicates; writes the kept tasks and a report of every decision.
    Curate(CurateArgs),
    /// Certify a task file: build each task's environment, check that its gold patch
    /// resolves it and an empty patch does not, time each phase; a table and a JSON file.
    Check(CheckArgs),
}

/// `swerve tasks check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The task file.
    pub file: PathBuf,
    /// Only these instance ids.
    pub ids: Vec<String>,
    /// Output directory: check.json and the evaluations' logs [default: <FILE stem>.check].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Tasks checked at once.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Extra environment recipes (TOML), overriding the shipped ones [run.recipes].
    #[arg(long, value_name = "FILE")]
    pub recipes: Option<PathBuf>,
    /// Seconds allowed for each evaluation's tests (default 1800).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Keep the tasks already checked in DIR/checks (an interrupted check) and check the rest;
    /// without it every task is checked again.
    #[arg(long)]
    pub resume: bool,
}

/// `swerve tasks curate`.
#[derive(Debug, Args)]
pub struct CurateArgs {
    /// The task file.
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// The task file to write (the kept tasks, in the input's format).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Drop tasks whose gold patch changes more files.
    #[arg(long, value_name = "N")]
    pub max_files: Option<usize>,
    /// Drop tasks whose gold patch adds plus removes more lines.
    #[arg(long, value_name = "N")]
    pub max_lines: Option<usize>,
    /// Output of `swerve eval --gold --repeat N --out DIR`: drop tasks whose gold patch
    /// does not resolve them or whose tests' results varied.
    #[arg(long, value_name = "DIR")]
    pub determinism: Option<PathBuf>,
    /// `swerve run --eval` output directories: drop tasks always solved (see
    /// --max-success-rate) and never solved.
    #[arg(long = "runs", value_name = "DIR", num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// With --runs: drop tasks solved at this rate or more.
    #[arg(long, value_name = "RATE", default_value_t = 1.0)]
    pub max_success_rate: f64,
    /// With --runs: keep tasks no rollout solved.
    #[arg(long)]
    pub keep_unsolved: bool,
    /// Drop tasks with the same problem statement or gold patch as an earlier one.
    #[arg(long)]
    pub dedupe: bool,
    /// The decisions (JSON lines, every task with its reasons) [default: OUT with
    /// .decisions.jsonl].
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// `--tasks` and the options choosing among its tasks (mini-swe-agent's habits).
#[derive(Debug, Args)]
pub struct TasksArgs {
    /// The tasks: a task file (JSON, JSON lines), a Parquet file, or a Hugging Face dataset
    /// hf://ORG/NAME[@REVISION] (read through the HF cache, then the hub; docs/tasks.md).
    #[arg(long, value_name = "SOURCE")]
    pub tasks: String,
    /// The split of an hf:// dataset, e.g. test.
    #[arg(long)]
    pub split: Option<String>,
    /// The subset (configuration) of an hf:// dataset.
    #[arg(long)]
    pub subset: Option<String>,
    /// Only tasks whose instance_id matches REGEX at its start.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Shuffle the tasks with SEED (before --filter and --slice).
    #[arg(long, value_name = "SEED")]
    pub shuffle: Option<u64>,
    /// Only this Python slice of the tasks, START:STOP[:STEP] (e.g. 0:5), after the rest.
    #[arg(long, value_name = "SLICE")]
    pub slice: Option<String>,
}

impl TasksArgs {
    /// The choice, for `swerve_rollout::open::chosen_task_file`.
    pub fn choice(&self) -> swerve_rollout::open::TaskChoice<'_> {
        swerve_rollout::open::TaskChoice {
            tasks: &self.tasks,
            split: self.split.as_deref(),
            subset: self.subset.as_deref(),
            filter: self.filter.as_deref(),
            shuffle: self.shuffle,
            slice: self.slice.as_deref(),
        }
    }
}

/// Which task to open.
#[derive(Debug, Args)]
pub struct TaskSelector {
    /// The task file.
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// The task's instance_id.
    pub id: String,
}

#[derive(Debug, Subcommand)]
pub enum EnvCommand {
    /// Run one shell command in a fresh sandboxed workspace of a task; exit with its status.
    Exec {
        #[command(flatten)]
        task: TaskSelector,
        /// Seconds before the command and everything it started are killed.
        #[arg(long, default_value_t = 120.0)]
        timeout: f64,
        /// The command (joined with spaces and run by /bin/sh -c).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Run tool calls in a fresh workspace of a task and print their observations.
    Tool {
        #[command(flatten)]
        task: TaskSelector,
        /// Tool calls: R2E-Gym XML (<function=NAME>...</function>) or JSON ({"name":..,"arguments":{..}}).
        #[arg(required = true)]
        calls: Vec<String>,
        /// Print the workspace's patch after the calls.
        #[arg(long)]
        patch: bool,
    },
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The task file.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "examples/tasks/tasks.jsonl"
    )]
    pub tasks: PathBuf,
    /// Directory of demonstrations, one <instance_id>.json each.
    #[arg(long, value_name = "DIR", default_value = "examples/demos")]
    pub demos: PathBuf,
    /// Only these instance ids (default: every task with a demonstration).
    pub ids: Vec<String>,
    /// Directory to write each replay's patch and observations to.
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// `swerve replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Trajectory files (any format `swerve traj convert` reads; a mini-swe-agent
    /// `NAME.traj.json` takes the `NAME.report.json` beside it as its recorded verdict).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The task file holding every trajectory's task (by instance id).
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Output directory: trajectories/, results/, report.json, table.md, throughput.json;
    /// an interrupted replay resumes in it.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Grade each replayed patch by SWE-bench's rules and compare with the recorded verdict
    /// [run.eval].
    #[arg(long)]
    pub grade: bool,
    /// Record SWE-World's SWT (and, with --grade, SWR) samples from the replayed runs into
    /// DIR, as `swerve run --record-world-data` does [world.record.dir].
    #[arg(long, value_name = "DIR")]
    pub record_world_data: Option<PathBuf>,
    /// Trajectories replayed at once [run.concurrency].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Replay again the trajectories whose result is already in --out.
    #[arg(long)]
    pub redo: bool,
}

impl ReplayArgs {
    /// The settings these options override.
    pub fn assignments(&self) -> Vec<(String, String)> {
        let path = |path: &PathBuf| toml_string(&path.to_string_lossy());
        given([
            (
                "world.record.dir",
                self.record_world_data.as_ref().map(path),
            ),
            ("run.eval", self.grade.then(|| "true".to_owned())),
            ("run.concurrency", self.concurrency.map(|v| v.to_string())),
        ])
    }
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub tasks: TasksArgs,
    /// SWE-bench predictions (JSON, id-keyed JSON, or JSON lines).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["gold", "empty", "regrade"])]
    pub predictions: Option<PathBuf>,
    /// Grade each task's gold patch (validates tasks and environments).
    #[arg(long, conflicts_with = "empty")]
    pub gold: bool,
    /// Grade an empty patch (FAIL_TO_PASS must fail).
    #[arg(long)]
    pub empty: bool,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run each evaluation N times and report tests whose result varies.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: usize,
    /// Re-grade the logs saved in DIR (an earlier --out) without running anything.
    #[arg(long, value_name = "DIR")]
    pub regrade: Option<PathBuf>,
    /// Evaluations run at once.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Extra environment recipes (TOML), overriding the shipped ones.
    #[arg(long, value_name = "FILE")]
    pub recipes: Option<PathBuf>,
    /// Seconds allowed for each task's tests (default 1800).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Do not reuse cached results.
    #[arg(long)]
    pub no_cache: bool,
    /// How the patches are graded; SWE-World's reward model ([world.reward_model]) runs
    /// nothing (docs/world.md).
    #[arg(long, value_parser = registry::<EvaluatorKind>(), default_value = EvaluatorKind::default().name(), conflicts_with = "regrade")]
    pub evaluator: EvaluatorKind,
    /// Grade on the Ray cluster at ADDRESS (HOST:PORT, ray://HOST:10001 or auto)
    /// [cluster.backend = "ray", cluster.address] (docs/cluster.md).
    #[arg(long, value_name = "ADDRESS", conflicts_with = "regrade")]
    pub ray: Option<String>,
    /// Only these instance ids.
    pub ids: Vec<String>,
}

impl EvalArgs {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        given([
            (
                "cluster.backend",
                self.ray.as_ref().map(|_| toml_string("ray")),
            ),
            ("cluster.address", self.ray.as_deref().map(toml_string)),
        ])
    }
}

/// `swerve run`. Options left out come from the configuration (file, presets, `--set`); the
/// ones given here override it.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub tasks: TasksArgs,
    /// Output directory (trajectories, logs, preds.jsonl, summary.json); reruns resume in it.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// `replay` (replays each task's demonstration), `embedded` (a small model run in this
    /// process on the CPU, see docs/embedded.md), `embedded:PATH` (the embedded model from a
    /// GGUF file or a Hugging Face model directory [model.path]) or a served model's name
    /// [model.name].
    #[arg(long)]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, …), e.g.
    /// http://localhost:8000/v1 [model.base_url].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Environment variable holding the API key, never logged or recorded [model.api_key_env].
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Demonstrations for `--model replay`, one <instance_id>.json each [run.demos].
    #[arg(long, value_name = "DIR")]
    pub demos: Option<PathBuf>,
    /// Tool-call format: xml, xml_last, native, hermes or fenced [run.format].
    #[arg(long)]
    pub format: Option<String>,
    /// Seconds a model request may take, answer included, before it is retried
    /// [model.timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub request_timeout: Option<f64>,
    /// Retries of a failed model request (429, 5xx, timeouts, dropped connections)
    /// [model.max_retries].
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Rollouts per task [run.samples].
    #[arg(long, value_name = "K")]
    pub samples: Option<usize>,
    /// Rollouts at once [run.concurrency].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Model calls per rollout at most [agent.max_steps].
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
    /// Grade each rollout's patch as it ends, by EVALUATOR (by default the tests); the
    /// report and reward go into its trajectory [run.eval, run.evaluator].
    #[arg(long, value_parser = registry::<EvaluatorKind>(), num_args = 0..=1, default_missing_value = EvaluatorKind::default().name(), value_name = "EVALUATOR")]
    pub eval: Option<EvaluatorKind>,
    /// Record world-model training data in DIR: each command the router would simulate
    /// with what it really printed, each graded patch with its real grade
    /// [world.record.dir].
    #[arg(long, value_name = "DIR")]
    pub record_world_data: Option<PathBuf>,
    /// Where commands run: `sandbox`, or `world` (SWE-World: commands that run project code
    /// are answered by the transition model configured under [world.transition_model])
    /// [run.env].
    #[arg(long, value_name = "sandbox|world")]
    pub env: Option<String>,
    /// Run rollouts again even if their trajectory is complete.
    #[arg(long)]
    pub redo: bool,
    /// Run the rollouts on the Ray cluster at ADDRESS (HOST:PORT, ray://HOST:10001 or auto)
    /// [cluster.backend = "ray", cluster.address] (docs/cluster.md).
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
    /// Only these instance ids.
    pub ids: Vec<String>,
}

impl RunArgs {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        let quoted = toml_string;
        let path = |path: &PathBuf| toml_string(&path.to_string_lossy());
        let (model, model_path) = match self.model.as_deref() {
            Some(name) => match swerve_rollout::models::embedded_path(name) {
                Some(file) => (Some(swerve_rollout::models::EMBEDDED), Some(file)),
                None => (Some(name), None),
            },
            None => (None, None),
        };
        given([
            ("model.name", model.map(quoted)),
            ("model.path", model_path.map(quoted)),
            ("model.base_url", self.base_url.as_deref().map(quoted)),
            ("model.api_key_env", self.api_key_env.as_deref().map(quoted)),
            ("run.demos", self.demos.as_ref().map(path)),
            ("run.format", self.format.as_deref().map(quoted)),
            (
                "model.timeout_secs",
                self.request_timeout.map(|v| format!("{v:?}")),
            ),
            ("model.max_retries", self.max_retries.map(|v| v.to_string())),
            ("run.samples", self.samples.map(|v| v.to_string())),
            ("run.concurrency", self.concurrency.map(|v| v.to_string())),
            ("cluster.backend", self.ray.as_ref().map(|_| quoted("ray"))),
            ("cluster.address", self.ray.as_deref().map(quoted)),
            ("agent.max_steps", self.max_steps.map(|v| v.to_string())),
            ("run.eval", self.eval.map(|_| "true".to_owned())),
            ("run.evaluator", self.eval.map(|kind| quoted(kind.name()))),
            (
                "world.record.dir",
                self.record_world_data.as_ref().map(path),
            ),
            ("run.env", self.env.as_deref().map(quoted)),
        ])
    }
}

/// `swerve serve`: each option sets a `[serve]` key (docs/serve.md).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on, `host:port` (serve.listen; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Task file that requests' `task_id` is looked up in (serve.tasks).
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// Directory for trajectories and logs (serve.out).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Rollouts and gradings at once (serve.max_rollouts).
    #[arg(long, value_name = "N")]
    pub max_rollouts: Option<usize>,
}

impl ServeArgs {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        let path = |path: &PathBuf| toml_string(&path.to_string_lossy());
        given([
            ("serve.listen", self.listen.as_deref().map(toml_string)),
            ("serve.tasks", self.tasks.as_ref().map(path)),
            ("serve.out", self.out.as_ref().map(path)),
            (
                "serve.max_rollouts",
                self.max_rollouts.map(|v| v.to_string()),
            ),
        ])
    }
}

/// `swerve view`: serve (or export) the viewer over run directories and trajectory files.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// Run directories (`swerve run --out`, or a folder of them) and trajectory files (any
    /// format `swerve traj convert` reads).
    #[arg(required = true, value_name = "RUN_DIR | TRAJECTORY")]
    pub paths: Vec<PathBuf>,
    /// Address to listen on, `host:port`: loopback by default; any other address requires an
    /// access token. Port 0 picks a free one.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    pub listen: String,
    /// The access token (16 characters or more); off loopback a random one is made when
    /// none is given.
    #[arg(
        long,
        env = "SWERVE_VIEW_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Write the pages as static files (HTML, CSS, JS, data) to DIR instead of serving them.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["listen", "token"])]
    pub export: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum TrajCommand {
    /// Convert a trajectory file of any supported agent to swerve's format.
    Convert {
        /// The file: swerve .jsonl, mini-swe-agent .traj.json, SWE-agent .traj, R2E-Gym .jsonl or OpenHands output.jsonl.
        file: PathBuf,
        /// Output file (one trajectory) or directory (several).
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
    },
    /// Print a trajectory step by step.
    Show {
        /// The file (any supported format).
        file: PathBuf,
        /// Lines shown of each reasoning, observation and patch.
        #[arg(long, default_value_t = 12)]
        width: usize,
    },
}

/// The model whose tokenizer and chat template count the tokens.
#[derive(Debug, Args)]
pub struct TokenizerArgs {
    /// Model directory: tokenizer.json and a chat template (chat_template.jinja or
    /// tokenizer_config.json), e.g. a Hugging Face model's files; or a GGUF file, whose
    /// tokenizer and chat template come from its metadata.
    #[arg(long, value_name = "DIR")]
    pub tokenizer: PathBuf,
    /// A chat template file to use instead of the model's own (as vLLM's
    /// --chat-template), e.g. one that keeps earlier reasoning (docs/agile.md).
    #[arg(long, value_name = "FILE")]
    pub chat_template: Option<PathBuf>,
}

/// The reasoning window the trajectories are seen under.
#[derive(Debug, Args)]
pub struct WindowArgs {
    /// Earlier turns keeping their reasoning: N, a..b (N drawn per trajectory), interleaved
    /// or current_step [default: the N the run recorded].
    #[arg(long, value_name = "N|a..b", value_parser = <WindowPolicy as std::str::FromStr>::from_str)]
    pub window: Option<WindowPolicy>,
    /// Seed of the draw of N from a..b, with the trajectory id (as agent.reasoning.seed).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Tokens per trajectory (and per step): context sent, under the window and with all
    /// reasoning; reasoning, digest and action lengths; compression rates.
    Stats {
        /// Trajectory files (any format `swerve traj convert` reads).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        tokenizer: TokenizerArgs,
        #[command(flatten)]
        window: WindowArgs,
        /// Also print each step.
        #[arg(long)]
        steps: bool,
        /// Print JSON lines, one per trajectory.
        #[arg(long)]
        json: bool,
    },
    /// Draw the context size per step under interleaved, current-step and window-N
    /// thinking as an SVG figure.
    Plot {
        /// Trajectory files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        tokenizer: TokenizerArgs,
        #[command(flatten)]
        window: WindowArgs,
        /// The SVG file to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// The compression-aware reward R = resolved · (1 + β · min(R_comp, γ)), from each
    /// outcome's reward or evaluation report.
    Reward {
        /// Trajectory files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        tokenizer: TokenizerArgs,
        #[command(flatten)]
        window: WindowArgs,
        /// β, the weight of the compression bonus.
        #[arg(long, default_value_t = 0.2)]
        beta: f64,
        /// γ, where the compression rate stops counting.
        #[arg(long, default_value_t = 0.55)]
        gamma: f64,
        /// Added to the last step of runs that ended in format errors or repeats (upstream: -0.5).
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        format_penalty: f64,
        /// Which compression rate: SWE-AGILE's code (final conversation) or its paper (sums over steps).
        #[arg(long, value_enum, default_value_t = RateArg::Code)]
        rate: RateArg,
        /// Record the reward and its parts in each outcome's extra.compression_reward
        /// (swerve trajectory files, rewritten atomically).
        #[arg(long)]
        write: bool,
        /// Print JSON lines, one per trajectory.
        #[arg(long)]
        json: bool,
    },
}

/// Which compression rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RateArg {
    /// 1 - tokens(final conversation, window N) / tokens(with all reasoning).
    Code,
    /// 1 - L_hybrid / L_full, sums over the steps' reasoning, digest, action, observation.
    Paper,
}

#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Snapshot SFT samples: one per assistant step, its context under the window and its
    /// turn (reasoning, digest, action) as the only trained target.
    Snapshots(SnapshotArgs),
    /// Hindsight backfill: a teacher model writes SWE-AGILE reasoning and a digest for
    /// every step of existing trajectories, given the action each step took.
    Backfill(BackfillArgs),
    /// SWE-World's world-model SFT data from samples recorded with `swerve run
    /// --record-world-data`, optionally with the reward labels balanced 1:1.
    World(DataWorldArgs),
    /// Rewards ([reward]) and group-relative advantages of a run's rollouts, grouped by
    /// task: GRPO, Dr.GRPO or RLOO, DAPO's dynamic sampling, pass@k and group statistics.
    Advantages(AdvantagesArgs),
    /// Trainer data: SkyRL step-wise records, verl agent-loop records, TRL
    /// prompt/completion rows, weighted messages or LLaMA-Factory v1 samples; --min-reward
    /// for rejection fine-tuning.
    Export(ExportArgs),
    /// Trainers' prompt datasets for on-policy RL: one row per task with its opening
    /// messages and id, for verl (agent loop `swerve`), SkyRL (env_class `swerve`) or OpenRLHF.
    Prompts(PromptsArgs),
}

/// `swerve data prompts`.
#[derive(Debug, Args)]
pub struct PromptsArgs {
    /// The task file (SWE-bench JSON or JSONL).
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// The trainer.
    #[arg(long, value_enum)]
    pub format: PromptFormatArg,
    /// The file to write: JSON lines, or Parquet when it ends in .parquet (verl).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Only these tasks (default: all).
    pub ids: Vec<String>,
}

/// Trainers of `swerve data prompts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PromptFormatArg {
    /// verl's RL dataset (data_source, prompt, agent_name, extra_info.task_id).
    Verl,
    /// SkyRL's prompt dataset (prompt, env_class, task_id).
    Skyrl,
    /// OpenRLHF's prompt dataset (prompt, label).
    Openrlhf,
}

/// Which trajectories: a run directory's, or files.
#[derive(Debug, Args)]
pub struct TrajectorySource {
    /// A `swerve run` output directory: its trajectories/*.jsonl.
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// Trajectory files (any format `swerve traj convert` reads).
    pub files: Vec<PathBuf>,
}

/// `swerve data advantages`.
#[derive(Debug, Args)]
pub struct AdvantagesArgs {
    #[command(flatten)]
    pub source: TrajectorySource,
    /// How rewards become advantages within a group.
    #[arg(long, value_enum, default_value_t = EstimatorArg::Grpo)]
    pub estimator: EstimatorArg,
    /// The ε added to the standard deviation by `grpo`: verl's 1e-6 by default; TRL's
    /// `GRPOTrainer` adds 1e-4.
    #[arg(long, value_name = "EPS", default_value_t = swerve_train::advantage::EPSILON)]
    pub epsilon: f64,
    /// DAPO's dynamic sampling: drop groups whose rewards are all equal.
    #[arg(long)]
    pub dynamic_sampling: bool,
    /// One row per step (the trajectory's advantage broadcast) instead of per trajectory.
    #[arg(long)]
    pub steps: bool,
    /// The JSON-lines file to write [default: DIR/advantages.jsonl with --run].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the summary (groups, pass@k) as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Advantage estimators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EstimatorArg {
    /// (r - mean) / (std + ε), ε from --epsilon.
    Grpo,
    /// r - mean (Dr. GRPO).
    DrGrpo,
    /// r - mean of the other rollouts (leave-one-out, GRPO++).
    Rloo,
}

/// `swerve data export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub source: TrajectorySource,
    /// The trainer format.
    #[arg(long, value_parser = registry::<Format>())]
    pub format: Format,
    /// The JSON-lines file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Keep only trajectories whose reward ([reward]) is at least this (rejection
    /// fine-tuning: 1 keeps resolved ones).
    #[arg(long, value_name = "R")]
    pub min_reward: Option<f64>,
    /// verl: cut each record's response to this many tokens (verl's
    /// actor_rollout_ref.rollout.response_length), marking it extra_fields.truncated.
    #[arg(long, value_name = "N")]
    pub max_response_len: Option<usize>,
    /// Re-tokenize steps whose token ids were not captured, with --tokenizer's chat
    /// template (a warning: the ids may differ from what the model saw).
    #[arg(long, requires = "tokenizer")]
    pub retokenize: bool,
    /// Model directory (tokenizer.json, chat template) for --retokenize.
    #[arg(long, value_name = "DIR")]
    pub tokenizer: Option<PathBuf>,
    /// A chat template file to use instead of the model's own.
    #[arg(long, value_name = "FILE", requires = "tokenizer")]
    pub chat_template: Option<PathBuf>,
}

/// `swerve data backfill`. Options left out come from the `[backfill]` configuration.
#[derive(Debug, Args)]
pub struct BackfillArgs {
    /// Trajectory files (any format `swerve traj convert` reads).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output directory (trajectories/, rejected/, summary.json); reruns resume in it.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The teacher: a served model's name [backfill.teacher.name].
    #[arg(long, value_name = "MODEL")]
    pub teacher: Option<String>,
    /// Base URL of the teacher's OpenAI-compatible server [backfill.teacher.base_url].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Earlier steps whose reasoning the teacher sees: N, or a..b to draw N per trajectory
    /// [backfill.window].
    #[arg(long, value_name = "N|a..b", value_parser = <WindowPolicy as std::str::FromStr>::from_str)]
    pub window: Option<WindowPolicy>,
    /// Trajectories backfilled at once [backfill.concurrency].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Backfill every trajectory again, also those finished or rejected before.
    #[arg(long)]
    pub redo: bool,
}

impl BackfillArgs {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        let window = |policy: &WindowPolicy| {
            toml::Value::try_from(policy)
                .expect("a window is a TOML value")
                .to_string()
        };
        given([
            (
                "backfill.teacher.name",
                self.teacher.as_deref().map(toml_string),
            ),
            (
                "backfill.teacher.base_url",
                self.base_url.as_deref().map(toml_string),
            ),
            ("backfill.window", self.window.as_ref().map(window)),
            (
                "backfill.concurrency",
                self.concurrency.map(|v| v.to_string()),
            ),
        ])
    }
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Trajectory files (any format `swerve traj convert` reads).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Earlier turns keeping their reasoning in each context: N, a..b (N drawn per
    /// trajectory from the seed and its id), interleaved or current_step.
    #[arg(long, value_name = "N|a..b", value_parser = <WindowPolicy as std::str::FromStr>::from_str)]
    pub window: WindowPolicy,
    /// Seed of the draw of N from a..b (as agent.reasoning.seed).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The JSON-lines file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Rows: chat messages with loss weights, or token ids with a loss mask.
    #[arg(long, value_enum, default_value_t = SampleFormatArg::Messages)]
    pub format: SampleFormatArg,
    /// Model directory whose chat template and tokenizer make the token rows (needed by
    /// --format tokens; with messages, rows get num_tokens).
    #[arg(long, value_name = "DIR")]
    pub tokenizer: Option<PathBuf>,
    /// A chat template file to use instead of the model's own.
    #[arg(long, value_name = "FILE", requires = "tokenizer")]
    pub chat_template: Option<PathBuf>,
    /// Rejection fine-tuning: keep only trajectories whose reward ([reward]) is at least
    /// this, and no sample of a step whose reply had a format error.
    #[arg(long, value_name = "R")]
    pub min_reward: Option<f64>,
}

/// The rows of `swerve data snapshots`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SampleFormatArg {
    /// {"messages": [...]} with loss_weight / train per message.
    Messages,
    /// {"input_ids": [...], "loss_mask": [...]}.
    Tokens,
}

#[derive(Debug, Subcommand)]
pub enum EditBenchCommand {
    /// Mine instances (original file, target file, instruction) from a repository's history:
    /// commits that change one source file within the size limits.
    Build(EditBenchBuildArgs),
    /// Run an editor model on instances: format success, match failures, exact and
    /// normalized match, whole-file rewrites, optionally a judge; results.jsonl and
    /// summary.json.
    Run(EditBenchRunArgs),
    /// Compare the LLM viewer with retrieval baselines (BM25, embeddings) on instances:
    /// recall, precision, F1 and context reduction against the lines each change touches;
    /// viewers.jsonl and viewers-summary.json.
    Viewers(EditBenchViewersArgs),
    /// Export instances as the editor's RL prompts (system and user messages, the target
    /// for the normalized-match reward), for GRPO trainers (SWE-Edit §3.2).
    Export(EditBenchExportArgs),
    /// SWE-Edit's normalized-match reward of editor replies: one JSON line per response
    /// ({"instance_id", "response"}), against the instances' targets.
    Reward(EditBenchRewardArgs),
}

/// `swerve edit-bench export`.
#[derive(Debug, Args)]
pub struct EditBenchExportArgs {
    /// The instance file (JSON lines, as `build` writes it).
    #[arg(long, value_name = "FILE")]
    pub instances: PathBuf,
    /// What to write: `rl`, the editor's prompts with their targets.
    #[arg(long, value_name = "FORMAT", default_value = "rl")]
    pub format: String,
    /// The file to write (JSON lines; `.parquet` for Parquet).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The editor's format policy the prompts offer: adaptive, find-replace or rewrite
    /// [edit.format].
    #[arg(long, value_name = "POLICY")]
    pub edit_format: Option<String>,
    /// Only the instances of this split (`metadata.split`, as `build --split` writes it).
    #[arg(long, value_name = "NAME")]
    pub split: Option<String>,
}

/// `swerve edit-bench reward`.
#[derive(Debug, Args)]
pub struct EditBenchRewardArgs {
    /// The instance file.
    #[arg(long, value_name = "FILE")]
    pub instances: PathBuf,
    /// The responses: JSON lines of {"instance_id", "response"}.
    #[arg(long, value_name = "FILE")]
    pub responses: PathBuf,
    /// Where the rewards go (JSON lines); standard output when not given.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The editor's format policy: adaptive, find-replace or rewrite [edit.format].
    #[arg(long, value_name = "POLICY")]
    pub edit_format: Option<String>,
}

/// `swerve edit-bench build`.
#[derive(Debug, Args)]
pub struct EditBenchBuildArgs {
    /// The git repositories (work trees or bare repositories); give --repo once per
    /// repository.
    #[arg(long, value_name = "DIR", required = true)]
    pub repo: Vec<PathBuf>,
    /// What one change is: a commit changing one file, or a pull request (merge commits on
    /// the first-parent history and refs/pull/N/head refs; each modified file an instance).
    #[arg(long, value_enum, default_value_t = MineUnitArg::Commit)]
    pub by: MineUnitArg,
    /// Split the instances by PR (or commit), e.g. train=2800,val=200,test=500 or
    /// train=0.8,val=0.05,test=0.15; written to metadata.split.
    #[arg(long, value_name = "NAME=WEIGHT,...")]
    pub split: Option<String>,
    /// Seed of the split's order.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Drop instances overlapping these tasks (a SWE-bench task file): the same repository,
    /// or a code line a task's patches change; the dropped ones go to OUT.dropped.jsonl.
    #[arg(long, value_name = "TASKS")]
    pub decontaminate: Option<PathBuf>,
    /// The instance file to write (JSON lines).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Where the history starts.
    #[arg(long, default_value = "HEAD")]
    pub rev: String,
    /// Instances at most (newest commits first).
    #[arg(long, default_value_t = 500, value_name = "N")]
    pub max_instances: usize,
    /// Skip files longer than this many lines.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub max_file_lines: usize,
    /// Skip commits changing more lines than this (added plus deleted).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_changed_lines: usize,
    /// Source file extensions, comma-separated [default: common programming languages].
    #[arg(long, value_delimiter = ',', value_name = "EXT,...")]
    pub ext: Vec<String>,
    /// Have this served model write the instructions instead of taking commit messages
    /// [edit.writer.name].
    #[arg(long, value_name = "MODEL")]
    pub writer: Option<String>,
    /// Base URL of the writer's OpenAI-compatible server [edit.writer.base_url].
    #[arg(long, value_name = "URL")]
    pub writer_base_url: Option<String>,
    /// Writer calls at once.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub concurrency: usize,
}

/// What `edit-bench build` mines per change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MineUnitArg {
    Commit,
    Pr,
}

/// `swerve edit-bench run`.
#[derive(Debug, Args)]
pub struct EditBenchRunArgs {
    /// The instance file (JSON lines: original, target, instruction, metadata).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Output directory: results.jsonl (one line per instance) and summary.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The editor: a served model's name [edit.editor.name].
    #[arg(long, value_name = "MODEL")]
    pub editor: Option<String>,
    /// Base URL of the editor's OpenAI-compatible server [edit.editor.base_url].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// A judge of equivalence: a served model's name [edit.judge.name].
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// Base URL of the judge's server [edit.judge.base_url].
    #[arg(long, value_name = "URL")]
    pub judge_base_url: Option<String>,
    /// Apply a SEARCH block that matches nowhere exactly where it matches with whitespace
    /// ignored [edit.matching.whitespace_fallback].
    #[arg(long)]
    pub whitespace_fallback: bool,
    /// Show the closest lines when a SEARCH block fails [edit.matching.did_you_mean].
    #[arg(long)]
    pub did_you_mean: bool,
    /// Instances in flight at once.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub concurrency: usize,
    /// Only the first N instances.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// `swerve edit-bench viewers`.
#[derive(Debug, Args)]
pub struct EditBenchViewersArgs {
    /// The instance file (JSON lines: original, target, instruction, metadata).
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Output directory: viewers.jsonl (one line per instance and method) and
    /// viewers-summary.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Methods to compare, comma-separated: bm25, embedding, llm [default: bm25, and
    /// embedding and llm when their models are configured].
    #[arg(long, value_delimiter = ',', value_name = "METHOD,...", value_parser = parse_viewer_method)]
    pub methods: Vec<swerve_edit::bench::viewers::Method>,
    /// Lines per chunk of the retrievers.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub chunk_lines: usize,
    /// Chunks the retrievers return.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub top: usize,
    /// BM25's term-frequency saturation k1.
    #[arg(long, default_value_t = 1.2, value_name = "K1")]
    pub bm25_k1: f64,
    /// BM25's length normalization b (0 to 1).
    #[arg(long, default_value_t = 0.75, value_name = "B")]
    pub bm25_b: f64,
    /// The LLM viewer: a served model's name, or `embedded` [edit.viewer.name].
    #[arg(long, value_name = "MODEL")]
    pub viewer: Option<String>,
    /// Base URL of the viewer's OpenAI-compatible server [edit.viewer.base_url].
    #[arg(long, value_name = "URL")]
    pub viewer_base_url: Option<String>,
    /// The embedding model: a served model's name [edit.embedder.name].
    #[arg(long, value_name = "MODEL")]
    pub embedder: Option<String>,
    /// Base URL of the embedder's OpenAI-compatible server (`/embeddings` is appended)
    /// [edit.embedder.base_url].
    #[arg(long, value_name = "URL")]
    pub embedder_base_url: Option<String>,
    /// Instances in flight at once.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub concurrency: usize,
    /// Only the first N instances.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

fn parse_viewer_method(name: &str) -> Result<swerve_edit::bench::viewers::Method, String> {
    name.parse()
}

impl EditBenchCommand {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        let quoted = |value: &Option<String>| value.as_deref().map(toml_string);
        let flag = |on: bool| on.then(|| "true".to_owned());
        match self {
            Self::Build(args) => given([
                ("edit.writer.name", quoted(&args.writer)),
                ("edit.writer.base_url", quoted(&args.writer_base_url)),
            ]),
            Self::Run(args) => given([
                ("edit.editor.name", quoted(&args.editor)),
                ("edit.editor.base_url", quoted(&args.base_url)),
                ("edit.judge.name", quoted(&args.judge)),
                ("edit.judge.base_url", quoted(&args.judge_base_url)),
                (
                    "edit.matching.whitespace_fallback",
                    flag(args.whitespace_fallback),
                ),
                ("edit.matching.did_you_mean", flag(args.did_you_mean)),
            ]),
            Self::Viewers(args) => given([
                ("edit.viewer.name", quoted(&args.viewer)),
                ("edit.viewer.base_url", quoted(&args.viewer_base_url)),
                ("edit.embedder.name", quoted(&args.embedder)),
                ("edit.embedder.base_url", quoted(&args.embedder_base_url)),
            ]),
            Self::Export(args) => given([("edit.format", quoted(&args.edit_format))]),
            Self::Reward(args) => given([("edit.format", quoted(&args.edit_format))]),
        }
    }
}

/// `swerve select`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Run directories holding the candidates (`swerve run --out`): K runs, or one run with
    /// `--samples K`.
    #[arg(long, value_name = "DIR", num_args = 1.., required = true)]
    pub runs: Vec<PathBuf>,
    /// How a candidate is picked: the highest mean SWR score, the most real tests passing,
    /// or the oracle (resolved if any is).
    #[arg(long, value_enum, default_value_t = SelectByArg::Swr)]
    pub by: SelectByArg,
    /// Seed of the draw that breaks ties.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output directory: selection.json and preds.jsonl (the picked patches).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The task file, to score candidates that have no SWR score yet with the reward model
    /// ([world.reward_model]).
    #[arg(long, value_name = "FILE")]
    pub tasks: Option<PathBuf>,
    /// Candidates scored at once with --tasks.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub concurrency: usize,
}

#[derive(Debug, Subcommand)]
pub enum WorldCommand {
    /// SWT's exit-code agreement and output similarity, SWR's accuracy, precision, recall
    /// and F1, from samples recorded with `swerve run --record-world-data` and
    /// `world.record.simulate = true`.
    Fidelity {
        /// Recording directories or sample files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `swerve data world`.
#[derive(Debug, Args)]
pub struct DataWorldArgs {
    /// Recording directories (`--record-world-data DIR`) or sample files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The JSON-lines file to write: {"messages": [system, user, assistant], ...} per sample.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Which samples: SWT (commands), SWR (grades) or both.
    #[arg(long, value_enum, default_value_t = WorldKindArg::Both)]
    pub kind: WorldKindArg,
    /// Subsample SWR samples to as many reward-1 as reward-0 (SWE-World's 1:1 balance).
    #[arg(long)]
    pub balance: bool,
    /// Seed of the subsampling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Reverse-reasoning CoT targets (`<think>…</think>` then the answer), written by the
    /// teacher from each sample's real outcome and filtered by a leak check and the judge
    /// (SWE-World §4.2.2); resumes into --out.
    #[arg(long)]
    pub reasoning: bool,
    /// The teacher: a served model's name [world.cot.teacher.name].
    #[arg(long, value_name = "MODEL")]
    pub teacher: Option<String>,
    /// Base URL of the teacher's OpenAI-compatible server [world.cot.teacher.base_url].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The judge that filters the CoT [world.cot.judge.name].
    #[arg(long, value_name = "MODEL")]
    pub judge: Option<String>,
    /// Base URL of the judge's server (default: the teacher's) [world.cot.judge.base_url].
    #[arg(long, value_name = "URL")]
    pub judge_url: Option<String>,
    /// Where rejected samples go, with the reasons (default: OUT with `.rejected.jsonl`).
    #[arg(long, value_name = "FILE")]
    pub rejected: Option<PathBuf>,
}

impl DataWorldArgs {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        given([
            (
                "world.cot.teacher.name",
                self.teacher.as_deref().map(toml_string),
            ),
            (
                "world.cot.teacher.base_url",
                self.base_url.as_deref().map(toml_string),
            ),
            (
                "world.cot.judge.name",
                self.judge.as_deref().map(toml_string),
            ),
            (
                "world.cot.judge.base_url",
                self.judge_url.as_deref().map(toml_string),
            ),
        ])
    }
}

/// Which world-model samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WorldKindArg {
    Swt,
    Swr,
    Both,
}

/// `swerve images …`.
#[derive(Debug, Subcommand)]
pub enum ImagesCommand {
    /// Pull images from their registries (mirrors and rewrites applied), or import an OCI
    /// layout directory or a `docker save` / OCI archive with `--from`.
    Pull {
        /// Image references, e.g. `swebench/sweb.eval.x86_64.django_1776_django-11099`.
        #[arg(required_unless_present = "tasks")]
        images: Vec<String>,
        /// Pull the images the tasks of this file name.
        #[arg(long)]
        tasks: Option<std::path::PathBuf>,
        /// Import from an OCI layout directory or an archive instead of a registry; the
        /// image is stored under the one reference given.
        #[arg(long)]
        from: Option<std::path::PathBuf>,
        /// With `--from`: the image's name inside the layout or archive.
        #[arg(long)]
        name: Option<String>,
    },
    /// Build an image from a Dockerfile, with no daemon: `RUN` in swerve's sandbox, a layer
    /// cache, multi-stage builds (docs/images.md, "Building images from Dockerfiles").
    Build {
        /// The build context directory (what COPY and ADD read, less `.dockerignore`).
        context: std::path::PathBuf,
        /// The Dockerfile (default: `Dockerfile` in the context).
        #[arg(short = 'f', long = "file")]
        file: Option<std::path::PathBuf>,
        /// Store the image under this reference (repeatable), e.g. `-t myimage:latest`.
        #[arg(short = 't', long = "tag")]
        tags: Vec<String>,
        /// A build argument for ARG, `NAME=value` (repeatable).
        #[arg(long = "build-arg", value_name = "NAME=VALUE")]
        build_args: Vec<String>,
        /// Build this stage (its name or index) instead of the last.
        #[arg(long)]
        target: Option<String>,
        /// Let RUN use the network (off by default).
        #[arg(long)]
        network: bool,
        /// Run every step, ignoring the layer cache.
        #[arg(long)]
        no_cache: bool,
    },
    /// List stored images with their sizes.
    List,
    /// Print the unpacked layer directories of a stored image, topmost first (unpacking
    /// them for this configuration's sandbox ids if needed).
    Root { image: String },
    /// Forget images (their layers are freed by `prune` when no other image uses them).
    Remove {
        #[arg(required = true)]
        images: Vec<String>,
    },
    /// Delete blobs, unpacked layers and partial downloads no stored image uses.
    Prune,
}
