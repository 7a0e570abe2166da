//! SWE-Edit for swerve: the `llm_editor` tool whose `view` and `edit` commands delegate to a
//! viewer and an editor subagent, the SEARCH/REPLACE format they answer in, and the PR-Edit
//! benchmark of editor models.
//!
//! - [`ranges`]: the viewer's line ranges, parsed, merged and rendered;
//! - [`blocks`]: SEARCH/REPLACE blocks, applied all or nothing, with the optional
//!   whitespace-tolerant fallback and "did you mean" note of [`fuzzy`];
//! - [`subagent`]: [`view`] and [`edit`], one subagent model call each, recorded as a
//!   [`swerve_core::trajectory::SubTrajectory`];
//! - [`tool`]: the [`LlmEditor`] tool and its schema;
//! - [`format`]: the editor's format policy (adaptive, find-replace, rewrite);
//! - [`reward`]: SWE-Edit's normalized-match reward for editor RL, and the RL prompts;
//! - [`bench`](mod@bench): PR-Edit instances mined from a git history, the benchmark run,
//!   and the viewer baselines (BM25 and embedding retrieval against the LLM viewer);
//! - [`config`]: the `[edit]` configuration section (subagent models, commands offered,
//!   matching aids);
//! - [`metrics`]: a trajectory's edit metrics (edit success, format errors and match
//!   failures apart, view calls, the viewer's share of file content, main vs subagent spend);
//! - [`diff`] and [`regions`]: Python's `difflib` over lines, for the changed regions shown
//!   after an edit and the diffs the judge reads; [`text`]: lines, numbering, CRLF files.
//!
//! See `docs/edit.md`.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod bench;
pub mod blocks;
pub mod config;
pub mod diff;
pub mod format;
pub mod fuzzy;
pub mod metrics;
mod prompts;
pub mod ranges;
pub mod regions;
pub mod reward;
pub mod subagent;
pub mod text;
pub mod tool;

pub use blocks::{Applied, ApplyError, MatchOptions, Mode, apply, parse_blocks};
pub use config::EditConfig;
pub use format::EditFormat;
pub use metrics::{EditMetrics, EditSummary};
pub use ranges::{LineRange, parse_ranges};
pub use reward::{EditReward, edit_reward, rl_row};
pub use subagent::{EditOutcome, EditStatus, SourceFile, ViewOutcome, ViewStatus, edit, view};
pub use tool::{LLM_EDITOR, LlmEditor, LlmEditorCommand, LlmEditorResult, llm_editor_spec};
