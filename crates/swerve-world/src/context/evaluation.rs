//! The evaluation context: what SWR sees to grade a final patch. It adds the test
//! command, the test files (the row's `test_exec_content`, or the files the test patch
//! touches, read from a workspace where the test patch is applied) and the FAIL_TO_PASS
//! and PASS_TO_PASS lists to the shared sections.

use serde::{Deserialize, Serialize};

use super::files::{FileText, executed, fenced, given};
use super::prompt;
use super::{ContextConfig, IssueContext, IssueInputs, PromptStyle, Sources};
use crate::patch_files::patch_paths;
use crate::targets::{Target, TargetKind, Targets, resolve};
use crate::tokens::{TokenCounter, fit};

/// A list of test names cut to a budget.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestList {
    /// The names shown.
    pub tests: Vec<String>,
    /// How many more there are.
    pub omitted: usize,
}

impl TestList {
    /// The first of `tests` that fit in `budget` tokens (one `- name` line each).
    pub(super) fn fit(tests: &[String], budget: usize, counter: &dyn TokenCounter) -> TestList {
        let mut used = 0;
        let mut shown = Vec::new();
        for test in tests {
            used += counter.count(&format!("- {test}\n"));
            if used > budget {
                break;
            }
            shown.push(test.clone());
        }
        TestList {
            omitted: tests.len() - shown.len(),
            tests: shown,
        }
    }

    pub(super) fn render(&self) -> String {
        if self.tests.is_empty() && self.omitted == 0 {
            return "(none)".to_owned();
        }
        let mut lines: Vec<String> = self.tests.iter().map(|test| format!("- {test}")).collect();
        if self.omitted > 0 {
            lines.push(format!("- … and {} more not shown", self.omitted));
        }
        lines.join("\n")
    }
}

/// Everything SWR is shown to grade a patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwrContext {
    /// The issue, the patches and the original files.
    #[serde(flatten)]
    pub issue: IssueContext,
    /// The command that runs the tests.
    pub test_command: String,
    /// The test files, as the tests run them.
    pub test_files: Vec<FileText>,
    /// The test patch, shown instead when no test file could be read.
    pub test_patch: Option<String>,
    /// Tests that must go from failing to passing.
    pub fail_to_pass: TestList,
    /// Tests that must keep passing.
    pub pass_to_pass: TestList,
    /// The templates [`SwrContext::messages`] renders with.
    #[serde(default)]
    pub prompts: PromptStyle,
}

impl SwrContext {
    /// The context for grading `inputs.agent_patch` with `test_command` (the row's own
    /// test command; for R2E-Gym rows SWE-World uses `pytest -rA` and the test files).
    /// `sources.workspace` must show the test files as the tests see them, that is with
    /// the test patch applied, unless the row carries `test_exec_content`.
    pub fn assemble(
        inputs: &IssueInputs,
        test_command: &str,
        sources: &Sources,
        config: &ContextConfig,
    ) -> Self {
        let task = inputs.task;
        let budgets = &config.budgets;
        let mut issue = IssueContext::assemble(inputs, sources, config);
        let root = config.sandbox_root.trim_end_matches('/');
        let test_files = match task
            .extra
            .get("test_exec_content")
            .and_then(|v| v.as_object())
        {
            Some(contents) => {
                let mut files: Vec<(String, String)> = contents
                    .iter()
                    .filter_map(|(path, text)| {
                        Some((resolve(root, None, path), text.as_str()?.to_owned()))
                    })
                    .collect();
                files.sort();
                files.truncate(config.max_files);
                given(files, budgets.code, sources.counter, &mut issue.notes)
            }
            None => {
                let paths = task
                    .test_patch
                    .as_deref()
                    .map(patch_paths)
                    .unwrap_or_default();
                let targets = Targets {
                    targets: paths
                        .into_iter()
                        .map(|path| Target {
                            candidates: vec![resolve(root, None, &path)],
                            kind: TargetKind::Argument,
                            glob: false,
                        })
                        .collect(),
                    ..Targets::default()
                };
                executed(&targets, sources, config, budgets.code, &mut issue.notes)
            }
        };
        let test_patch = task
            .test_patch
            .as_deref()
            .filter(|patch| !patch.trim().is_empty())
            .filter(|_| test_files.iter().all(|file| file.content.is_none()))
            .map(|patch| fit(patch, budgets.code, sources.counter).0.into_owned());
        let (command, cut) = fit(test_command, budgets.command, sources.counter);
        if cut {
            issue
                .notes
                .push(format!("test command cut to {} tokens", budgets.command));
        }
        let fail_to_pass = TestList::fit(&task.fail_to_pass, budgets.fail_to_pass, sources.counter);
        let pass_to_pass = TestList::fit(&task.pass_to_pass, budgets.pass_to_pass, sources.counter);
        for (name, list) in [
            ("FAIL_TO_PASS", &fail_to_pass),
            ("PASS_TO_PASS", &pass_to_pass),
        ] {
            if list.omitted > 0 {
                issue
                    .notes
                    .push(format!("{name}: {} tests not shown", list.omitted));
            }
        }
        SwrContext {
            issue,
            test_command: command.into_owned(),
            test_files,
            test_patch,
            fail_to_pass,
            pass_to_pass,
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
        message.section("Test command", &fenced("bash", &self.test_command));
        message.section(
            "FAIL_TO_PASS tests (all must pass for reward 1)",
            &self.fail_to_pass.render(),
        );
        message.section(
            "PASS_TO_PASS tests (all must pass for reward 1)",
            &self.pass_to_pass.render(),
        );
        match &self.test_patch {
            Some(patch) => message.section(
                "Test patch (applied before the tests run)",
                &fenced("diff", patch),
            ),
            None => message.files("Test files", &self.test_files, "(none found)"),
        }
        message.issue(&self.issue);
        message.patches(&self.issue, "The agent's patch");
        message.finish(
            "Run the tests against the agent's patch. Reason inside <think>...</think>, then answer with the JSON object.",
        )
    }
}
