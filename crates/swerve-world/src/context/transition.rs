//! The transition context: what SWT sees to predict one command's output.

use serde::{Deserialize, Serialize};

use super::files::{FileText, executed, fenced};
use super::prompt;
use super::{ContextConfig, IssueContext, IssueInputs, PromptStyle, Sources};
use crate::targets::Targets;
use crate::tokens::fit;

/// Everything SWT is shown for one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransitionContext {
    /// The issue, the patches and the original files.
    #[serde(flatten)]
    pub issue: IssueContext,
    /// The command to simulate (cut to its budget).
    pub command: String,
    /// The code the command executes, as it is in the workspace now.
    pub executed_files: Vec<FileText>,
    /// Some of the code is in the command itself (`python -c`, a here-document).
    pub inline_code: bool,
    /// The templates [`TransitionContext::messages`] renders with.
    #[serde(default)]
    pub prompts: PromptStyle,
}

impl TransitionContext {
    /// The context for running `command` now.
    pub fn assemble(
        inputs: &IssueInputs,
        command: &str,
        sources: &Sources,
        config: &ContextConfig,
    ) -> Self {
        let mut issue = IssueContext::assemble(inputs, sources, config);
        let targets = Targets::extract(command, &config.sandbox_root);
        let budgets = &config.budgets;
        let executed_files = executed(&targets, sources, config, budgets.code, &mut issue.notes);
        let (command, cut) = fit(command, budgets.command, sources.counter);
        if cut {
            issue
                .notes
                .push(format!("command cut to {} tokens", budgets.command));
        }
        TransitionContext {
            issue,
            command: command.into_owned(),
            executed_files,
            inline_code: targets.inline_code,
            prompts: PromptStyle::default(),
        }
    }

    /// The context rendered with `prompts`.
    pub fn with_prompts(mut self, prompts: PromptStyle) -> Self {
        self.prompts = prompts;
        self
    }

    /// The user message in swerve's wording ([`PromptStyle::Swerve`]).
    pub(super) fn swerve_user_prompt(&self) -> String {
        let mut message = prompt::Message::default();
        message.section("Command to run", &fenced("bash", &self.command));
        message.issue(&self.issue);
        let empty = if self.inline_code {
            "(no files: the code to run is in the command itself)"
        } else {
            "(no files found: infer what runs from the command)"
        };
        message.files("Code the command executes", &self.executed_files, empty);
        message.patches(&self.issue, "The agent's changes so far");
        message.finish(
            "Predict the command's stdout, stderr and exit code. Answer with the JSON object only.",
        )
    }
}
