//! The configuration: the `swerve.toml` file, presets, and the command-line options and
//! `--set` overrides layered over it ([`layers`]).
//!
//! Lookup: `--config FILE`, else `./swerve.toml` if present, else defaults. Every section is
//! optional; unknown keys are errors (a typo must not silently do nothing). See
//! `docs/configuration.md`.

pub mod cluster;
pub mod layers;
pub mod presets;
pub mod serve;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use swerve_agent::agile::WindowPolicy;
use swerve_agent::episode::AgentConfig;
use swerve_agent::prompt::PromptTemplates;
use swerve_core::registry::{Registry, UnknownName};
use swerve_llm::{HttpModelConfig, PriceTable};
use swerve_sandbox::{Cache, PatchOptions, RepoMap, SandboxConfig, Strategy, WorkspaceOptions};
use swerve_tools::ToolConfig;
use swerve_tools::formats::{self, ToolFormat};

use layers::Layer;

/// The whole configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Cache directory (bases, workspace layers).
    pub cache_dir: Option<PathBuf>,
    /// Directory holding repositories as `owner/name` (same as `--repos`).
    pub repos_dir: Option<PathBuf>,
    /// Explicit `owner/name` → local path or URL.
    pub repos: BTreeMap<String, String>,
    /// Sandbox settings.
    pub sandbox: SandboxConfig,
    /// Workspace settings.
    pub workspace: WorkspaceSection,
    /// Patch settings.
    pub patch: PatchOptions,
    /// Native tool settings.
    pub tools: ToolConfig,
    /// `swerve run`: format, samples, concurrency.
    pub run: RunSection,
    /// The model: `replay`, or a served model and how to reach it.
    pub model: HttpModelConfig,
    /// The agent loop's limits.
    pub agent: AgentConfig,
    /// Prompt templates (Jinja); unset ones are swerve's defaults.
    pub prompts: PromptTemplates,
    /// `swerve data backfill`: the teacher model and how it is asked.
    pub backfill: BackfillSection,
    /// SWE-Edit: the viewer and editor subagent models, edit-bench's judge and instruction
    /// writer, the matching aids (`docs/edit.md`).
    pub edit: swerve_edit::EditConfig,
    /// SWE-World (`run.env = "world"`): the transition model, the router, context budgets
    /// (`docs/world.md`).
    pub world: swerve_world::WorldConfig,
    /// The training reward recorded by `swerve run --eval` and used by `swerve data
    /// advantages | export` (`docs/training.md`).
    pub reward: swerve_train::reward::RewardConfig,
    /// `swerve serve`: the rollout service's address, token, limits and directories
    /// (`docs/serve.md`).
    pub serve: serve::ServeSection,
    /// Task images: the store, registries' mirrors and rewrites, credentials
    /// (`docs/images.md`).
    pub images: swerve_image::ImagesConfig,
    /// Where `swerve run` and `swerve eval` run their work: here or on a Ray cluster
    /// (`docs/cluster.md`).
    pub cluster: cluster::ClusterSection,
}

/// The `[run]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSection {
    /// Tool-call format: one of [`swerve_tools::formats::FORMAT_NAMES`].
    pub format: String,
    /// Rollouts per task.
    pub samples: usize,
    /// Rollouts at once.
    pub concurrency: usize,
    /// Demonstrations replayed by `model.name = "replay"`, one `<instance_id>.json` each.
    pub demos: PathBuf,
    /// A price table (TOML) whose entries override the built-in ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prices: Option<PathBuf>,
    /// Grade each rollout's patch as it ends, recording the report and the reward in its
    /// trajectory (by `evaluator`).
    pub eval: bool,
    /// How `eval` grades: `tests` (SWE-bench's rules, reward 1 resolved, 0 not) or `swr`
    /// (SWE-World's reward model, `[world.reward_model]`: reward the mean vote, no test runs).
    pub evaluator: EvaluatorKind,
    /// Environment recipes (TOML) for grading, over the shipped ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipes: Option<PathBuf>,
    /// The served model's directory (`tokenizer.json`, `tokenizer_config.json`) for
    /// prompt-rendered mode (`model.mode = "completions"`): swerve renders each prompt with
    /// the model's own chat template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<PathBuf>,
    /// Where commands run: `sandbox` (for real), or `world` (SWE-World: commands that run
    /// project code are answered by the transition model).
    pub env: EnvKind,
}

/// How patches are graded: the evaluators, listed in [`EvaluatorKind::ALL`] with their
/// names (what `run.evaluator`, `--eval` and `--evaluator` take).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum EvaluatorKind {
    /// Run the tests, by SWE-bench's rules.
    #[default]
    Tests,
    /// Ask SWE-World's reward model (SWR): M votes, the score their mean.
    Swr,
}

impl Registry for EvaluatorKind {
    const KIND: &'static str = "evaluator";
    const ALL: &'static [Self] = &[EvaluatorKind::Tests, EvaluatorKind::Swr];

    fn name(self) -> &'static str {
        match self {
            EvaluatorKind::Tests => "tests",
            EvaluatorKind::Swr => "swr",
        }
    }

    fn description(self) -> &'static str {
        match self {
            EvaluatorKind::Tests => "Run the tests, by SWE-bench's rules",
            EvaluatorKind::Swr => {
                "Ask SWE-World's reward model (SWR): M votes, the score their mean"
            }
        }
    }
}

impl TryFrom<String> for EvaluatorKind {
    type Error = UnknownName;

    fn try_from(name: String) -> Result<Self, UnknownName> {
        Self::parse(&name)
    }
}

impl From<EvaluatorKind> for &'static str {
    fn from(kind: EvaluatorKind) -> &'static str {
        kind.name()
    }
}

/// Where a rollout's commands run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvKind {
    /// Every command runs in the sandbox.
    #[default]
    Sandbox,
    /// SWE-World: routed; project code is simulated.
    World,
}

impl Default for RunSection {
    fn default() -> Self {
        Self {
            format: "xml".into(),
            samples: 1,
            concurrency: 8,
            demos: PathBuf::from("examples/demos"),
            prices: None,
            eval: false,
            evaluator: EvaluatorKind::Tests,
            recipes: None,
            tokenizer: None,
            env: EnvKind::Sandbox,
        }
    }
}

/// The `[backfill]` section: hindsight backfill of SWE-AGILE reasoning (`swerve data
/// backfill`, see `docs/agile.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BackfillSection {
    /// The teacher: an OpenAI-compatible server, configured as `[model]` is.
    pub teacher: HttpModelConfig,
    /// Earlier steps whose reasoning the teacher sees in full (the rest as digests); a
    /// range draws N per trajectory, recorded in its header.
    pub window: WindowPolicy,
    /// Seeds the draw of N (with the trajectory id).
    pub seed: u64,
    /// Teacher replies tried per step before the trajectory is rejected.
    pub max_attempts: u32,
    /// Trajectories backfilled at once (steps of one trajectory go one after another).
    pub concurrency: usize,
}

impl Default for BackfillSection {
    fn default() -> Self {
        Self {
            teacher: HttpModelConfig::default(),
            window: WindowPolicy::Random { min: 1, max: 4 },
            seed: 0,
            max_attempts: 3,
            concurrency: 4,
        }
    }
}

/// The `[workspace]` section.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceSection {
    /// Layer strategy: auto, overlay, reflink or copy.
    pub strategy: Strategy,
}

/// Where a configuration comes from, in the order the layers apply.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--config FILE`; `None` reads `./swerve.toml` when it exists.
    pub file: Option<PathBuf>,
    /// `--preset NAME|FILE`, in order.
    pub presets: Vec<String>,
    /// Command-line options, as dotted assignments.
    pub options: Vec<(String, String)>,
    /// `--set KEY=VALUE`, in order.
    pub sets: Vec<String>,
}

/// A configuration and the layers it was assembled from.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The configuration.
    pub config: Config,
    /// The layers' origins, first to last.
    pub origins: Vec<String>,
}

impl Config {
    /// The configuration `sources` add up to: swerve's base settings, then the file, the
    /// presets, the command-line options and the `--set` overrides.
    pub fn resolve(sources: &Sources) -> Result<Resolved> {
        let mut layers = vec![Layer::base()];
        let file = sources
            .file
            .clone()
            .or_else(|| Some(PathBuf::from("swerve.toml")).filter(|path| path.exists()));
        if let Some(path) = file {
            layers.push(Layer::file(&path)?);
        }
        for preset in &sources.presets {
            layers.push(Layer::preset(preset)?);
        }
        if !sources.options.is_empty() {
            layers.push(Layer::assignments("command-line option", &sources.options)?);
        }
        for set in &sources.sets {
            layers.push(Layer::set(set)?);
        }
        let (config, _) = layers::merge(&layers)?;
        Ok(Resolved {
            config,
            origins: layers.into_iter().map(|layer| layer.origin).collect(),
        })
    }

    /// Loads `path` (or `./swerve.toml`) over swerve's base settings, with no overrides.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let sources = Sources {
            file: path.map(Path::to_path_buf),
            ..Sources::default()
        };
        Ok(Self::resolve(&sources)?.config)
    }

    /// This configuration as TOML (what `swerve config show` prints and runs save).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).context("cannot render the configuration as TOML")
    }

    /// The tool-call format `run.format` names.
    ///
    /// Also checks that the tools fit it: `tools.rename`, and SWE-agent's toolset with its
    /// fenced format and no other.
    pub fn format(&self) -> Result<Box<dyn ToolFormat>> {
        let format = formats::from_name(&self.run.format).with_context(|| {
            format!(
                "unknown tool-call format {:?} (run.format, --format); choose one of {}",
                self.run.format,
                formats::FORMAT_NAMES.join(", ")
            )
        })?;
        self.tools
            .validate()
            .map_err(|error| anyhow::anyhow!(error))?;
        let swe_agent = self.tools.toolset == swerve_tools::Toolset::SweAgent;
        if swe_agent != (format.name() == "fenced") {
            bail!(
                "run.format = {:?} and tools.toolset = {:?} do not fit: SWE-agent's toolset \
                 (tools.toolset = \"swe_agent\") is called with run.format = \"fenced\" and the fenced \
                 format only works with it (--preset swe-agent sets both)",
                self.run.format,
                if swe_agent { "swe_agent" } else { "r2egym" }
            );
        }
        Ok(format)
    }

    /// The price table: the built-in one, with `run.prices` over it.
    pub fn prices(&self) -> Result<PriceTable> {
        let mut prices = PriceTable::builtin();
        if let Some(path) = &self.run.prices {
            prices = prices.overridden_by(PriceTable::load(path)?);
        }
        Ok(prices)
    }

    /// Opens the cache directory.
    pub fn cache(&self) -> Result<Cache> {
        let dir = self.cache_dir.clone().unwrap_or_else(Cache::default_dir);
        Cache::open(&dir).with_context(|| format!("cannot open the cache at {}", dir.display()))
    }

    /// Opens the image store (`images.store`, else `images/` in the cache directory).
    pub fn image_store(&self) -> Result<swerve_image::Store> {
        let cache_dir = self.cache_dir.clone().unwrap_or_else(Cache::default_dir);
        let dir = self.images.store_dir(&cache_dir);
        swerve_image::Store::open(&dir, &self.images)
            .with_context(|| format!("cannot open the image store at {}", dir.display()))
    }

    /// How repository names map to sources for tasks loaded from `task_file`: the configured
    /// directory first, then a `repos/` directory beside the task file or its parent (the
    /// layout of the bundled examples).
    pub fn repo_map(&self, task_file: &Path) -> RepoMap {
        let task_dir = task_file.parent().unwrap_or(Path::new("."));
        let beside = [task_dir.join("repos"), task_dir.join("..").join("repos")];
        RepoMap {
            repos_dirs: self
                .repos_dir
                .iter()
                .cloned()
                .chain(beside.into_iter().filter(|dir| dir.is_dir()))
                .collect(),
            explicit: self.repos.clone(),
        }
    }

    /// Options for new workspaces.
    pub fn workspace_options(&self) -> WorkspaceOptions {
        WorkspaceOptions {
            strategy: self.workspace.strategy,
            sandbox: self.sandbox.clone(),
            ..Default::default()
        }
    }

    /// How evaluations run under this configuration, keeping each instance's logs in
    /// `log_dir`.
    pub fn eval_settings(&self, log_dir: PathBuf) -> swerve_eval::evaluate::EvalSettings {
        let mut workspace = self.workspace_options();
        workspace.sandbox.output_cap_bytes = workspace.sandbox.output_cap_bytes.max(64 << 20);
        swerve_eval::evaluate::EvalSettings {
            workspace,
            log_dir: Some(log_dir),
            test_machinery: self.reward.test_machinery_change,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every TOML block of `docs/configuration.md`, joined, is a valid configuration.
    #[test]
    fn the_documented_configuration_parses() {
        let doc = include_str!("../../../../docs/configuration.md");
        let blocks: Vec<&str> = doc
            .split("```toml")
            .skip(1)
            .map(|block| block.split("```").next().unwrap())
            .collect();
        assert!(blocks.len() >= 2);
        let config: Config = toml::from_str(&blocks.join("\n")).unwrap();
        assert!(config.to_toml().unwrap().contains("[agent]"));
        // The documented run settings are the defaults.
        assert_eq!(config.run, RunSection::default());
        assert_eq!(config.agent, AgentConfig::default());
        assert_eq!(config.model.model, "replay");
        assert_eq!(
            config.model,
            HttpModelConfig::new("", "replay"),
            "the documented [model] values are the defaults"
        );
        let mut backfill = BackfillSection::default();
        backfill.teacher.sampling.temperature = Some(0.1);
        assert_eq!(
            config.backfill, backfill,
            "the documented [backfill] values are the defaults"
        );
        assert_eq!(
            config.serve,
            serve::ServeSection::default(),
            "the documented [serve] values are the defaults"
        );
        assert_eq!(
            config.cluster,
            cluster::ClusterSection::default(),
            "the documented [cluster] values are the defaults"
        );
        assert_eq!(config.repos.len(), 2);
        assert_eq!(config.sandbox.limits.memory_bytes, Some(4 << 30));
        assert!(!config.tools.python_only);
    }

    #[test]
    fn an_unknown_key_is_rejected() {
        assert!(toml::from_str::<Config>("[tools]\npython_onyl = true\n").is_err());
        assert!(toml::from_str::<Config>("[sandbox.limits]\nmemory = 1\n").is_err());
    }
}
