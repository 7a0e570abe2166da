//! SWE-bench predictions files: `{"instance_id", "model_name_or_path", "model_patch"}` records
//! as a JSON array, a JSON object keyed by instance id (mini-swe-agent's `preds.json`), or
//! JSON lines.
//!
//! A record that cannot be read does not stop the others: it comes back as a
//! [`PredictionError`] naming the file, the line or record, and what is wrong, so an
//! evaluation run can report it and go on.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One model's patch for one task. `model_patch` is `None` when the model produced none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// The task's id, e.g. `django__django-11099`.
    pub instance_id: String,
    /// Who produced the patch; empty when the record does not say.
    #[serde(default)]
    pub model_name_or_path: String,
    /// The unified diff; `None` (or absent) when the model produced none.
    #[serde(default)]
    pub model_patch: Option<String>,
}

/// A record of a predictions file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file} {place}: {message}")]
pub struct PredictionError {
    /// The predictions file, as given.
    pub file: String,
    /// `line N` or `record N` (counting from 1), or `file` for the whole file.
    pub place: String,
    /// The instance id, when it could be read.
    pub instance_id: Option<String>,
    /// What is wrong with the record.
    pub message: String,
}

/// The readable predictions of a file and the errors of the rest.
#[derive(Debug, Default)]
pub struct Predictions {
    /// The records that could be read, in file order.
    pub predictions: Vec<Prediction>,
    /// One error per record that could not be read.
    pub errors: Vec<PredictionError>,
}

/// Reads a predictions file. Only an unreadable or entirely malformed file is an `Err`.
pub fn load_predictions(path: &Path) -> Result<Predictions, PredictionError> {
    let file = path.display().to_string();
    let whole = |message: String| PredictionError {
        file: file.clone(),
        place: "file".into(),
        instance_id: None,
        message,
    };
    let text =
        std::fs::read_to_string(path).map_err(|error| whole(format!("cannot read: {error}")))?;
    Ok(parse_predictions(&text, &file))
}

/// Parses predictions text (see [`load_predictions`]); `file` names it in errors.
pub fn parse_predictions(text: &str, file: &str) -> Predictions {
    let mut out = Predictions::default();
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    let error = |place: String, instance_id: Option<String>, message: String| PredictionError {
        file: file.to_owned(),
        place,
        instance_id,
        message,
    };
    if trimmed.is_empty() {
        out.errors.push(error(
            "file".into(),
            None,
            "the file is empty; expected SWE-bench predictions".into(),
        ));
        return out;
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Array(records)) => {
            for (index, record) in records.into_iter().enumerate() {
                push(
                    &mut out,
                    record,
                    None,
                    format!("record {}", index + 1),
                    file,
                );
            }
        }
        Ok(Value::Object(map)) if !map.contains_key("instance_id") => {
            for (index, (key, record)) in map.into_iter().enumerate() {
                push(
                    &mut out,
                    record,
                    Some(key),
                    format!("record {}", index + 1),
                    file,
                );
            }
        }
        _ => {
            for (index, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(line) {
                    Ok(record) => push(&mut out, record, None, format!("line {}", index + 1), file),
                    Err(problem) => out.errors.push(error(
                        format!("line {}", index + 1),
                        None,
                        format!(
                            "invalid JSON ({problem}); each line must hold one prediction object"
                        ),
                    )),
                }
            }
        }
    }
    out
}

/// Reads one record; `key` is the instance id when the file is keyed by id.
fn push(out: &mut Predictions, record: Value, key: Option<String>, place: String, file: &str) {
    let id_hint = record
        .get("instance_id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| key.clone());
    let mut record = record;
    if let (Some(key), Value::Object(map)) = (&key, &mut record) {
        map.entry("instance_id")
            .or_insert_with(|| Value::String(key.clone()));
    }
    match serde_json::from_value::<Prediction>(record) {
        Ok(prediction) if prediction.instance_id.is_empty() => out.errors.push(PredictionError {
            file: file.to_owned(),
            place,
            instance_id: None,
            message: "field \"instance_id\" is empty".into(),
        }),
        Ok(prediction) => out.predictions.push(prediction),
        Err(problem) => out.errors.push(PredictionError {
            file: file.to_owned(),
            place,
            instance_id: id_hint,
            message: format!("not a prediction ({problem}); expected {{\"instance_id\", \"model_name_or_path\", \"model_patch\"}}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_shape_and_keeps_going_past_bad_records() {
        let array = r#"[{"instance_id":"a","model_name_or_path":"m","model_patch":"diff"},{"instance_id":"b","model_patch":null}]"#;
        let parsed = parse_predictions(array, "preds.json");
        assert_eq!(parsed.predictions.len(), 2);
        assert_eq!(parsed.predictions[1].model_patch, None);
        let keyed = r#"{"a": {"model_name_or_path":"m","model_patch":"diff"}}"#;
        assert_eq!(
            parse_predictions(keyed, "preds.json").predictions[0].instance_id,
            "a"
        );
        let lines = "{\"instance_id\":\"a\",\"model_patch\":\"x\"}\n{broken\n\n{\"instance_id\":\"c\",\"model_patch\":7}\n";
        let parsed = parse_predictions(lines, "preds.jsonl");
        assert_eq!(parsed.predictions.len(), 1);
        assert_eq!(parsed.errors.len(), 2);
        assert!(
            parsed.errors[0]
                .to_string()
                .starts_with("preds.jsonl line 2: invalid JSON"),
            "{}",
            parsed.errors[0]
        );
        assert_eq!(parsed.errors[1].instance_id.as_deref(), Some("c"));
        assert!(
            parse_predictions("", "p.json").errors[0]
                .to_string()
                .contains("empty")
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(text in ".{0,400}") {
            let _ = parse_predictions(&text, "p");
        }
    }
}
