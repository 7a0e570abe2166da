//! The contexts the world models see, assembled as pure functions of the task, the
//! agent's patch, the command and two [`SourceReader`]s (the workspace as it is now, and
//! the original checkout), each section cut to its token budget:
//! [`TransitionContext`] for SWT (one command) and [`SwrContext`] for SWR (the final
//! patch and its tests). Both render to chat messages with this project's prompts.

mod analysis;
mod evaluation;
mod files;
mod messages;
pub mod paper;
mod prompt;
mod transition;

use serde::{Deserialize, Serialize};
use swerve_core::Task;

use crate::patch_files::patch_paths;
use crate::reader::SourceReader;
use crate::tokens::{TokenCounter, fit};

pub use analysis::analysis_messages;
pub use evaluation::{SwrContext, TestList};
pub use files::FileText;
pub use paper::{PAPER_SWR_SYSTEM, PAPER_SWT_SYSTEM};
pub use prompt::{ANALYSIS_SYSTEM_PROMPT, SWR_SYSTEM_PROMPT, SWT_SYSTEM_PROMPT};
pub use transition::TransitionContext;

/// Which prompt templates the world models are asked with (`world.prompts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptStyle {
    /// SWE-World's own templates (paper Figs. G.2, G.3), which its released SWT and SWR
    /// models were trained on: numbered `### N.` sections, no hints, no original files.
    #[default]
    Paper,
    /// swerve's wording, with the hints and the original contents of modified files.
    Swerve,
}

/// Token budgets per section (SWE-World's caps where it has them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budgets {
    /// The initial analysis (SWE-World: 5,120).
    pub initial_analysis: usize,
    /// The problem statement (SWE-World: 10,240).
    pub problem_statement: usize,
    /// The hints from the issue discussion (SWE-World leaves them out, and so does the
    /// default, 0; only the `swerve` prompts show them).
    pub hints: usize,
    /// The command (SWE-World: 5,120).
    pub command: usize,
    /// The code the command executes, or the test files for SWR, shared between the files
    /// (SWE-World: 15,360).
    pub code: usize,
    /// The original contents of the files the patches modify, shared between the files.
    pub original_files: usize,
    /// The agent's patch (SWE-World: 15,360).
    pub agent_patch: usize,
    /// The reference patch (SWE-World: 10,240).
    pub gold_patch: usize,
    /// The FAIL_TO_PASS list.
    pub fail_to_pass: usize,
    /// The PASS_TO_PASS list (SWE-World: 5,120).
    pub pass_to_pass: usize,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            initial_analysis: 5_120,
            problem_statement: 10_240,
            hints: 0,
            command: 5_120,
            code: 15_360,
            original_files: 15_360,
            agent_patch: 15_360,
            gold_patch: 10_240,
            fail_to_pass: 5_120,
            pass_to_pass: 5_120,
        }
    }
}

/// How contexts are assembled (the `[world.context]` table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// Token budgets per section.
    pub budgets: Budgets,
    /// Where the repository is in the sandbox; relative paths in commands start here.
    pub sandbox_root: String,
    /// The most files one code section shows (SWE-World: 20).
    pub max_files: usize,
    /// Files larger than this are named but not read.
    pub max_file_bytes: u64,
    /// The extensions of the files a directory that is not a test directory expands to
    /// (SWE-World: py, rst, txt, dat, html). Test directories expand to `test_*.py`,
    /// `*_test.py` and `tests.py`.
    pub extensions: Vec<String>,
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            budgets: Budgets::default(),
            sandbox_root: swerve_tools::DEFAULT_SANDBOX_ROOT.to_owned(),
            max_files: 20,
            max_file_bytes: 1024 * 1024,
            extensions: ["py", "rst", "txt", "dat", "html"]
                .map(String::from)
                .to_vec(),
        }
    }
}

/// Where file contents come from, and how tokens are counted.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    /// The workspace as the agent left it (for SWR: with the test patch applied).
    pub workspace: &'a dyn SourceReader,
    /// The repository at the base commit, for the original contents of modified files.
    pub original: &'a dyn SourceReader,
    /// Counts tokens for the budgets.
    pub counter: &'a dyn TokenCounter,
}

/// What both contexts are built from.
#[derive(Debug, Clone, Copy)]
pub struct IssueInputs<'a> {
    /// The task: problem statement, hints, gold patch, test patch and test lists.
    pub task: &'a Task,
    /// The precomputed initial analysis of the issue, if any.
    pub initial_analysis: Option<&'a str>,
    /// The agent's current patch (`git diff` of the workspace).
    pub agent_patch: &'a str,
}

/// The sections both contexts share.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueContext {
    /// The task's id.
    pub instance_id: String,
    /// The problem statement.
    pub problem_statement: String,
    /// The initial analysis.
    pub initial_analysis: Option<String>,
    /// Hints from the issue discussion.
    pub hints: Option<String>,
    /// The agent's patch.
    pub agent_patch: String,
    /// The reference patch (`golden_patch` when the row has one, else `patch`).
    pub gold_patch: Option<String>,
    /// The original contents of the files either patch modifies.
    pub original_files: Vec<FileText>,
    /// What was cut or left out, for logs.
    pub notes: Vec<String>,
}

impl IssueContext {
    fn assemble(inputs: &IssueInputs, sources: &Sources, config: &ContextConfig) -> Self {
        let budgets = &config.budgets;
        let task = inputs.task;
        let mut notes = Vec::new();
        let mut section = |name: &str, text: &str, budget: usize| {
            let (text, cut) = fit(text, budget, sources.counter);
            if cut {
                notes.push(format!("{name} cut to {budget} tokens"));
            }
            text.into_owned()
        };
        let gold = gold_patch(task);
        let problem_statement = section(
            "problem statement",
            &task.problem_statement,
            budgets.problem_statement,
        );
        let initial_analysis = inputs
            .initial_analysis
            .filter(|text| !text.trim().is_empty())
            .map(|text| section("initial analysis", text, budgets.initial_analysis));
        let hints = task
            .hints_text
            .as_deref()
            .filter(|text| !text.trim().is_empty() && budgets.hints > 0)
            .map(|text| section("hints", text, budgets.hints));
        let agent_patch = section("agent patch", inputs.agent_patch, budgets.agent_patch);
        let gold_patch = gold.map(|patch| section("gold patch", patch, budgets.gold_patch));
        let mut paths = patch_paths(inputs.agent_patch);
        for path in gold.map(patch_paths).unwrap_or_default() {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        let original_files = files::originals(&paths, sources, config, &mut notes);
        IssueContext {
            instance_id: task.instance_id.clone(),
            problem_statement,
            initial_analysis,
            hints,
            agent_patch,
            gold_patch,
            original_files,
            notes,
        }
    }
}

/// The reference patch: the row's `golden_patch` when it has one, else `patch`; `None`
/// when empty.
fn gold_patch(task: &Task) -> Option<&str> {
    task.extra
        .get("golden_patch")
        .and_then(|value| value.as_str())
        .or(task.patch.as_deref())
        .filter(|patch| !patch.trim().is_empty())
}
