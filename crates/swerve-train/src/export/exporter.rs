//! One export over many trajectories, the same for every front end (`swerve data export`,
//! Python's `swerve.export`): each loaded trajectory is rewarded with `[reward]`, left out
//! when it has no reward (grading failed for the machinery's reason) or is below
//! `--min-reward`, and turned into the rows of the chosen format; SkyRL ids are numbered
//! across the export ([`Repetitions`]).

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;
use swerve_chat::ChatModel;
use swerve_core::registry::Registry;
use swerve_core::trajectory::import::Loaded;

use super::{
    Repetitions, Retokenize, conversation_of, llamafactory, messages, skyrl, step_tokens, trl, verl,
};
use crate::agile::tokens::{TemplateTokens, Tokens, request_tools};
use crate::reward::{RewardConfig, infra_failure, reward, reward_of};
use crate::rft::{keep, turn_weights};

/// The trainer formats, listed in [`Format::ALL`] with their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// SkyRL step-wise generator output, one record per step.
    Skyrl,
    /// verl agent-loop output, one record per trajectory.
    Verl,
    /// TRL prompt/completion, one row per trained step.
    Trl,
    /// Whole conversations with per-message loss weights.
    Messages,
    /// LLaMA-Factory v1 SFT samples.
    Llamafactory,
}

impl Registry for Format {
    const KIND: &'static str = "export format";
    const ALL: &'static [Self] = &[
        Format::Skyrl,
        Format::Verl,
        Format::Trl,
        Format::Messages,
        Format::Llamafactory,
    ];

    fn name(self) -> &'static str {
        match self {
            Format::Skyrl => "skyrl",
            Format::Verl => "verl",
            Format::Trl => "trl",
            Format::Messages => "messages",
            Format::Llamafactory => "llamafactory",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Format::Skyrl => "SkyRL step-wise generator output, one record per step (token ids)",
            Format::Verl => "verl agent-loop output, one record per trajectory (token ids)",
            Format::Trl => "TRL prompt/completion, one row per trained step",
            Format::Messages => {
                "Whole conversations with per-message loss weights, one row per trajectory"
            }
            Format::Llamafactory => {
                "LLaMA-Factory v1 SFT samples: content blocks (text, reasoning, tool_call) and \
                 per-message loss weights, one row per trajectory"
            }
        }
    }
}

/// What an export does.
pub struct Options<'a> {
    /// The format.
    pub format: Format,
    /// The `[reward]` settings.
    pub reward: &'a RewardConfig,
    /// Keep only trajectories rewarded at least this.
    pub min_reward: Option<f64>,
    /// verl: cut responses to this many tokens.
    pub max_response_len: Option<usize>,
    /// Re-tokenize steps without captured ids with this chat model.
    pub retokenizer: Option<&'a ChatModel>,
}

/// An export in progress, and what it left out.
pub struct Exporter<'a> {
    options: Options<'a>,
    repetitions: Repetitions,
    /// Trajectories exported.
    pub exported: usize,
    /// Trajectories below `min_reward`, left out.
    pub below_min_reward: usize,
    /// Trajectories left out with no reward (grading failed for the machinery's reason).
    pub no_reward: Vec<String>,
    /// Warnings to show (steps re-tokenized).
    pub warnings: Vec<String>,
}

impl<'a> Exporter<'a> {
    /// An export with `options` (checked).
    pub fn new(options: Options<'a>) -> Result<Self> {
        options.reward.validate()?;
        if options.max_response_len.is_some() && options.format != Format::Verl {
            bail!("--max-response-len is for --format verl");
        }
        Ok(Self {
            options,
            repetitions: Repetitions::default(),
            exported: 0,
            below_min_reward: 0,
            no_reward: Vec::new(),
            warnings: Vec::new(),
        })
    }

    /// The rows of `loaded` (none when it is left out). Errors name the file.
    pub fn rows(&mut self, loaded: &Loaded) -> Result<Vec<Value>> {
        // Grading failed for the machinery's reason: no reward, neither 1 nor 0.
        if let Some(report) = loaded
            .trajectory
            .outcome
            .as_ref()
            .and_then(|outcome| outcome.eval_report.as_ref())
            && infra_failure(report)
        {
            self.no_reward.push(loaded.name());
            return Ok(Vec::new());
        }
        let format = self.options.format;
        let needs_reward =
            matches!(format, Format::Skyrl | Format::Verl) || self.options.min_reward.is_some();
        let reward = if needs_reward {
            Some(reward_of(loaded, self.options.reward)?)
        } else {
            reward(&loaded.trajectory, self.options.reward).ok()
        };
        if let (Some(min), Some(reward)) = (self.options.min_reward, &reward)
            && !keep(reward, min)
        {
            self.below_min_reward += 1;
            return Ok(Vec::new());
        }
        let total = reward.as_ref().map(|reward| reward.total);
        let rows = self
            .convert(loaded, total)
            .with_context(|| loaded.path.display().to_string())?;
        self.exported += 1;
        Ok(rows)
    }

    /// What was exported and left out, in words (`records` rows written to `out`).
    pub fn summary(&self, records: usize, out: &str) -> String {
        let mut filter = match self.options.min_reward {
            Some(min) => format!(", {} below reward {min} left out", self.below_min_reward),
            None => String::new(),
        };
        if !self.no_reward.is_empty() {
            filter.push_str(&format!(
                ", {} left out with no reward (grading failed for the machinery's reason, \
                 error_class infra: grade them again): {}",
                self.no_reward.len(),
                self.no_reward.join(", ")
            ));
        }
        format!(
            "{} trajectories{filter}; {records} records -> {out}",
            self.exported
        )
    }

    fn convert(&mut self, loaded: &Loaded, reward: Option<f64>) -> Result<Vec<Value>> {
        let trajectory = &loaded.trajectory;
        let format = self.options.format;
        let mut rows = Vec::new();
        match format {
            Format::Skyrl | Format::Verl => {
                let reward = reward.context("no reward")?;
                let model = self.options.retokenizer;
                let retokenizer = model
                    .map(|model| Tokens::new(model, &trajectory.header).map(TemplateTokens))
                    .transpose()?;
                let tokens = step_tokens(
                    trajectory,
                    retokenizer.as_ref().map(|r| r as &dyn Retokenize),
                )?;
                let retokenized = tokens.iter().filter(|step| step.retokenized).count();
                if let (Some(model), true) = (model, retokenized > 0) {
                    self.warnings.push(format!(
                        "{}: {retokenized} of {} steps re-tokenized with the chat template of \
                         {} (no captured ids): the ids may differ from what the model saw, and \
                         they have no logprobs",
                        loaded.name(),
                        tokens.len(),
                        model.dir().display()
                    ));
                }
                if format == Format::Skyrl {
                    let id = self.repetitions.assign(&trajectory.header);
                    let records = skyrl::steps(id, &tokens, reward);
                    skyrl::check(&records).map_err(|error| anyhow!("SkyRL record: {error}"))?;
                    for record in &records {
                        rows.push(serde_json::to_value(record)?);
                    }
                } else {
                    let mut record = verl::record(trajectory, &tokens, reward)?;
                    if let Some(max) = self.options.max_response_len {
                        record.truncate(max);
                    }
                    verl::check(&record).map_err(|error| anyhow!("verl record: {error}"))?;
                    rows.push(serde_json::to_value(&record)?);
                }
            }
            Format::Trl | Format::Messages | Format::Llamafactory => {
                let conversation = conversation_of(trajectory)?;
                let weights = turn_weights(trajectory);
                let tools = request_tools(&trajectory.header.config)?;
                if format == Format::Trl {
                    for row in trl::rows(trajectory, &conversation, &weights, tools.as_deref()) {
                        rows.push(serde_json::to_value(&row)?);
                    }
                } else {
                    let row =
                        messages::row(trajectory, conversation, &weights, reward, tools.as_deref());
                    rows.push(match format {
                        Format::Llamafactory => serde_json::to_value(llamafactory::row(&row))?,
                        _ => serde_json::to_value(&row)?,
                    });
                }
            }
        }
        Ok(rows)
    }
}
