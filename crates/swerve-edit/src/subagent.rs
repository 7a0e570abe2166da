//! The viewer and editor subagents: one model call each, with a clean context (their own
//! system prompt and one user message). Each returns the observation text for the main
//! agent, what happened in a form metrics can count, and the call as a [`SubTrajectory`]
//! for the step's record. A failed model call or an unusable reply is an observation,
//! never an error.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::{SubTrajectory, SubagentCall};
use swerve_llm::{Message, Model, ModelRequest, Role};

use crate::blocks::{ApplyError, MatchOptions, Mode, apply};
use crate::format::EditFormat;
use crate::prompts::{VIEWER_SYSTEM, editor_message, editor_system, viewer_message};
use crate::ranges::{LineRange, parse_ranges, render};
use crate::regions::changed_regions;
use crate::text::{EditableText, after_think, split_lines};

/// A file handed to a subagent: the path shown in messages and its contents.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    /// The path as the agent sees it, e.g. `/testbed/src/app.py`.
    pub path: &'a str,
    /// The file's contents.
    pub text: &'a str,
}

/// How a view ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum ViewStatus {
    /// Line ranges were shown: `lines` of the file's `total`.
    Shown {
        /// Lines shown.
        lines: usize,
        /// Lines in the file.
        total: usize,
    },
    /// The viewer found nothing relevant.
    NothingRelevant,
    /// The reply held no line ranges.
    ParseError,
    /// The model could not be called.
    ModelError,
}

impl ViewStatus {
    /// The status's name, as recorded in [`SubTrajectory::status`].
    pub fn name(&self) -> &'static str {
        match self {
            Self::Shown { .. } => "shown",
            Self::NothingRelevant => "nothing_relevant",
            Self::ParseError => "parse_error",
            Self::ModelError => "model_error",
        }
    }
}

/// What a view produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewOutcome {
    /// The observation text.
    pub output: String,
    /// How it ended.
    pub status: ViewStatus,
    /// The line ranges shown, clamped, sorted and merged (empty unless
    /// [`ViewStatus::Shown`]).
    pub ranges: Vec<LineRange>,
    /// The viewer's model call.
    pub subagent: SubTrajectory,
}

/// How an edit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditStatus {
    /// The blocks applied and changed the file.
    Applied,
    /// The blocks applied and left the file as it was.
    Unchanged,
    /// The reply was not well-formed: no block, or a rewrite that was not alone.
    FormatError,
    /// Well-formed blocks whose SEARCH matched nowhere or more than once.
    MatchFailure,
    /// The model could not be called.
    ModelError,
    /// The edit applied but the file could not be written.
    WriteError,
}

impl EditStatus {
    /// The status's name, as recorded in [`SubTrajectory::status`].
    pub fn name(&self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::Unchanged => "unchanged",
            Self::FormatError => "format_error",
            Self::MatchFailure => "match_failure",
            Self::ModelError => "model_error",
            Self::WriteError => "write_error",
        }
    }
}

/// What an edit produced. Nothing is written: the caller writes [`EditOutcome::new_text`].
#[derive(Debug, Clone, PartialEq)]
pub struct EditOutcome {
    /// The observation text.
    pub output: String,
    /// How it ended.
    pub status: EditStatus,
    /// The edited file (in the file's own line endings), when the blocks applied.
    pub new_text: Option<String>,
    /// Find-and-replace or rewrite, when the reply was well-formed.
    pub mode: Option<Mode>,
    /// How many blocks the reply had, when it was well-formed.
    pub blocks: usize,
    /// How many blocks the whitespace-tolerant fallback applied.
    pub fallbacks: usize,
    /// The editor's model call.
    pub subagent: SubTrajectory,
}

/// Asks the viewer `model` which lines of `file` answer `query`, and renders them.
pub async fn view(model: &dyn Model, file: SourceFile<'_>, query: &str) -> ViewOutcome {
    let (reply, mut subagent) = ask(
        model,
        "viewer",
        VIEWER_SYSTEM,
        viewer_message(file.text, query),
    )
    .await;
    let lines = split_lines(file.text);
    let (output, status, ranges) = match reply {
        Err(error) => (error, ViewStatus::ModelError, Vec::new()),
        Ok(reply) => match parse_ranges(&reply, lines.len()) {
            Err(error) => (
                format!(
                    "ERROR parsing LLM response: {error}\nLLM output was:\n{}",
                    after_think(&reply)
                ),
                ViewStatus::ParseError,
                Vec::new(),
            ),
            Ok(ranges) if ranges.is_empty() => (
                render(file.path, &lines, &ranges),
                ViewStatus::NothingRelevant,
                ranges,
            ),
            Ok(ranges) => (
                render(file.path, &lines, &ranges),
                ViewStatus::Shown {
                    lines: ranges.iter().map(|range| range.line_count()).sum(),
                    total: lines.len(),
                },
                ranges,
            ),
        },
    };
    subagent.status = Some(status.name().to_owned());
    ViewOutcome {
        output,
        status,
        ranges,
        subagent,
    }
}

/// Asks the editor `model` to carry out `instruction` on `file` under the `format` policy
/// and applies its blocks in memory (see [`crate::blocks`]).
pub async fn edit(
    model: &dyn Model,
    file: SourceFile<'_>,
    instruction: &str,
    options: &MatchOptions,
    format: EditFormat,
) -> EditOutcome {
    let editable = EditableText::new(file.text);
    let (reply, mut subagent) = ask(
        model,
        "editor",
        editor_system(format),
        editor_message(&editable.text, instruction),
    )
    .await;
    let mut outcome = EditOutcome {
        output: String::new(),
        status: EditStatus::ModelError,
        new_text: None,
        mode: None,
        blocks: 0,
        fallbacks: 0,
        subagent: SubTrajectory::default(),
    };
    match reply.map(|reply| apply(&editable.text, &reply, options).and_then(|a| format.check(a))) {
        Err(error) => outcome.output = error,
        Ok(Err(error)) => {
            outcome.status = EditStatus::from(&error);
            if outcome.status == EditStatus::MatchFailure {
                outcome.mode = Some(Mode::Targeted);
            }
            outcome.output = error.message();
        }
        Ok(Ok(applied)) => {
            outcome.mode = Some(applied.mode);
            outcome.blocks = applied.blocks;
            outcome.fallbacks = applied.fallbacks.len();
            let path = file.path;
            if applied.text == editable.text {
                outcome.status = EditStatus::Unchanged;
                outcome.output = format!("No changes made to {path}.");
            } else {
                outcome.status = EditStatus::Applied;
                outcome.output = format!(
                    "Successfully edited {path}.\n\nThe modified regions in the file are now:\n{}",
                    changed_regions(&editable.text, &applied.text)
                );
            }
            for fallback in &applied.fallbacks {
                outcome.output.push_str(&format!(
                    "\n\nNote: SEARCH block {} matched no text exactly; it was applied to lines {}-{}, which equal it when leading and trailing whitespace is ignored.",
                    fallback.block, fallback.lines.start, fallback.lines.end
                ));
            }
            outcome.new_text = Some(editable.restore(&applied.text));
        }
    }
    subagent.status = Some(outcome.status.name().to_owned());
    outcome.subagent = subagent;
    outcome
}

impl From<&ApplyError> for EditStatus {
    fn from(error: &ApplyError) -> Self {
        match error.is_format_error() {
            true => Self::FormatError,
            false => Self::MatchFailure,
        }
    }
}

/// One model call with a system prompt and a user message. The reply text, or the
/// observation for a failed call (`ERROR calling LLM: …`), and the call's record.
pub(crate) async fn ask(
    model: &dyn Model,
    agent: &str,
    system: &str,
    user: String,
) -> (Result<String, String>, SubTrajectory) {
    let messages = vec![
        Message::new(Role::System, system),
        Message::new(Role::User, user),
    ];
    let request = ModelRequest::chat(messages.clone());
    let started = Instant::now();
    let answer = model.complete(&request).await;
    let mut call = SubagentCall {
        messages,
        ..SubagentCall::default()
    };
    let reply = match answer {
        Ok(response) => {
            call.response_text = response.content.clone();
            call.reasoning = response.reasoning_content;
            call.usage = Some(response.usage);
            call.cost = Some(response.cost);
            call.model_seconds = Some(response.latency.as_secs_f64());
            Ok(response.content)
        }
        Err(error) => {
            call.model_seconds = Some(started.elapsed().as_secs_f64());
            call.error = Some(error.to_string());
            Err(format!("ERROR calling LLM: {error}"))
        }
    };
    let record = SubTrajectory {
        agent: agent.to_owned(),
        model: model.name().to_owned(),
        calls: vec![call],
        status: None,
    };
    (reply, record)
}
