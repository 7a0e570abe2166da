//! Which model each rollout talks to: a replay of the task's demonstration, the served
//! model named in the configuration (one HTTP client shared by every rollout), or the
//! embedded model run in this process (one loaded model shared by every rollout).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use swerve_chat::ChatModel;
use swerve_core::Task;
use swerve_core::demonstration::Demonstration;
use swerve_llm::{ApiMode, HttpModel, Model, ReplayModel};
use swerve_tools::formats::ToolFormat;

use crate::config::Config;
use crate::embedded::{self, EMBEDDED};

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
        demos: PathBuf,
        format: Box<dyn ToolFormat>,
    },
    /// A served model, and whether the price table knows it.
    Served { http: Box<HttpModel>, priced: bool },
    /// The embedded model (`--model embedded`), loaded once; its calls take turns.
    Embedded { model: Arc<dyn Model> },
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
            let model = embedded::load(model, "model")?;
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
                let demonstration =
                    Demonstration::load(&demos.join(format!("{}.json", task.instance_id)))?;
                let turns = demonstration
                    .calls
                    .iter()
                    .map(|call| format.render_call("", call, None).content)
                    .collect();
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
