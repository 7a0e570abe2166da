//! SWE-Dev trajectories: its RFT JSON lines, SWE-AGILE's SFT source (one line per run).
//!
//! A line is `{"traj_id"?, "instance_id"?, "messages": [...]}` plus optional result fields.
//! The messages are OpenHands CodeAct conversations flattened to chat text: assistant
//! replies carry R2E-Gym-style `<function=NAME><parameter=KEY>…</parameter></function>`
//! calls (SWE-Dev's three tools: `execute_bash`, `str_replace_editor`, `finish`), and each
//! observation is the `user` (or `tool`) message after the reply, `EXECUTION RESULT of
//! [NAME]:` followed by the output. Native `tool_calls` are read too.
//!
//! Every assistant message is one step; its request is every message before it, stored as
//! a delta of the previous step's. Tool names are kept as written.

use serde_json::{Map, Value};

use super::json::{
    array_at, content_text, f64_at, get, item, message, native_call, object, rest, str_at,
};
use super::text::{think_reasoning, xml_call};
use crate::trajectory::error::{TrajectoryError, TrajectoryErrorKind, describe};
use crate::trajectory::{ExitReason, Header, Message, MessagesSent, Outcome, Step, Trajectory};

/// The fields that carry the final patch, in the order they are looked for.
const PATCH_FIELDS: [&str; 3] = ["patch", "model_patch", "git_patch"];
/// The fields read into the header, the steps or the outcome (the rest go to `extra`).
const USED_FIELDS: [&str; 8] = [
    "traj_id",
    "instance_id",
    "messages",
    "patch",
    "model_patch",
    "git_patch",
    "resolved",
    "reward",
];

/// Imports one SWE-Dev trajectory (one line of its JSON-lines file).
pub fn swe_dev(value: &Value) -> Result<Trajectory, TrajectoryError> {
    let run = object(value, "")?;
    let messages = array_at(value, "messages", "")?;
    let traj_id = str_at(value, "traj_id", "")?;
    let instance_id = match (str_at(value, "instance_id", "")?, traj_id) {
        (Some(id), _) => id.to_owned(),
        (None, Some(traj_id)) => instance_from_traj_id(traj_id).to_owned(),
        (None, None) => {
            return Err(TrajectoryError::in_field(
                "instance_id",
                TrajectoryErrorKind::InvalidValue {
                    message: "a SWE-Dev line needs \"instance_id\" or \"traj_id\"".into(),
                },
            ));
        }
    };

    let mut assistants = Vec::new();
    for (position, entry) in messages.iter().enumerate() {
        if str_at(entry, "role", &item("messages", position))? == Some("assistant") {
            assistants.push(position);
        }
    }
    let first = assistants.first().copied().unwrap_or(messages.len());
    let last = assistants.last().copied().unwrap_or(first);
    let converted = messages[..last]
        .iter()
        .enumerate()
        .map(|(position, entry)| message(entry, &item("messages", position)))
        .collect::<Result<Vec<Message>, _>>()?;

    let mut source = Map::new();
    source.insert("format".into(), "swe-dev".into());
    if let Some(traj_id) = traj_id {
        source.insert("traj_id".into(), traj_id.into());
    }
    let mut header = Header {
        id: format!("swe-dev/{}", traj_id.unwrap_or(&instance_id)),
        instance_id,
        created_at: None,
        config: Value::Null,
        prompt: converted[..first.min(converted.len())].to_vec(),
        extra: rest(run, &USED_FIELDS),
    };
    header
        .extra
        .insert("imported_from".into(), Value::Object(source));

    let mut steps = Vec::with_capacity(assistants.len());
    for (index, &position) in assistants.iter().enumerate() {
        let next = assistants.get(index + 1).copied().unwrap_or(messages.len());
        let base = index.checked_sub(1);
        let base_messages = match base {
            Some(previous) => &converted[..assistants[previous]],
            None => &header.prompt[..],
        };
        let mut step = step(index, &messages[position], &messages[position + 1..next]);
        step.messages_sent = Some(MessagesSent::delta(
            base,
            base_messages,
            &converted[..position],
        ));
        steps.push(step);
    }

    let outcome = outcome(value, &steps)?;
    Ok(Trajectory {
        header,
        steps,
        outcome,
    })
}

/// SWE-Dev names runs `<instance_id>` or `<instance_id>_<n>` / `<instance_id>__<n>`: the id
/// without a trailing all-digit sample suffix.
fn instance_from_traj_id(traj_id: &str) -> &str {
    match traj_id.rsplit_once('_') {
        Some((stem, number))
            if !number.is_empty()
                && number.bytes().all(|byte| byte.is_ascii_digit())
                && !stem.is_empty() =>
        {
            stem.strip_suffix('_').unwrap_or(stem)
        }
        _ => traj_id,
    }
}

/// One assistant message and the messages that answered it.
fn step(index: usize, assistant: &Value, followers: &[Value]) -> Step {
    let mut step = Step::new(index, content_text(assistant));
    step.reasoning = get(assistant, "reasoning_content")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| think_reasoning(&step.response_text));
    let native = assistant.pointer("/tool_calls/0/function");
    match native {
        Some(function) => {
            step.call_text = function
                .get("arguments")
                .and_then(Value::as_str)
                .map(str::to_owned);
            step.tool_call = Some(native_call(function));
        }
        None => {
            let text = &step.response_text;
            let call_region = text
                .rfind("</think>")
                .map_or(0, |end| end + "</think>".len());
            let region = &text[call_region..];
            match region.find("<function") {
                Some(start) => {
                    let block = &region[start..];
                    let block = match block.find("</function>") {
                        Some(end) => &block[..end + "</function>".len()],
                        None => block,
                    };
                    step.call_text = Some(block.to_owned());
                    step.tool_call = xml_call(block);
                    if step.tool_call.is_none() {
                        step.format_error = Some("a <function=…> call without a name".into());
                    }
                }
                None => step.format_error = Some("no <function=…> call".into()),
            }
        }
    }
    let answers: Vec<String> = followers.iter().map(content_text).collect();
    if !answers.is_empty() {
        step.observation = Some(answers.join("\n"));
    }
    step
}

/// The outcome: submitted when the last reply calls `finish` (or `submit`), with the patch
/// and `resolved`/`reward` when the line has them; `None` for a run without replies or any
/// of these.
fn outcome(value: &Value, steps: &[Step]) -> Result<Option<Outcome>, TrajectoryError> {
    let mut patch = None;
    for key in PATCH_FIELDS {
        if let Some(found) = str_at(value, key, "")? {
            patch = Some(found.to_owned());
            break;
        }
    }
    let resolved = match get(value, "resolved") {
        None => None,
        Some(Value::Bool(resolved)) => Some(*resolved),
        Some(other) => {
            return Err(TrajectoryError::in_field(
                "resolved",
                TrajectoryErrorKind::WrongType {
                    expected: "a boolean",
                    found: describe(other),
                },
            ));
        }
    };
    let reward = f64_at(value, "reward", "")?;
    let finished = steps.last().map(|step| {
        step.tool_call
            .as_ref()
            .is_some_and(|call| matches!(call.name.as_str(), "finish" | "submit"))
    });
    if patch.is_none() && resolved.is_none() && reward.is_none() && finished.is_none() {
        return Ok(None);
    }
    let (reason, detail) = match finished {
        Some(true) => (ExitReason::Submitted, "finish"),
        _ => (ExitReason::Error, "the last reply does not call finish"),
    };
    let mut outcome = Outcome::new(reason, patch.unwrap_or_default());
    outcome.exit_detail = Some(detail.to_owned());
    outcome.reward = reward.or(resolved.map(|resolved| f64::from(u8::from(resolved))));
    if let Some(resolved) = resolved {
        outcome.eval_report = Some(serde_json::json!({ "resolved": resolved }));
    }
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_suffixes_are_dropped_from_traj_ids() {
        assert_eq!(
            instance_from_traj_id("django__django-11099"),
            "django__django-11099"
        );
        assert_eq!(
            instance_from_traj_id("django__django-11099_3"),
            "django__django-11099"
        );
        assert_eq!(
            instance_from_traj_id("django__django-11099__12"),
            "django__django-11099"
        );
        assert_eq!(
            instance_from_traj_id("astropy__astropy-12907"),
            "astropy__astropy-12907"
        );
        assert_eq!(instance_from_traj_id("a_b"), "a_b");
    }
}
