//! The initial-analysis request: what the analysis model sees to summarize a task's bug,
//! fix and tests (SWE-World's Figure G.1, in this project's words): the repository, the
//! issue, the hints, the gold patch, the test patch and the test lists, each cut to its
//! budget.

use swerve_core::Task;
use swerve_llm::Message;

use super::evaluation::TestList;
use super::files::fenced;
use super::prompt::{self, ANALYSIS_SYSTEM_PROMPT};
use super::{ContextConfig, gold_patch};
use crate::tokens::{TokenCounter, fit};

/// The system and user messages asking for `task`'s initial analysis.
pub fn analysis_messages(
    task: &Task,
    config: &ContextConfig,
    counter: &dyn TokenCounter,
) -> Vec<Message> {
    let budgets = &config.budgets;
    let cut = |text: &str, budget: usize| fit(text, budget, counter).0.into_owned();
    let patch = |patch: Option<&str>, budget: usize| match patch {
        Some(patch) if !patch.trim().is_empty() => fenced("diff", &cut(patch, budget)),
        _ => "(not available)".to_owned(),
    };
    let hints = task
        .hints_text
        .as_deref()
        .filter(|hints| !hints.trim().is_empty())
        .map_or_else(
            || "(none)".to_owned(),
            // The analysis sees the discussion (Fig. G.1) even when the world models do not.
            |hints| cut(hints, nonzero_or(budgets.hints, ANALYSIS_HINTS)),
        );
    let mut message = prompt::Message::default();
    message.section("Repository", &task.repo);
    message.section(
        "Issue",
        &cut(&task.problem_statement, budgets.problem_statement),
    );
    message.section("Hints from the issue discussion", &hints);
    message.section(
        "Gold patch (the fix)",
        &patch(gold_patch(task), budgets.gold_patch),
    );
    message.section(
        "Test patch (changes to the tests)",
        &patch(task.test_patch.as_deref(), budgets.code),
    );
    message.section(
        "FAIL_TO_PASS tests (fail before the fix, pass after it)",
        &TestList::fit(&task.fail_to_pass, budgets.fail_to_pass, counter).render(),
    );
    message.section(
        "PASS_TO_PASS tests (keep passing)",
        &TestList::fit(&task.pass_to_pass, budgets.pass_to_pass, counter).render(),
    );
    vec![
        Message::system(ANALYSIS_SYSTEM_PROMPT),
        Message::user(message.finish(
            "Write the initial analysis: 5 to 10 bullet points, plain English, nothing else.",
        )),
    ]
}

/// The hints' budget in the analysis prompt when `budgets.hints` is 0 (hints off for the
/// world models).
const ANALYSIS_HINTS: usize = 2_048;

fn nonzero_or(budget: usize, default: usize) -> usize {
    if budget == 0 { default } else { budget }
}
