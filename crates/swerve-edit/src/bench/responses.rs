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
