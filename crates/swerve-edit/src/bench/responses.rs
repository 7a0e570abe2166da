//! SWE-Edit's normalized-match reward of model responses to PR-Edit instances, read from a
//! JSON-lines file of `{"instance_id", "response"}` rows (`swerve edit-bench reward`).

use std::path::Path;

use super::instance::{BenchError, EditInstance};
use crate::{EditFormat, MatchOptions, edit_reward};

/// The rewards of a responses file.
pub struct Rewards {
    /// One JSON line per response: its `instance_id` and the reward's fields.
    pub lines: String,
    /// The sum of the rewards.
    pub total: f64,
    /// How many responses were scored.
    pub count: usize,
}

/// Scores each response of the file `responses` against its instance among `instances`
/// (read from `instances_path`, named in errors) under `format` and `matching`. Blank lines
/// are skipped; a line that is not JSON, lacks `instance_id` or `response`, or names an
/// unknown instance is an error naming the file and line.
pub fn reward_responses(
    instances: &[EditInstance],
    instances_path: &Path,
    responses: &Path,
    format: EditFormat,
    matching: &MatchOptions,
) -> Result<Rewards, BenchError> {
    let by_id: std::collections::HashMap<&str, &EditInstance> = instances
        .iter()
        .map(|instance| (instance.instance_id.as_str(), instance))
        .collect();
    let text = std::fs::read_to_string(responses).map_err(|source| BenchError::Read {
        path: responses.to_owned(),
        source,
    })?;
    let mut out = String::new();
    let (mut total, mut count) = (0.0, 0usize);
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let place = || format!("{}:{}", responses.display(), number + 1);
        let row: serde_json::Value =
            serde_json::from_str(line).map_err(|source| BenchError::NotJson {
                place: place(),
                source,
            })?;
        let Some(id) = row["instance_id"].as_str() else {
            return Err(BenchError::Response(format!(
                "{}: field \"instance_id\" (a string) is missing",
                place()
            )));
        };
        let Some(response) = row["response"].as_str() else {
            return Err(BenchError::Response(format!(
                "{}: field \"response\" (a string) is missing",
                place()
            )));
        };
        let Some(instance) = by_id.get(id) else {
            return Err(BenchError::Response(format!(
                "{}: instance_id {id:?} is not in {}",
                place(),
                instances_path.display()
            )));
        };
        let reward = edit_reward(
            &instance.original,
            &instance.target,
            response,
            format,
            matching,
        );
        total += reward.reward;
        count += 1;
        let mut line = serde_json::json!({"instance_id": id});
        if let (Some(line), serde_json::Value::Object(fields)) = (
            line.as_object_mut(),
            serde_json::to_value(&reward)
                .map_err(|error| BenchError::Response(error.to_string()))?,
        ) {
            line.extend(fields);
        }
        out.push_str(&line.to_string());
        out.push('\n');
    }
    Ok(Rewards {
        lines: out,
        total,
        count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use swerve_core::hint::report;

    fn instance() -> EditInstance {
        let line = r#"{"instance_id": "a", "original": "x = 1\n", "target": "x = 2\n", "instruction": "set x to 2"}"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("instances.jsonl");
        std::fs::write(&path, format!("{line}\n")).unwrap();
        crate::bench::read_instances(&path).unwrap().remove(0)
    }

    /// The error of scoring `text` as a responses file, as the command prints it.
    fn error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let responses = dir.path().join("responses.jsonl");
        std::fs::write(&responses, text).unwrap();
        let result = reward_responses(
            &[instance()],
            Path::new("instances.jsonl"),
            &responses,
            EditFormat::default(),
            &MatchOptions::default(),
        );
        let error = report(&result.err().expect("an error"));
        error.replace(&responses.display().to_string(), "responses.jsonl")
    }

    #[test]
    fn each_bad_line_is_named_by_file_line_and_field() {
        assert_eq!(
            error("\n{"),
            "error: responses.jsonl:2: not JSON: EOF while parsing an object at line 1 column 1"
        );
        assert_eq!(
            error(r#"{"response": "r"}"#),
            "error: responses.jsonl:1: field \"instance_id\" (a string) is missing"
        );
        assert_eq!(
            error(r#"{"instance_id": "a"}"#),
            "error: responses.jsonl:1: field \"response\" (a string) is missing"
        );
        assert_eq!(
            error(r#"{"instance_id": "b", "response": "r"}"#),
            "error: responses.jsonl:1: instance_id \"b\" is not in instances.jsonl"
        );
        let missing = reward_responses(
            &[],
            Path::new("instances.jsonl"),
            Path::new("/nonexistent/responses.jsonl"),
            EditFormat::default(),
            &MatchOptions::default(),
        );
        assert_eq!(
            report(&missing.err().expect("an error")),
            "error: cannot read /nonexistent/responses.jsonl: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn every_response_is_scored_and_summed() {
        let dir = tempfile::tempdir().unwrap();
        let responses = dir.path().join("responses.jsonl");
        std::fs::write(
            &responses,
            "{\"instance_id\": \"a\", \"response\": \"no edit\"}\n\n",
        )
        .unwrap();
        let rewards = reward_responses(
            &[instance()],
            Path::new("instances.jsonl"),
            &responses,
            EditFormat::default(),
            &MatchOptions::default(),
        )
        .unwrap();
        assert_eq!(rewards.count, 1);
        assert!(
            rewards.lines.starts_with("{\"instance_id\":\"a\""),
            "{}",
            rewards.lines
        );
        assert_eq!(rewards.lines.lines().count(), 1);
    }
}
