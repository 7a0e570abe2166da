//! [`Trajectory::conversation`]: the whole conversation of a run with every assistant
//! turn's reasoning, whatever reasoning window the run sent: the input of token
//! accounting, compression rates and snapshot exports.
//!
//! A recorded request holds every earlier turn exactly as the model was sent it, but with
//! the reasoning the run's window dropped, or with kept reasoning written inline in the
//! content. The last recorded request is taken as it is, and each of its assistant turns
//! gets its step's `reasoning` back in `reasoning_content`, with inline reasoning cut from
//! the content. Turns that no recorded request holds (always the last one; every turn of
//! imports that record no requests) are the turns their steps' replies wrote (see
//! [`Step::reply_turn`]), each followed by its observation as a user message, except the
//! last: no request ever carried the last observation.

use serde_json::Value;

use super::Trajectory;
use super::error::{TrajectoryError, TrajectoryErrorKind};
use super::message::{ChatToolCall, Content, Message, Role};
use super::step::Step;
use super::turn::{DIGEST_CLOSE, REASONING_TAGS, content, strip_inline};

impl Trajectory {
    /// The conversation: the last recorded request (or the header's prompt), every
    /// assistant turn with its step's reasoning in `reasoning_content` and its digest and
    /// action as content, then the turns of the steps after that request. Assistant turn
    /// `k` is step `k`.
    ///
    /// Errors when a recorded request does not hold one assistant turn per earlier step.
    pub fn conversation(&self) -> Result<Vec<Message>, TrajectoryError> {
        let recorded = (0..self.steps.len())
            .rev()
            .find_map(|step| Some((step, self.messages_sent(step)?)));
        let (covered, mut messages) = recorded.unwrap_or((0, self.header.prompt.clone()));
        let mut turn = 0;
        for message in messages.iter_mut().filter(|m| m.role == Role::Assistant) {
            if let Some(step) = self.steps.get(turn).filter(|_| turn < covered) {
                restore_reasoning(message, step);
            }
            turn += 1;
        }
        if turn != covered {
            return Err(TrajectoryError::in_field(
                "messages_sent",
                TrajectoryErrorKind::Conversation(format!(
                    "the request of step {covered} holds {turn} assistant turns, but {covered} \
                     steps come before it (one turn each)"
                )),
            ));
        }
        let last = self.steps.len().saturating_sub(1);
        for step in &self.steps[covered..] {
            messages.push(step.reply_turn());
            if let Some(observation) = step.observation.as_ref().filter(|_| step.index < last) {
                messages.push(Message::user(observation.clone()));
            }
        }
        Ok(messages)
    }
}

/// Gives a recorded turn its step's reasoning back, cutting reasoning sent inline.
fn restore_reasoning(message: &mut Message, step: &Step) {
    let Some(reasoning) = &step.reasoning else {
        return;
    };
    if message.reasoning_content.is_none()
        && let Some(Content::Text(text)) = &message.content
        && let Some(rest) = strip_inline(reasoning, text)
    {
        message.content = Some(Content::Text(rest.to_owned()));
    }
    message.reasoning_content = Some(reasoning.clone());
}

impl Step {
    /// The assistant turn as the model wrote it: the step's `reasoning` in
    /// `reasoning_content`; as content, the reply text after the reasoning block (when the
    /// reasoning is written in the text, ending right before `</think>` or `</reasoning>`),
    /// with a digest written as the digest block followed by the text after the digest's
    /// closing tag; and a native call (a `call_text` that is the `{"name", "arguments"}`
    /// JSON of the step's call and not part of the text) as the turn's one tool call, whose
    /// id is not recorded and is written `call_<index>`.
    ///
    /// The conversation the agent keeps may differ in the action: it holds the call as the
    /// tool-call format writes it back (the same text when the model wrote the call in the
    /// format's own layout). This is what the model generated, given what it was sent.
    pub fn reply_turn(&self) -> Message {
        let text = self.response_text.as_str();
        let after_reasoning = self
            .reasoning
            .as_deref()
            .and_then(|reasoning| reasoning_end(text, reasoning))
            .map_or(text, |end| &text[end..]);
        let kept = match &self.digest {
            Some(digest) => content(digest, after_digest(after_reasoning, digest).unwrap_or("")),
            None => after_reasoning.trim().to_owned(),
        };
        let mut message = Message {
            reasoning_content: self.reasoning.clone(),
            ..Message::assistant(kept)
        };
        if let Some(call) = native_call(self) {
            message.tool_calls.push(call);
        }
        message
    }
}

/// Where the reasoning block holding `reasoning` ends in `text`: right after the first
/// closing tag whose text before it ends with the reasoning.
fn reasoning_end(text: &str, reasoning: &str) -> Option<usize> {
    let reasoning = reasoning.trim();
    let mut ends: Vec<usize> = REASONING_TAGS
        .iter()
        .flat_map(|(_, close)| {
            text.match_indices(close)
                .filter(|(at, _)| text[..*at].trim_end().ends_with(reasoning))
                .map(|(at, tag)| at + tag.len())
        })
        .collect();
    ends.sort_unstable();
    ends.first().copied()
}

/// The text after the closing tag of the digest block holding `digest`, trimmed.
fn after_digest<'a>(text: &'a str, digest: &str) -> Option<&'a str> {
    text.match_indices(DIGEST_CLOSE)
        .find(|(at, _)| text[..*at].trim_end().ends_with(digest.trim()))
        .map(|(at, tag)| text[at + tag.len()..].trim())
}

/// The step's call as a native tool call, when it was one.
fn native_call(step: &Step) -> Option<ChatToolCall> {
    let (call, call_text) = (step.tool_call.as_ref()?, step.call_text.as_deref()?);
    if step.response_text.contains(call_text) {
        return None;
    }
    let written: Value = serde_json::from_str(call_text).ok()?;
    (written.get("name")?.as_str()? == call.name).then(|| {
        let arguments = Value::Object(call.arguments.clone()).to_string();
        ChatToolCall::new(format!("call_{}", step.index), &call.name, arguments)
    })
}

#[cfg(test)]
mod tests {
    use super::super::turn::inline;
    use super::super::{Header, MessagesSent};
    use super::*;
    use crate::ToolCall;

    fn step(index: usize, reasoning: &str, digest: &str, action: &str) -> Step {
        Step {
            reasoning: Some(reasoning.into()),
            digest: Some(digest.into()),
            observation: Some(format!("o{index}")),
            ..Step::new(
                index,
                format!(
                    "<think>\n{reasoning}\n</think>\n{}",
                    content(digest, action)
                ),
            )
        }
    }

    fn trajectory(steps: Vec<Step>) -> Trajectory {
        Trajectory {
            header: Header {
                prompt: vec![Message::system("s"), Message::user("task")],
                ..Header::new("t", "i")
            },
            steps,
            outcome: None,
        }
    }

    fn turn(reasoning: &str, text: &str) -> Message {
        Message {
            reasoning_content: Some(reasoning.into()),
            ..Message::assistant(text)
        }
    }

    #[test]
    fn restores_reasoning_dropped_or_inlined_and_rebuilds_the_last_turn() {
        let mut steps = vec![
            step(0, "r0", "d0", "A0"),
            step(1, "r1", "d1", "A1"),
            step(2, "r2", "d2", "A2"),
        ];
        // Step 2 was sent turn 0 without reasoning and turn 1 with it inline.
        steps[2].messages_sent = Some(MessagesSent::Full(vec![
            Message::system("s"),
            Message::user("task"),
            Message::assistant(content("d0", "A0")),
            Message::user("o0"),
            Message::assistant(inline("r1", &content("d1", "A1"))),
            Message::user("o1"),
        ]));
        let conversation = trajectory(steps).conversation().unwrap();
        assert_eq!(
            conversation,
            [
                Message::system("s"),
                Message::user("task"),
                turn("r0", &content("d0", "A0")),
                Message::user("o0"),
                turn("r1", &content("d1", "A1")),
                Message::user("o1"),
                turn("r2", &content("d2", "A2")),
            ]
        );
    }

    #[test]
    fn without_recorded_requests_every_turn_is_rebuilt() {
        let mut steps = vec![step(0, "r0", "d0", "A0"), step(1, "", "d1", "")];
        // Server-side reasoning that happens to appear in the text is not cut.
        steps.push(Step {
            reasoning: Some("x".into()),
            observation: Some("o2".into()),
            ..Step::new(2, "fix x")
        });
        // A structure error: the text after the reasoning is kept.
        steps.push(Step {
            reasoning: Some("plan".into()),
            ..Step::new(3, "<reasoning>plan</reasoning> then <function=x>")
        });
        let conversation = trajectory(steps).conversation().unwrap();
        let texts: Vec<String> = conversation.iter().map(Message::text).collect();
        assert_eq!(
            texts,
            [
                "s",
                "task",
                &content("d0", "A0"),
                "o0",
                &content("d1", ""),
                "o1",
                "fix x",
                "o2",
                "then <function=x>",
            ]
        );
        assert_eq!(conversation[6].reasoning_content.as_deref(), Some("x"));
    }

    #[test]
    fn a_native_call_becomes_the_turn_s_tool_call() {
        let mut arguments = serde_json::Map::new();
        arguments.insert("command".into(), "submit".into());
        let call = ToolCall {
            name: "finish".into(),
            arguments,
        };
        let native = Step {
            reasoning: Some("r".into()),
            digest: Some("d".into()),
            call_text: Some(
                serde_json::json!({"name": "finish", "arguments": call.arguments}).to_string(),
            ),
            tool_call: Some(call),
            ..Step::new(0, content("d", ""))
        };
        let conversation = trajectory(vec![native]).conversation().unwrap();
        let last = conversation.last().unwrap();
        assert_eq!(last.text(), content("d", ""));
        assert_eq!(
            last.tool_calls,
            [ChatToolCall::new(
                "call_0",
                "finish",
                r#"{"command":"submit"}"#
            )]
        );
    }

    #[test]
    fn a_request_missing_turns_is_an_error() {
        let mut steps = vec![step(0, "r0", "d0", "A0"), step(1, "r1", "d1", "A1")];
        steps[1].messages_sent = Some(MessagesSent::Full(vec![Message::user("task")]));
        let error = trajectory(steps).conversation().unwrap_err().to_string();
        assert!(
            error.contains("the request of step 1 holds 0 assistant turns"),
            "{error}"
        );
    }
}
