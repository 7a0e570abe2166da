//! Command-line syntax: every subcommand and option of `swerve`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::layers::{given, toml_string};

/// swerve: run, grade and learn from software-engineering agents.
#[derive(Debug, Parser)]
#[command(name = "swerve", version, about, propagate_version = true)]
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
    /// Report sandbox capabilities, git, Python interpreters and cache locations.
    Doctor,
    /// Show the resolved configuration, or the built-in presets.
    #[command(subcommand)]
    Config(ConfigCommand),
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

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The task file.
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
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
    /// Only these instance ids.
    pub ids: Vec<String>,
}

/// `swerve run`. Options left out come from the configuration (file, presets, `--set`); the
/// ones given here override it.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task file.
    #[arg(long, value_name = "FILE")]
    pub tasks: PathBuf,
    /// Output directory (trajectories, logs, preds.jsonl, summary.json); reruns resume in it.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// `replay` (replays each task's demonstration) or a served model's name [model.name].
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
    /// Tool-call format: xml, xml_last, native or hermes [run.format].
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
    /// Grade each rollout's patch by SWE-bench's rules as it ends; the report and reward go
    /// into its trajectory [run.eval].
    #[arg(long)]
    pub eval: bool,
    /// Run rollouts again even if their trajectory is complete.
    #[arg(long)]
    pub redo: bool,
    /// Only these instance ids.
    pub ids: Vec<String>,
}

impl RunArgs {
    /// The options given, as dotted configuration assignments.
    pub fn assignments(&self) -> Vec<(String, String)> {
        let quoted = toml_string;
        let path = |path: &PathBuf| toml_string(&path.to_string_lossy());
        given([
            ("model.name", self.model.as_deref().map(quoted)),
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
            ("agent.max_steps", self.max_steps.map(|v| v.to_string())),
            ("run.eval", self.eval.then(|| "true".to_owned())),
        ])
    }
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
