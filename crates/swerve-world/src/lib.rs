//! SWE-World for swerve: a world environment where reads, searches and edits run on the
//! sandbox while commands that run project code are answered by a transition model (SWT),
//! and a reward model (SWR) grades the final patch.
//!
//! - [`Router`] decides per tool call: [`Route::Sandbox`], [`Route::Simulated`],
//!   [`Route::Blocked`] or [`Route::Install`], by parsing the shell command ([`shell`],
//!   [`invocation`]) and looking its programs up in a configurable table.
//! - [`TransitionContext::assemble`] gathers what SWT needs (the issue, the patches, the
//!   code the command executes, found by [`targets`] and read through a
//!   [`reader::SourceReader`]) within per-section token budgets ([`tokens`]), and
//!   [`simulate_command`] asks the model and renders its answer exactly as `execute_bash`
//!   renders a real run.
//! - [`SwrContext::assemble`] adds the tests, and [`score`] takes the mean of M verdicts.
//! - [`analysis`] asks a model once per task for the initial analysis both contexts show
//!   (and caches it on disk).
//! - [`environment`] is the world environment of one rollout: a tool-call interceptor that
//!   simulates what the router says (or, in [`environment::record`], records real results
//!   as training data).
//! - [`swr::grader::SwrGrader`] grades patches with the reward model behind swerve-eval's
//!   `Grader` seam.
//! - [`samples`] are the training data recorded from real runs, and [`fidelity`] measures
//!   the world models against real execution.
//!
//! Configuration is one [`WorldConfig`] (the `[world]` table).

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod analysis;
pub mod context;
pub mod cot;
pub mod environment;
pub mod fidelity;
pub mod invocation;
mod observation;
pub mod patch_files;
pub mod reader;
mod reply;
pub mod router;
pub mod samples;
pub mod shell;
pub mod swr;
pub mod swt;
pub mod targets;
pub mod tokens;

use serde::{Deserialize, Serialize};

pub use context::{ContextConfig, IssueInputs, Sources, SwrContext, TransitionContext};
pub use reply::ReplyError;
pub use router::{Decision, Route, Router, RouterConfig, RouterConfigError, bash_command};
pub use swr::{SwrConfig, SwrReply, SwrScore, parse_swr_reply, score};
pub use swt::{
    ObservationStyle, SimulatedOutcome, SwtConfig, SwtReply, parse_swt_reply, simulate_command,
};

/// Every setting of the world environment (the `[world]` table).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorldConfig {
    /// The transition model's server (`[world.transition_model]`, configured as `[model]`
    /// is).
    pub transition_model: swerve_llm::HttpModelConfig,
    /// The reward model's server (`[world.reward_model]`), for SWR grading.
    pub reward_model: swerve_llm::HttpModelConfig,
    /// The server writing each task's initial analysis (`[world.analysis_model]`); no
    /// analysis when unset.
    pub analysis_model: swerve_llm::HttpModelConfig,
    /// The initial analysis's call.
    pub analysis: analysis::AnalysisConfig,
    /// The router.
    pub router: RouterConfig,
    /// Context assembly.
    pub context: ContextConfig,
    /// The world models' prompt templates: SWE-World's (`paper`, Figs. G.2 and G.3, what
    /// its released models were trained on; the default) or swerve's (`swerve`).
    pub prompts: context::PromptStyle,
    /// Reverse-reasoning CoT for SWT/SWR training data (`swerve data world --reasoning`).
    pub cot: cot::CotConfig,
    /// The transition model.
    pub swt: SwtConfig,
    /// The reward model.
    pub swr: SwrConfig,
    /// Recording training data from runs with real execution.
    pub record: samples::RecordConfig,
}
