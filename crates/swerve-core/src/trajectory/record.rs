//! The records of a trajectory file, one JSON object per line, and their checks.
//!
//! Records are read field by field so an error names the field at fault; a field that the
//! schema does not have is an error too (data of other tools goes under `extra`).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::{TrajectoryError, TrajectoryErrorKind, describe};
use super::{Header, Outcome, SCHEMA_VERSION, Step};

/// One line of a trajectory file.
pub(super) enum Record {
    Header(Box<Header>),
    Step(Box<Step>),
    Outcome(Box<Outcome>),
}

/// The header record's line, newline included.
pub(super) fn header_line(header: &Header) -> Result<String, TrajectoryError> {
    line("header", Some(SCHEMA_VERSION), header)
}

/// A step record's line, newline included.
pub(super) fn step_line(step: &Step) -> Result<String, TrajectoryError> {
    line("step", None, step)
}

/// The outcome record's line, newline included.
pub(super) fn outcome_line(outcome: &Outcome) -> Result<String, TrajectoryError> {
    line("outcome", None, outcome)
}

#[derive(Serialize)]
struct Tagged<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<u32>,
    #[serde(flatten)]
    body: &'a T,
}

fn line<T: Serialize>(
    kind: &'static str,
    schema_version: Option<u32>,
    body: &T,
) -> Result<String, TrajectoryError> {
    let tagged = Tagged {
        kind,
        schema_version,
        body,
    };
    let mut text = serde_json::to_string(&tagged)
        .map_err(|err| TrajectoryErrorKind::Write(std::io::Error::other(err)))?;
    text.push('\n');
    Ok(text)
}

/// Parses one line (without its newline) into a record. Errors carry the field, not the
/// file or line.
pub(super) fn parse_record(text: &str) -> Result<Record, TrajectoryError> {
    let value: Value = serde_json::from_str(text).map_err(|err| {
        let full = err.to_string();
        let position = format!(" at line {} column {}", err.line(), err.column());
        let message = full.strip_suffix(&position).unwrap_or(&full);
        TrajectoryErrorKind::InvalidJson {
            message: format!("{message} at column {}", err.column()),
        }
    })?;
    let Value::Object(map) = value else {
        return Err(TrajectoryErrorKind::NotAnObject {
            found: describe(&value),
        }
        .into());
    };
    let mut fields = Fields(map);
    let kind: String = fields.required("type")?;
    let record = match kind.as_str() {
        "header" => Record::Header(Box::new(header(&mut fields)?)),
        "step" => Record::Step(Box::new(step(&mut fields)?)),
        "outcome" => Record::Outcome(Box::new(outcome(&mut fields)?)),
        _ => {
            let found = Value::String(kind).to_string();
            return Err(TrajectoryError::in_field(
                "type",
                TrajectoryErrorKind::UnknownRecordType { found },
            ));
        }
    };
    fields.finish()?;
    Ok(record)
}

fn header(fields: &mut Fields) -> Result<Header, TrajectoryError> {
    let version: u64 = fields.required("schema_version")?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(TrajectoryError::in_field(
            "schema_version",
            TrajectoryErrorKind::UnsupportedVersion {
                found: version,
                supported: SCHEMA_VERSION,
            },
        ));
    }
    Ok(Header {
        id: fields.required("id")?,
        instance_id: fields.required("instance_id")?,
        created_at: fields.optional("created_at")?,
        config: fields.or_default("config")?,
        prompt: fields.or_default("prompt")?,
        extra: fields.or_default("extra")?,
    })
}

fn step(fields: &mut Fields) -> Result<Step, TrajectoryError> {
    Ok(Step {
        index: fields.required("index")?,
        messages_sent: fields.optional("messages_sent")?,
        response_text: fields.required("response_text")?,
        reasoning: fields.optional("reasoning")?,
        digest: fields.optional("digest")?,
        tool_call: fields.optional("tool_call")?,
        call_text: fields.optional("call_text")?,
        format_error: fields.optional("format_error")?,
        observation: fields.optional("observation")?,
        usage: fields.optional("usage")?,
        timings: fields.or_default("timings")?,
        cost: fields.optional("cost")?,
        tokens: fields.optional("tokens")?,
        error: fields.optional("error")?,
        subagents: fields.or_default("subagents")?,
        extra: fields.or_default("extra")?,
    })
}

fn outcome(fields: &mut Fields) -> Result<Outcome, TrajectoryError> {
    Ok(Outcome {
        exit_reason: fields.required("exit_reason")?,
        exit_detail: fields.optional("exit_detail")?,
        patch: fields.required("patch")?,
        cost: fields.optional("cost")?,
        usage: fields.optional("usage")?,
        timings: fields.or_default("timings")?,
        eval_report: fields.optional("eval_report")?,
        reward: fields.optional("reward")?,
        extra: fields.or_default("extra")?,
    })
}

/// The not-yet-read fields of a record.
struct Fields(Map<String, Value>);

impl Fields {
    /// Removes and decodes `key`; absent and `null` are `None`.
    fn optional<T: DeserializeOwned>(&mut self, key: &str) -> Result<Option<T>, TrajectoryError> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => serde_json::from_value(value).map(Some).map_err(|err| {
                let message = err.to_string();
                TrajectoryError::in_field(key, TrajectoryErrorKind::InvalidValue { message })
            }),
        }
    }

    /// Like [`Fields::optional`], but absence is an error.
    fn required<T: DeserializeOwned>(&mut self, key: &str) -> Result<T, TrajectoryError> {
        self.optional(key)?
            .ok_or_else(|| TrajectoryError::in_field(key, TrajectoryErrorKind::MissingField))
    }

    /// Like [`Fields::optional`], but absence is the default value.
    fn or_default<T: DeserializeOwned + Default>(
        &mut self,
        key: &str,
    ) -> Result<T, TrajectoryError> {
        Ok(self.optional(key)?.unwrap_or_default())
    }

    /// Fails on the first field nobody read.
    fn finish(self) -> Result<(), TrajectoryError> {
        match self.0.keys().next() {
            Some(key) => Err(TrajectoryError::in_field(
                key.as_str(),
                TrajectoryErrorKind::UnknownField,
            )),
            None => Ok(()),
        }
    }
}
