//! Hindsight backfill (SWE-AGILE §2.2): detailed reasoning and a digest for every step of
//! an existing trajectory, written by a teacher model that is shown the action the agent
//! actually took.
//!
//! Steps are backfilled in order, because each one's context holds the reasoning written
//! for the steps before it: the teacher sees what the agent would have been sent under the
//! trajectory's reasoning window (the task, every action and observation, the digests, and
//! the reasoning of the last N steps inline), the agent's original note as a hint, and the
//! action ([`prompt`]). Its reply must hold exactly one reasoning block and one digest
//! ([`reply`]); an unusable reply is answered with what is wrong, up to a bounded number of
//! attempts, after which the trajectory is rejected.
//!
//! The result is a swerve trajectory of the same steps in SWE-AGILE's reply structure: each
//! step's `response_text` is `<think>…</think><reasoning_digest>…</reasoning_digest>` and the
//! call (as the agent's tool-call format writes it), `reasoning`, `digest` and `call_text`
//! are set, `messages_sent` is the context the step has under the window (kept reasoning in
//! `reasoning_content`), and the source's token ids, usage and model time (which belonged
//! to the original replies) are dropped. The header records the window
//! (`extra.reasoning_window`) and the teacher's spend (`extra.backfill`). See
//! `docs/agile.md`.

pub mod prompt;
pub mod reply;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use swerve_core::ToolCall;
use swerve_core::trajectory::{Message, MessagesSent, Step, Timings, Trajectory, Usage};
use swerve_llm::{Model, ModelError, ModelRequest, ModelResponse};
use swerve_tools::formats::{ModelOutput, ToolFormat};

use crate::agile::structure::{self, DIGEST_CLOSE, Structured};
use crate::agile::{ContextPolicy, SendReasoning, Window};
use crate::episode::result_message;
use crate::reply::has_call;
use reply::{Annotation, REASONING_CLOSE};

/// A teacher model and how its work is written down.
pub struct Teacher<'a> {
    model: &'a dyn Model,
    format: &'a dyn ToolFormat,
    max_attempts: u32,
}

/// What the teacher's calls took (in JSON as recorded in headers and steps:
/// `teacher_calls`, `usage`, `cost`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    /// Model calls.
    #[serde(rename = "teacher_calls")]
    pub calls: u32,
    /// Their tokens.
    pub usage: Usage,
    /// Their cost, by the price table.
    pub cost: f64,
}

impl Spent {
    fn add(&mut self, response: &ModelResponse) {
        self.calls += 1;
        self.usage += response.usage;
        self.cost += response.cost;
    }

    /// Adds what `other` took.
    pub fn absorb(&mut self, other: Spent) {
        self.calls += other.calls;
        self.usage += other.usage;
        self.cost += other.cost;
    }

    fn to_json(self) -> Value {
        json!({"teacher_calls": self.calls, "usage": self.usage, "cost": self.cost})
    }
}

/// Why a trajectory was not backfilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// It cannot be: a step has no call, or the teacher's replies stayed unusable. Running
    /// again with the same settings would most likely fail the same way.
    Rejected(String),
    /// The teacher could not be called; running again may succeed.
    Failed(String),
}

/// One trajectory's backfill: the new trajectory or why there is none, and what it took.
#[derive(Debug, Clone)]
pub struct Backfilled {
    /// The trajectory with its reasoning backfilled, or why none was made.
    pub result: Result<Trajectory, Stop>,
    /// The teacher's calls, tokens and cost, spent whether or not it succeeded.
    pub spent: Spent,
}

/// What a step is backfilled from: the agent's original note and its action, as the
/// format writes it and reads it back.
struct Target {
    hint: String,
    action: String,
    call: ToolCall,
}

impl<'a> Teacher<'a> {
    /// A teacher `model` writing actions in `format` (a text format: the call must be part
    /// of the reply's text), asked at most `max_attempts` times per step.
    pub fn new(
        model: &'a dyn Model,
        format: &'a dyn ToolFormat,
        max_attempts: u32,
    ) -> Result<Self, String> {
        let probe = format.render_call("", &ToolCall::new("finish"), None);
        if !probe.tool_calls.is_empty() || !has_call(format, &probe.content) {
            return Err(format!(
                "backfilled replies write the call in their text, which the {} tool-call format \
                 does not; use xml, xml_last or hermes",
                format.name()
            ));
        }
        if max_attempts == 0 {
            return Err("the teacher must be asked at least once per step".into());
        }
        Ok(Self {
            model,
            format,
            max_attempts,
        })
    }

    /// Backfills `source` under `window` (the trajectory's N, recorded in its header).
    pub async fn backfill(&self, source: &Trajectory, window: Window) -> Backfilled {
        let mut spent = Spent::default();
        let result = self.backfill_steps(source, window, &mut spent).await;
        let result = result.map(|mut trajectory| {
            let extra = &mut trajectory.header.extra;
            match window {
                Window::Last(n) => extra.insert("reasoning_window".into(), Value::from(n)),
                // Not the source's window, if it had one.
                Window::All => extra.remove("reasoning_window"),
            };
            let mut record = spent.to_json();
            record["teacher"] = Value::from(self.model.name());
            extra.insert("backfill".into(), record);
            trajectory
        });
        Backfilled { result, spent }
    }

    async fn backfill_steps(
        &self,
        source: &Trajectory,
        window: Window,
        spent: &mut Spent,
    ) -> Result<Trajectory, Stop> {
        let targets = self.targets(source).map_err(Stop::Rejected)?;
        let shown = ContextPolicy {
            window,
            send: SendReasoning::Inline,
        };
        let recorded = ContextPolicy {
            window,
            send: SendReasoning::Field,
        };
        let prompt = &source.header.prompt;
        let mut output = Trajectory {
            header: source.header.clone(),
            steps: Vec::with_capacity(source.steps.len()),
            outcome: source.outcome.clone(),
        };
        let mut conversation = prompt.clone();
        let mut previous = prompt.clone();
        for (index, (step, target)) in source.steps.iter().zip(&targets).enumerate() {
            let context = shown.apply(&conversation);
            let mut step_spent = Spent::default();
            let annotation = self
                .annotate(&context, index, target, &source.header.id, &mut step_spent)
                .await;
            spent.absorb(step_spent);
            let annotation = annotation?;
            let sent = recorded.apply(&conversation);
            let base = index.checked_sub(1);
            let messages_sent = MessagesSent::delta(base, &previous, &sent);
            previous = sent;
            let mut assistant =
                Message::assistant(structure::content(&annotation.digest, &target.action));
            assistant.reasoning_content = Some(annotation.reasoning.clone());
            conversation.push(assistant);
            if let Some(observation) = &step.observation {
                conversation.push(result_message(self.format.render_result(observation, None)));
            }
            let mut record = step_spent.to_json();
            record["hint"] = Value::from(target.hint.as_str());
            output.steps.push(Step {
                messages_sent: Some(messages_sent),
                response_text: Structured {
                    reasoning: annotation.reasoning.clone(),
                    digest: annotation.digest.clone(),
                    action: target.action.clone(),
                }
                .render(),
                reasoning: Some(annotation.reasoning),
                digest: Some(annotation.digest),
                call_text: Some(target.action.clone()),
                tool_call: Some(target.call.clone()),
                format_error: None,
                usage: None,
                cost: None,
                tokens: None,
                timings: Timings {
                    model_seconds: None,
                    ..step.timings
                },
                extra: {
                    let mut extra = step.extra.clone();
                    extra.insert("backfill".into(), record);
                    extra
                },
                ..step.clone()
            });
        }
        Ok(output)
    }

    /// Each step's hint and action, or why the trajectory cannot be backfilled.
    fn targets(&self, source: &Trajectory) -> Result<Vec<Target>, String> {
        if source.steps.is_empty() {
            return Err("the trajectory has no steps".into());
        }
        source
            .steps
            .iter()
            .map(|step| {
                let index = step.index;
                let Some(call) = &step.tool_call else {
                    let why = step
                        .format_error
                        .as_deref()
                        .unwrap_or("no call was recorded");
                    return Err(format!("step {index} has no tool call ({why})"));
                };
                let action = self.format.render_call("", call, None).content;
                let reread = self.format.parse(&ModelOutput::from_text(action.as_str()));
                let Some(reread) = reread.ok().filter(|parsed| same_call(&parsed.call, call))
                else {
                    return Err(format!(
                        "step {index}: its call to {} does not read back when written in the {} \
                         format",
                        call.name,
                        self.format.name()
                    ));
                };
                Ok(Target {
                    hint: hint(step),
                    action: action.trim().to_owned(),
                    call: reread.call,
                })
            })
            .collect()
    }

    /// The teacher's reasoning and digest for step `index`, asking again (and saying what
    /// was wrong) while a reply is not usable.
    async fn annotate(
        &self,
        context: &[Message],
        index: usize,
        target: &Target,
        session: &str,
        spent: &mut Spent,
    ) -> Result<Annotation, Stop> {
        let mut messages = prompt::request(context, index, &target.hint, &target.action);
        let mut last = String::new();
        for _ in 0..self.max_attempts {
            let request = ModelRequest::chat(messages.clone()).with_session_id(session);
            let response = match self.model.complete(&request).await {
                Ok(response) => response,
                Err(error @ ModelError::ContextLength { .. }) => {
                    return Err(Stop::Rejected(format!(
                        "step {index}: the step's context does not fit the teacher: {error}"
                    )));
                }
                Err(error) => {
                    return Err(Stop::Failed(format!(
                        "step {index}: the teacher could not be called: {error}"
                    )));
                }
            };
            spent.add(&response);
            match reply::parse(&response.content, |segment| has_call(self.format, segment)) {
                Ok(annotation) => return Ok(annotation),
                Err(error) => {
                    last = match response.finish_reason.as_deref() {
                        Some("length") => format!("{error} (the reply was cut off at max_tokens)"),
                        _ => error.to_string(),
                    };
                    messages.push(Message::assistant(response.content));
                    messages.push(Message::user(prompt::retry(&error)));
                }
            }
        }
        Err(Stop::Rejected(format!(
            "step {index}: {} teacher replies in a row were not usable; the last: {last}",
            self.max_attempts
        )))
    }
}

/// Whether `read` is `call` as a text format reads it back: the same name and arguments,
/// each the same as text but for surrounding whitespace (text formats give every value as
/// a string, and XML strips it).
fn same_call(read: &ToolCall, call: &ToolCall) -> bool {
    let text = |call: &ToolCall, key: &str| call.text_arg(key).map(|value| value.trim().to_owned());
    read.name == call.name
        && read.arguments.len() == call.arguments.len()
        && call
            .arguments
            .keys()
            .all(|key| text(read, key) == text(call, key))
}

/// The agent's original note for `step`: its recorded reasoning, then what it wrote before
/// its call, without reasoning blocks (already counted) or the opening of a code fence
/// around the call.
fn hint(step: &Step) -> String {
    let text = step.response_text.replace("\r\n", "\n");
    let call = step
        .call_text
        .as_deref()
        .unwrap_or("")
        .replace("\r\n", "\n");
    let before_call = match text.rfind(call.trim()).filter(|_| !call.trim().is_empty()) {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    let visible = ["</think>", REASONING_CLOSE, DIGEST_CLOSE]
        .iter()
        .filter_map(|tag| before_call.rfind(tag).map(|at| at + tag.len()))
        .max()
        .map_or(before_call, |at| &before_call[at..])
        .trim_end();
    let note = match visible.rsplit_once('\n') {
        Some((rest, last)) if last.trim_start().starts_with("```") => rest,
        _ if visible.trim_start().starts_with("```") => "",
        _ => visible,
    };
    let parts = [
        step.reasoning.as_deref().unwrap_or(""),
        step.digest.as_deref().unwrap_or(""),
        note,
    ];
    parts
        .iter()
        .map(|part| part.trim())
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(response: &str, call_text: &str, reasoning: Option<&str>) -> Step {
        Step {
            call_text: Some(call_text.into()),
            reasoning: reasoning.map(str::to_owned),
            ..Step::new(0, response)
        }
    }

    #[test]
    fn a_call_reads_back_the_same_as_text() {
        let typed = ToolCall::new("file_editor")
            .arg("view_range", json!([1, 5]))
            .arg("path", "/a.py\n");
        let read = ToolCall::new("file_editor")
            .arg("view_range", "[1,5]")
            .arg("path", "/a.py");
        assert!(same_call(&read, &typed));
        assert!(!same_call(&read.clone().arg("extra", "x"), &typed));
        assert!(!same_call(
            &ToolCall::new("search"),
            &ToolCall::new("finish")
        ));
        let changed = ToolCall::new("file_editor")
            .arg("view_range", "[1,6]")
            .arg("path", "/a.py");
        assert!(!same_call(&changed, &typed));
    }

    #[test]
    fn the_hint_is_what_the_agent_wrote_besides_its_call() {
        let cases = [
            // R2E-Gym: the thought, then the XML call.
            (
                step(
                    "I will look.\n<function=x>\n</function>",
                    "<function=x>\n</function>",
                    None,
                ),
                "I will look.",
            ),
            // mini-swe-agent: the command inside a fence.
            (
                step(
                    "THOUGHT: list files.\r\n\r\n```bash\r\nls\r\n```",
                    "ls",
                    None,
                ),
                "THOUGHT: list files.",
            ),
            (step("```bash\nls\n```", "ls", None), ""),
            // Native calls: the call is not in the text.
            (
                step("Let me check.", "{\"command\": \"ls\"}", Some("deep")),
                "deep\n\nLet me check.",
            ),
            // Reasoning already recorded is not repeated from the text.
            (
                step(
                    "<think>deep</think>\nnote\n<function=x></function>",
                    "<function=x></function>",
                    Some("deep"),
                ),
                "deep\n\nnote",
            ),
        ];
        for (step, expected) in cases {
            assert_eq!(hint(&step), expected, "{:?}", step.response_text);
        }
    }
}
