//! The one model factory: every model swerve talks to is built here from its configuration
//! section, whatever its role.
//!
//! - The agent's model ([`ModelSource`], `[model]`): a replay of each task's demonstration
//!   (`replay`), a served model over HTTP (one client shared by every rollout), or the
//!   embedded model run in this process (`embedded`, one loaded model shared by every
//!   rollout); with the chat template of prompt-rendered mode ([`prompt_renderer`]).
//! - A model a section other than the agent's names ([`chat`]): SWE-Edit's viewer and
//!   editor, edit-bench's editor, judge and writer, the backfill teacher.
//! - SWE-World's models ([`optional`], [`require`]): transition, reward and analysis.
//!
//! The embedded model is a small GGUF model run on the CPU by `swerve-embedded` when swerve
//! is built with the `embedded` feature (on by default); see `docs/embedded.md`. Loading it
//! logs a one-line description at the [`NOTICE`] target, which the command line prints.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use swerve_chat::ChatModel;
use swerve_core::Task;
use swerve_core::demonstration::Demonstration;
use swerve_llm::{ApiMode, HttpModel, HttpModelConfig, Model, PriceTable, ReplayModel};
use swerve_tools::formats::ToolFormat;

use crate::config::Config;

/// The `tracing` target of what a library step tells the person at the terminal (the
/// embedded model it loaded): the command line shows these events as plain lines.
pub const NOTICE: &str = "notice";

/// The model name that selects the embedded model.
pub const EMBEDDED: &str = "embedded";

/// The model path in a command line's `--model embedded:PATH` (a GGUF file or a Hugging Face
/// model directory: `model.name = "embedded"` with `model.path = PATH`), if `name` is one.
pub fn embedded_path(name: &str) -> Option<&str> {
    name.strip_prefix(EMBEDDED)?
        .strip_prefix(':')
        .filter(|path| !path.is_empty())
}

/// The model the section `section` (e.g. `edit.viewer`) describes: the embedded model when
/// it is named `embedded`, else the served model at its base URL, priced by `prices`. Such
/// models are sent chat messages, so a served one must be in chat mode.
pub fn chat(config: &HttpModelConfig, section: &str, prices: PriceTable) -> Result<Arc<dyn Model>> {
    if config.model == EMBEDDED {
        return load(config, section);
    }
    if config.model.is_empty() {
        bail!(
            "{section}.name is not set: give the served model's name (and {section}.base_url), \
             or `{EMBEDDED}` to run the embedded model"
        );
    }
    if config.base_url.is_empty() {
        bail!(
            "{section}.name is {} but {section}.base_url is not set: give the base URL of its \
             OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1), or name `{EMBEDDED}` to \
             run the embedded model",
            config.model
        );
    }
    if config.mode != ApiMode::Chat {
        bail!("{section} is sent chat messages: set {section}.mode = \"chat\"");
    }
    let http = HttpModel::new(config.clone())
        .with_context(|| section.to_owned())?
        .with_prices(prices);
    Ok(Arc::new(http))
}

/// The model the optional section `section` (e.g. `edit.viewer`) of `config` describes, as
/// [`chat`] builds it; `None` when the section is not set.
pub fn chat_section(
    model: Option<&HttpModelConfig>,
    section: &str,
    config: &Config,
) -> Result<Option<Arc<dyn Model>>> {
    model
        .map(|model| chat(model, section, config.prices()?))
        .transpose()
}

/// The teacher of `swerve data backfill` (`[backfill.teacher]`): served in chat mode or
/// embedded; with whether the price table knows it.
pub fn teacher(config: &Config) -> Result<(Arc<dyn Model>, bool)> {
    let teacher = &config.backfill.teacher;
    if teacher.model.is_empty() {
        bail!("give the teacher: --teacher MODEL, the served model's name [backfill.teacher.name]");
    }
    let embedded = teacher.model == EMBEDDED;
    if teacher.base_url.is_empty() && !embedded {
        bail!(
            "--teacher {} needs --base-url URL, an OpenAI-compatible server such as \
             http://127.0.0.1:8000/v1 [backfill.teacher.base_url]",
            teacher.model
        );
    }
    if teacher.mode != ApiMode::Chat {
        bail!("the teacher is asked in chat mode: set backfill.teacher.mode = \"chat\"");
    }
    let prices = config.prices()?;
    let priced = prices.get(&teacher.model).is_some();
    let model: Arc<dyn Model> = if embedded {
        load(teacher, "backfill.teacher")?
    } else {
        Arc::new(HttpModel::new(teacher.clone())?.with_prices(prices))
    };
    Ok((model, priced))
}

/// Loads the embedded model a model section (`section`, e.g. `model`) describes: the GGUF
/// file at `path`, else the default model in the models directory, sampling by its
/// `[sampling]` defaults.
#[cfg(feature = "embedded")]
pub fn load(config: &HttpModelConfig, section: &str) -> Result<Arc<dyn Model>> {
    use swerve_embedded::EmbeddedModel;

    if !config.base_url.is_empty() {
        bail!(
            "{section}.base_url is set ({}) but the model is `{EMBEDDED}`, which runs in this \
             process; unset the base URL, or give the served model's name instead of \
             `{EMBEDDED}` to use the server",
            config.base_url
        );
    }
    if !config.extra_body.is_empty() {
        bail!(
            "{section}.extra_body is set, but it is sent to servers and the embedded model \
             reads none of it; remove it, or use [{section}.sampling] (temperature, top_p, \
             max_tokens, stop, seed)"
        );
    }
    let path =
        embedded_file(config).with_context(|| format!("the embedded model ({section}.path)"))?;
    let model = EmbeddedModel::load(&path)
        .with_context(|| format!("the embedded model ({section}.path)"))?
        .with_name(EMBEDDED)
        .with_sampling(config.sampling.clone());
    let info = model.info();
    tracing::info!(
        target: NOTICE,
        "embedded model: {} ({}, {:.0} MB, {}-token context, tokenizer from {})",
        info.name,
        info.path.display(),
        info.file_bytes as f64 / 1e6,
        info.context_length,
        info.tokenizer
    );
    Ok(Arc::new(model))
}

/// The GGUF file of the embedded model a model section describes: its `path`, else the
/// default model in the models directory.
#[cfg(feature = "embedded")]
pub fn embedded_file(config: &HttpModelConfig) -> Result<std::path::PathBuf> {
    Ok(swerve_embedded::resolve(config.path.as_deref())?)
}

/// Without the `embedded` feature there is no embedded model: says how to get one.
#[cfg(not(feature = "embedded"))]
pub fn embedded_file(_config: &HttpModelConfig) -> Result<std::path::PathBuf> {
    Err(without_embedded("model"))
}

/// Without the `embedded` feature there is no embedded model: says how to get one.
#[cfg(not(feature = "embedded"))]
pub fn load(_config: &HttpModelConfig, section: &str) -> Result<Arc<dyn Model>> {
    Err(without_embedded(section))
}

/// The error of a build without the `embedded` feature asked for the embedded model.
#[cfg(not(feature = "embedded"))]
fn without_embedded(section: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{section}.name is `{EMBEDDED}`, but this swerve was built without the `embedded` \
         feature; rebuild it with the default features (cargo build --release), or give a \
         served model's name and base URL"
    )
}

/// The model `server` (the section `section`, e.g. `world.reward_model`) describes, or
/// `None` when its name is unset. A name without a base URL is an error saying what to set.
pub fn optional(server: &HttpModelConfig, section: &str) -> Result<Option<Arc<dyn Model>>> {
    if server.model.is_empty() {
        return Ok(None);
    }
    if server.model == EMBEDDED {
        return load(server, section).map(Some);
    }
    if server.base_url.is_empty() {
        anyhow::bail!(
            "{section}.name is `{}` but {section}.base_url is unset: give the base URL of its \
             OpenAI-compatible server (vLLM, SGLang, …), e.g. http://localhost:8000/v1, or name \
             `{EMBEDDED}` to run the embedded model",
            server.model
        );
    }
    Ok(Some(Arc::new(swerve_llm::HttpModel::new(server.clone())?)))
}

/// Like [`optional`], for a model that `purpose` needs: an error naming the settings when unset.
pub fn require(server: &HttpModelConfig, section: &str, purpose: &str) -> Result<Arc<dyn Model>> {
    optional(server, section)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{purpose} needs {section}: set {section}.name and {section}.base_url (an \
             OpenAI-compatible server), or name `{EMBEDDED}` to run the embedded model"
        )
    })
}

/// The model name that replays demonstrations.
pub const REPLAY: &str = "replay";

/// The chat template of prompt-rendered mode (`model.mode = "completions"`), loaded from
/// `run.tokenizer`; `None` in chat mode.
pub fn prompt_renderer(config: &Config, format: &dyn ToolFormat) -> Result<Option<ChatModel>> {
    if config.model.mode != ApiMode::Completions || config.model.model == REPLAY {
        return Ok(None);
    }
    let Some(dir) = &config.run.tokenizer else {
        bail!(
            "model.mode = \"completions\" renders prompts with the model's chat template: set \
             run.tokenizer to the model's directory (tokenizer.json, tokenizer_config.json), \
             e.g. --set run.tokenizer=/models/Qwen3-8B"
        );
    };
    if format.name() == "native" {
        bail!(
            "the native tool-call format needs the server to parse tool calls, which raw \
             completions do not do; use --format xml or hermes with model.mode = \"completions\""
        );
    }
    let model = ChatModel::from_dir(dir)
        .map_err(|error| anyhow::anyhow!("run.tokenizer {}: {error}", dir.display()))?;
    Ok(Some(model))
}

/// Where rollouts get their model from.
pub enum ModelSource {
    /// Each task's demonstration, replayed call by call in the run's tool-call format.
    Replay {
        /// The directory of `<instance_id>.json` demonstrations.
        demos: PathBuf,
        /// The run's tool-call format, in which the calls are written.
        format: Box<dyn ToolFormat>,
    },
    /// A served model, and whether the price table knows it.
    Served {
        /// The client, cloned per rollout.
        http: Box<HttpModel>,
        /// Whether the price table knows the model.
        priced: bool,
    },
    /// The embedded model (`--model embedded`), loaded once; its calls take turns.
    Embedded {
        /// The loaded model.
        model: Arc<dyn Model>,
    },
}

impl ModelSource {
    /// The source `config` names, checked against `tasks` before anything runs: a replay
    /// needs a demonstration for every task; a served model needs a valid endpoint.
    pub fn new(config: &Config, tasks: &[Task]) -> Result<Self> {
        let model = &config.model;
        if model.model == REPLAY {
            if !model.base_url.is_empty() {
                bail!(
                    "model.base_url is set ({}) but the model is `replay`; give --model NAME \
                     (the served model's name) to use the server",
                    model.base_url
                );
            }
            let demos = config.run.demos.clone();
            let missing: Vec<&str> = tasks
                .iter()
                .filter(|task| !demos.join(format!("{}.json", task.instance_id)).is_file())
                .map(|task| task.instance_id.as_str())
                .collect();
            if !missing.is_empty() {
                bail!(
                    "--model replay needs a demonstration <instance_id>.json in {} for every \
                     task; missing: {} (use --demos DIR, or --model NAME --base-url URL for a \
                     served model)",
                    demos.display(),
                    missing.join(", ")
                );
            }
            let format = config.format()?;
            return Ok(Self::Replay { demos, format });
        }
        if model.model == EMBEDDED {
            if config.format()?.name() == "native" {
                bail!(
                    "the native tool-call format needs a server that parses tool calls; the \
                     embedded model answers in text: use --format xml, xml_last or hermes"
                );
            }
            let model = load(model, "model")?;
            return Ok(Self::Embedded { model });
        }
        if model.base_url.is_empty() {
            bail!(
                "--model {} needs --base-url URL (an OpenAI-compatible server, e.g. \
                 http://127.0.0.1:8000/v1), or use --model replay or --model embedded",
                model.model
            );
        }
        let prices = config.prices()?;
        let priced = prices.get(&model.model).is_some();
        let http = Box::new(HttpModel::new(model.clone())?.with_prices(prices));
        Ok(Self::Served { http, priced })
    }

    /// The model for one rollout of `task`.
    pub fn for_task(&self, task: &Task) -> Result<Arc<dyn Model>> {
        match self {
            Self::Replay { demos, format } => {
                let turns = replay_turns(
                    format.as_ref(),
                    &demos.join(format!("{}.json", task.instance_id)),
                )?;
                Ok(Arc::new(ReplayModel::new(turns)))
            }
            Self::Served { http, .. } => Ok(Arc::new(http.as_ref().clone())),
            Self::Embedded { model } => Ok(model.clone()),
        }
    }

    /// Whether calls cost money by the price table (false for replays, the embedded model
    /// and models the table does not know, which are counted as free).
    pub fn is_priced(&self) -> bool {
        match self {
            Self::Replay { .. } | Self::Embedded { .. } => false,
            Self::Served { priced, .. } => *priced,
        }
    }
}

/// What the replay model answers, turn by turn, for the demonstration file `demo`: each
/// recorded tool call written in `format`.
pub fn replay_turns(format: &dyn ToolFormat, demo: &std::path::Path) -> Result<Vec<String>> {
    let demonstration = Demonstration::load(demo)?;
    Ok(demonstration
        .calls
        .iter()
        .map(|call| format.render_call("", call, None).content)
        .collect())
}
