//! Native, in-process agent tools: R2E-Gym's `file_editor`, `search`, `execute_bash` and
//! `finish`, re-implemented in Rust with R2E-Gym's output texts and observations.
//!
//! Files are reached through a [`WorkspaceFs`] (the repository the agent sees at `/testbed`,
//! stored anywhere on the host) and commands run through a [`swerve_core::Shell`]. A
//! [`Toolbox`] runs [`swerve_core::ToolCall`]s, which [`parse_tool_call`] reads from R2E-Gym
//! XML or JSON; [`tool_specs`] gives the matching function-calling schemas.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod bash;
pub mod config;
mod file_editor;
mod finish;
pub mod formats;
pub mod fs;
pub mod observation;
mod pytext;
mod search;
pub mod specs;
pub mod swe_agent;
pub mod toolbox;
pub mod xml;

pub use bash::{error_code as bash_error_code, format_output as format_bash_output};
pub use config::{FileEditorCommand, ToolConfig, Toolset};
pub use file_editor::{EditFailure, edit_failure, list_directory};
pub use fs::{DEFAULT_SANDBOX_ROOT, EntryKind, FsError, Resolved, WorkspaceFs};
pub use observation::{CONTINUE_MSG, FINISHED, render_observation, strip_ansi_and_cr};
pub use pytext::TRUNCATED_MESSAGE;
pub use specs::tool_specs;
pub use toolbox::{CallInterceptor, ToolResult, Toolbox};
pub use xml::{ParseError, first_call_block, parse_tool_call, parse_xml, to_xml};
