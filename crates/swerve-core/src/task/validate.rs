//! Checks beyond parsing, for `swerve tasks validate`: [`validate_tasks`].
//!
//! Levels: an [`Severity::Error`] makes a task unusable or ambiguous (it cannot be checked
//! out, or its id does not identify it); a [`Severity::Warning`] is suspicious but may be
//! intended.
//!
//! | Check | Level |
//! |---|---|
//! | `instance_id` empty | error |
//! | `instance_id` used by an earlier record with different contents | error |
//! | `instance_id` used by an earlier, identical record | warning |
//! | `repo` empty | error |
//! | `repo` not `owner/name` | warning |
//! | `base_commit` empty | error |
//! | `base_commit` not 7–40 hex digits (a branch or tag, say) | warning |
//! | `environment_setup_commit` present but not 7–40 hex digits | warning |
//! | `problem_statement` empty or blank | warning |
//! | `FAIL_TO_PASS` empty | warning |

use std::collections::HashMap;
use std::fmt;

use super::Task;

/// How serious a [`Problem`] is (errors sort after warnings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Suspicious, but the task can be used.
    Warning,
    /// The task cannot be used as it is.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One finding of [`validate_tasks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// How serious it is.
    pub severity: Severity,
    /// The task's position in the slice given to [`validate_tasks`], from 0.
    /// `Display` shows it as "record N", from 1, like [`TaskFileError`](super::TaskFileError).
    pub index: usize,
    /// The task's `instance_id`.
    pub instance_id: String,
    /// The field at fault, by its JSON name.
    pub field: &'static str,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: record {} (instance_id {:?}): field {:?}: {}",
            self.severity,
            self.index + 1,
            self.instance_id,
            self.field,
            self.message
        )
    }
}

/// Checks `tasks` as a set (see the module docs for the checks and their levels).
/// Problems come in record order.
pub fn validate_tasks(tasks: &[Task]) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut first_with_id: HashMap<&str, usize> = HashMap::new();
    for (index, task) in tasks.iter().enumerate() {
        let mut report = |severity, field, message: String| {
            problems.push(Problem {
                severity,
                index,
                instance_id: task.instance_id.clone(),
                field,
                message,
            });
        };
        if task.instance_id.trim().is_empty() {
            report(
                Severity::Error,
                "instance_id",
                "is empty; give every task a unique id".into(),
            );
        } else if let Some(&first) = first_with_id.get(task.instance_id.as_str()) {
            let record = first + 1;
            if tasks[first] == *task {
                let message = format!("repeats record {record} exactly; drop one copy");
                report(Severity::Warning, "instance_id", message);
            } else {
                let message = format!(
                    "is also the id of record {record}, which differs; instance ids must be unique"
                );
                report(Severity::Error, "instance_id", message);
            }
        } else {
            first_with_id.insert(&task.instance_id, index);
        }
        if task.repo.trim().is_empty() {
            report(
                Severity::Error,
                "repo",
                "is empty; give the GitHub repository as \"owner/name\"".into(),
            );
        } else if task.owner_and_name().is_none() {
            let message = format!("{:?} is not of the form \"owner/name\"", task.repo);
            report(Severity::Warning, "repo", message);
        }
        if task.base_commit.trim().is_empty() && task.image().is_some() {
            // The repository's commit is the image's.
        } else if task.base_commit.trim().is_empty() {
            let message = "is empty; give the commit id to check out".into();
            report(Severity::Error, "base_commit", message);
        } else if !looks_like_commit(&task.base_commit) {
            report(
                Severity::Warning,
                "base_commit",
                not_a_commit(&task.base_commit),
            );
        }
        if let Some(commit) = &task.environment_setup_commit
            && !looks_like_commit(commit)
        {
            report(
                Severity::Warning,
                "environment_setup_commit",
                not_a_commit(commit),
            );
        }
        if task.problem_statement.trim().is_empty() {
            let message = "is empty; the agent would get no issue to fix".into();
            report(Severity::Warning, "problem_statement", message);
        }
        if task.fail_to_pass.is_empty() {
            let message = "is empty, so any patch that keeps PASS_TO_PASS passing would count as resolving the task".into();
            report(Severity::Warning, "FAIL_TO_PASS", message);
        }
    }
    problems
}

/// True for 7 to 40 hex digits: a full or abbreviated git commit id.
fn looks_like_commit(text: &str) -> bool {
    (7..=40).contains(&text.len()) && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

fn not_a_commit(text: &str) -> String {
    format!(
        "{text:?} does not look like a commit id (7 to 40 hex digits); a branch or tag name can move, so pin the commit"
    )
}
