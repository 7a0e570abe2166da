//! SWE-Edit in `swerve run`: when `edit.commands` offers `llm_editor`, each rollout's
//! toolbox gets an interceptor that answers `llm_editor` calls with the tool's viewer and
//! editor subagents (`[edit.viewer]`, `[edit.editor]`: served or embedded models), on the
//! tool thread (`Handle::block_on` inside the loop's `block_in_place`), and hands their
//! records on for the step's `subagents`. The edit metrics of each rollout go in its outcome.

use std::sync::Arc;

use anyhow::{Result, bail};
use swerve_core::ToolCall;
use swerve_core::trajectory::SubTrajectory;
use swerve_edit::{LLM_EDITOR, LlmEditor, LlmEditorCommand, MatchOptions};
use swerve_llm::Model;
use swerve_tools::{CallInterceptor, ToolConfig, ToolResult, WorkspaceFs};

use crate::config::Config;

/// What every rollout offering `llm_editor` shares: its commands and subagent models.
pub struct EditTools {
    commands: Vec<LlmEditorCommand>,
    tools: ToolConfig,
    matching: MatchOptions,
    format: swerve_edit::EditFormat,
    viewer: Option<Arc<dyn Model>>,
    editor: Option<Arc<dyn Model>>,
}

impl EditTools {
    /// The tools `config` offers, `None` when `edit.commands` is empty. `view` needs
    /// `[edit.viewer]` and `edit` needs `[edit.editor]`; models of commands not offered are
    /// not loaded.
    pub fn new(config: &Config) -> Result<Option<Self>> {
        let edit = &config.edit;
        if edit.commands.is_empty() {
            return Ok(None);
        }
        let offered = |command| edit.commands.contains(&command);
        let model = |section: Option<&swerve_llm::HttpModelConfig>, role: &str| {
            let Some(section) = section else {
                bail!(
                    "edit.commands offers `{}`, which needs the {role} model: set \
                     edit.{role}.name and edit.{role}.base_url (an OpenAI-compatible server), \
                     or edit.{role}.name = \"embedded\"",
                    if role == "viewer" { "view" } else { "edit" }
                );
            };
            crate::models::chat(section, &format!("edit.{role}"), config.prices()?)
        };
        let viewer = match offered(LlmEditorCommand::View) {
            true => Some(model(edit.viewer.as_ref(), "viewer")?),
            false => None,
        };
        let editor = match offered(LlmEditorCommand::Edit) {
            true => Some(model(edit.editor.as_ref(), "editor")?),
            false => None,
        };
        Ok(Some(Self {
            commands: edit.commands.clone(),
            tools: config.tools.clone(),
            matching: edit.matching,
            format: edit.format,
            viewer,
            editor,
        }))
    }

    /// The interceptor of one rollout, over its workspace `fs`; calls must come from a
    /// blocking section of a tokio multi-threaded runtime (`block_in_place`).
    pub fn interceptor(&self, fs: WorkspaceFs) -> LlmEditorInterceptor {
        let tool = LlmEditor::new(
            fs,
            self.tools.clone(),
            self.matching,
            self.viewer.clone(),
            self.editor.clone(),
        )
        .with_commands(&self.commands)
        .with_format(self.format);
        LlmEditorInterceptor {
            tool,
            runtime: tokio::runtime::Handle::current(),
            subagents: Vec::new(),
        }
    }
}

/// Answers one rollout's `llm_editor` calls.
pub struct LlmEditorInterceptor {
    tool: LlmEditor,
    runtime: tokio::runtime::Handle,
    /// The subagent runs of the last call, until taken.
    subagents: Vec<SubTrajectory>,
}

impl CallInterceptor for LlmEditorInterceptor {
    fn intercept(
        &mut self,
        call: &ToolCall,
        _fs: &WorkspaceFs,
        _config: &ToolConfig,
    ) -> Option<ToolResult> {
        if call.name != LLM_EDITOR {
            return None;
        }
        let result = self.runtime.block_on(self.tool.call(call));
        tracing::info!(
            view = ?result.view,
            edit = ?result.edit,
            error = result.is_error,
            "llm_editor"
        );
        let observed = result.tool_result();
        self.subagents = result.subagents;
        Some(observed)
    }

    fn tool_specs(&self) -> Vec<serde_json::Value> {
        vec![self.tool.spec()]
    }

    fn take_subagents(&mut self) -> Vec<SubTrajectory> {
        std::mem::take(&mut self.subagents)
    }
}
