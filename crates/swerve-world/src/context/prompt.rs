//! The prompts of the two world models (written for swerve) and the pieces user messages
//! are built from.

use super::IssueContext;
use super::files::{FileText, fenced};

/// The transition model's instructions.
pub const SWT_SYSTEM_PROMPT: &str = r#"You are the execution environment of a software repository checked out at /testbed, with every dependency installed. A coding agent working on an issue runs a shell command; you predict exactly what the command prints and how it exits.

You are given the command, the issue, an initial analysis of the bug and its fix, hints from the issue discussion when there are any, the code the command executes as it is now, the original contents of the files the patches modify, the agent's changes so far, and a reference fix. The agent cannot see the reference fix. Use it only to judge how the code behaves: where the agent's changes do what the reference fix does, the code behaves as fixed; elsewhere it behaves as the agent's code does.

How to predict:
- Follow the code that actually runs: the files shown plus the agent's changes. Print only what that code prints; never invent output it would not produce.
- Python errors appear on stderr as Python prints them: the full traceback with /testbed paths and line numbers, then the exception line.
- Test runs look like the runner's real output. For pytest: the session header, progress lines, failure details with assertion messages, the short summary and the final counts line; exit code 0 when every test passes, 1 when some fail, 2 on collection errors, 4 on usage errors, 5 when nothing was collected.
- A file that does not exist gives the interpreter's real error, e.g. "python: can't open file '/testbed/x.py': [Errno 2] No such file or directory" with exit code 2.
- When the command runs something that is not shown, infer its behaviour from the context and keep the output plausible and brief.

Answer with a single JSON object and nothing after it:
{"stdout": "...", "stderr": "...", "exit_code": 0}
You may think first inside <think>...</think>."#;

/// The reward model's instructions.
pub const SWR_SYSTEM_PROMPT: &str = r#"You are the test runner of a software repository checked out at /testbed, with every dependency installed. A coding agent has submitted a patch for an issue; you run the repository's tests against the patched code in your head and report the outcome.

You are given the test command, the FAIL_TO_PASS tests (they fail before a correct fix and must pass after it), the PASS_TO_PASS tests (they must keep passing), the test files, the issue, an initial analysis, the agent's patch, a reference fix and the original contents of the files the patches modify. The reference fix is not the agent's patch: use it to judge whether the agent's patch makes the tests behave the same way.

Decide, for every listed test, whether it passes with the agent's patch applied. The reward is 1 if and only if every FAIL_TO_PASS test and every PASS_TO_PASS test passes, and 0 otherwise. A patch that differs from the reference fix still earns 1 when it makes every listed test pass; a patch that only looks plausible earns 0 when any listed test fails or errors.

First reason step by step inside <think>...</think>. Then answer with a single JSON object and nothing after it:
{"test_report": "...", "reward": 0}
The test_report says which FAIL_TO_PASS and PASS_TO_PASS tests pass or fail and names the key errors; the reward is the integer 0 or 1."#;

/// The analysis model's instructions (the initial analysis both world models are shown).
pub const ANALYSIS_SYSTEM_PROMPT: &str = r#"You are a senior software engineer who fixes bugs for a living. You are given a bug report, the discussion around it, the repository's name, the patch that fixed it, the patch that changed its tests, and the tests that must go from failing to passing (FAIL_TO_PASS) and keep passing (PASS_TO_PASS).

Write a short technical analysis of the problem and its fix, for a colleague who must predict how the code behaves before and after changes:
- the core bug, and how it shows (wrong output, exception, crash);
- which modules and functions are responsible;
- what the fix changes, and why that fixes the bug;
- what the FAIL_TO_PASS and PASS_TO_PASS tests check;
- subtle constraints or corner cases that matter.

Write 5 to 10 short markdown bullets ("- "), one or two sentences each, in plain English. Summarize the patches and test lists; do not copy them. Write nothing else."#;

/// Builds a user message out of titled sections.
#[derive(Default)]
pub(super) struct Message {
    text: String,
}

impl Message {
    /// Adds `# title` and `body`.
    pub(super) fn section(&mut self, title: &str, body: &str) {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str("# ");
        self.text.push_str(title);
        self.text.push_str("\n\n");
        self.text.push_str(body);
        if !body.ends_with('\n') {
            self.text.push('\n');
        }
    }

    /// Adds the files of a section, or `empty` when there are none.
    pub(super) fn files(&mut self, title: &str, files: &[FileText], empty: &str) {
        if files.is_empty() {
            self.section(title, empty);
        } else {
            let body: Vec<String> = files.iter().map(FileText::render).collect();
            self.section(title, &body.join("\n"));
        }
    }

    /// Adds the issue, analysis and hints.
    pub(super) fn issue(&mut self, issue: &IssueContext) {
        self.section("Issue", &issue.problem_statement);
        let analysis = issue.initial_analysis.as_deref();
        self.section("Initial analysis", analysis.unwrap_or("(not available)"));
        if let Some(hints) = &issue.hints {
            self.section("Hints from the issue discussion", hints);
        }
    }

    /// Adds the patches and the original files.
    pub(super) fn patches(&mut self, issue: &IssueContext, agent_title: &str) {
        let agent = if issue.agent_patch.trim().is_empty() {
            "(no changes)".to_owned()
        } else {
            fenced("diff", &issue.agent_patch)
        };
        self.section(agent_title, &agent);
        let gold = match &issue.gold_patch {
            Some(patch) => fenced("diff", patch),
            None => "(not available)".to_owned(),
        };
        self.section("Reference fix (hidden from the agent)", &gold);
        self.files(
            "Original contents of the files the patches modify",
            &issue.original_files,
            "(none)",
        );
    }

    /// Ends the message with `request`.
    pub(super) fn finish(mut self, request: &str) -> String {
        self.text.push('\n');
        self.text.push_str(request);
        self.text.push('\n');
        self.text
    }
}
