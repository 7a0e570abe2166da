//! `validate_tasks`: every check, its level and its message.

use swerve_core::task::{Problem, Severity, Task, validate_tasks};

fn task(id: &str) -> Task {
    let mut task = Task::new(
        id,
        "owner/name",
        "0123456789abcdef0123456789abcdef01234567",
        "Fix it.",
    );
    task.fail_to_pass = vec!["tests/test_a.py::test_a".into()];
    task
}

/// Each problem's `Display` text.
fn lines(problems: &[Problem]) -> Vec<String> {
    problems.iter().map(ToString::to_string).collect()
}

#[test]
fn clean_tasks_have_no_problems() {
    let mut short = task("o__n-2");
    short.base_commit = "ABCDEF1".into();
    short.environment_setup_commit = Some("abcdef1".into());
    assert_eq!(validate_tasks(&[task("o__n-1"), short]), []);
    assert_eq!(validate_tasks(&[]), []);
}

#[test]
fn duplicates() {
    let mut changed = task("o__n-1");
    changed.problem_statement = "Something else.".into();
    let problems = validate_tasks(&[task("o__n-1"), task("o__n-2"), task("o__n-1"), changed]);
    assert_eq!(
        lines(&problems),
        [
            r#"warning: record 3 (instance_id "o__n-1"): field "instance_id": repeats record 1 exactly; drop one copy"#,
            r#"error: record 4 (instance_id "o__n-1"): field "instance_id": is also the id of record 1, which differs; instance ids must be unique"#,
        ]
    );
    assert_eq!(problems[0].severity, Severity::Warning);
    assert_eq!(problems[1].severity, Severity::Error);
    assert_eq!(problems[1].index, 3);
    assert_eq!(problems[1].field, "instance_id");
}

#[test]
fn every_check() {
    let mut bad = Task::new(" ", "", "", " \n");
    bad.environment_setup_commit = Some("v1.2".into());
    let mut odd = task("o__n-2");
    odd.repo = "just-a-name".into();
    odd.base_commit = "main".into();
    odd.environment_setup_commit = Some("0123456789abcdef0123456789abcdef012345678".into());
    assert_eq!(
        lines(&validate_tasks(&[bad, odd])),
        [
            r#"error: record 1 (instance_id " "): field "instance_id": is empty; give every task a unique id"#,
            r#"error: record 1 (instance_id " "): field "repo": is empty; give the GitHub repository as "owner/name""#,
            r#"error: record 1 (instance_id " "): field "base_commit": is empty; give the commit id to check out"#,
            r#"warning: record 1 (instance_id " "): field "environment_setup_commit": "v1.2" does not look like a commit id (7 to 40 hex digits); a branch or tag name can move, so pin the commit"#,
            r#"warning: record 1 (instance_id " "): field "problem_statement": is empty; the agent would get no issue to fix"#,
            r#"warning: record 1 (instance_id " "): field "FAIL_TO_PASS": is empty, so any patch that keeps PASS_TO_PASS passing would count as resolving the task"#,
            r#"warning: record 2 (instance_id "o__n-2"): field "repo": "just-a-name" is not of the form "owner/name""#,
            r#"warning: record 2 (instance_id "o__n-2"): field "base_commit": "main" does not look like a commit id (7 to 40 hex digits); a branch or tag name can move, so pin the commit"#,
            r#"warning: record 2 (instance_id "o__n-2"): field "environment_setup_commit": "0123456789abcdef0123456789abcdef012345678" does not look like a commit id (7 to 40 hex digits); a branch or tag name can move, so pin the commit"#,
        ]
    );
}

#[test]
fn severities_order() {
    assert!(Severity::Warning < Severity::Error);
}
