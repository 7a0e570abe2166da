//! [`ContextPolicy`]: which earlier reasoning the model is sent, and how.
//!
//! The conversation keeps each assistant turn's reasoning apart from its content (in
//! `reasoning_content`). Before each model call the policy builds the messages actually
//! sent: the last N assistant turns keep their reasoning ([`Window`]), sent back either in
//! `reasoning_content` or inline in front of the content as SWE-AGILE renders it
//! ([`SendReasoning`]); older turns are sent without it. Digests, calls and observations
//! are never touched.
//!
//! The window counts assistant turns, not message positions: `tool` messages and extra
//! user messages do not move it. (SWE-AGILE's rule, `i >= len(messages) - 2 * N`, assumes
//! strictly alternating turns and keeps too few when they do not; FORMATS b.2.)

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::{Content, Message, Role};

use super::structure::inline;

/// Which earlier assistant turns keep their reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Every turn (interleaved thinking).
    All,
    /// The last N turns; `Last(0)` keeps none (current-step thinking). N is SWE-AGILE's
    /// `last_n_reasoning`; with the turn being generated, N + 1 steps see reasoning.
    Last(usize),
}

/// How the reasoning of kept turns is sent back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendReasoning {
    /// In the message's `reasoning_content`, as the conversation holds it (a chat template
    /// decides what to do with it).
    #[default]
    Field,
    /// In the content: `<think>\n{reasoning}\n</think>\n\n{content}`, with no
    /// `reasoning_content` (SWE-AGILE's rendering of kept turns).
    Inline,
}

/// What the model is sent of a conversation's reasoning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextPolicy {
    /// Which turns keep their reasoning.
    pub window: Window,
    /// How kept reasoning is sent.
    pub send: SendReasoning,
}

impl Default for ContextPolicy {
    /// Every turn's reasoning, in `reasoning_content`: the conversation as it is.
    fn default() -> Self {
        Self {
            window: Window::All,
            send: SendReasoning::Field,
        }
    }
}

impl ContextPolicy {
    /// The messages to send for `conversation`, whose assistant turns hold their reasoning
    /// in `reasoning_content`.
    pub fn apply(&self, conversation: &[Message]) -> Vec<Message> {
        let turns = conversation
            .iter()
            .filter(|message| message.role == Role::Assistant)
            .count();
        let first_kept = match self.window {
            Window::All => 0,
            Window::Last(n) => turns.saturating_sub(n),
        };
        let mut turn = 0;
        conversation
            .iter()
            .map(|message| {
                if message.role != Role::Assistant {
                    return message.clone();
                }
                turn += 1;
                let Some(reasoning) = &message.reasoning_content else {
                    return message.clone();
                };
                let mut sent = message.clone();
                if turn > first_kept {
                    if self.send == SendReasoning::Inline {
                        sent.content = Some(Content::Text(inline(reasoning, &message.text())));
                        sent.reasoning_content = None;
                    }
                } else {
                    sent.reasoning_content = None;
                }
                sent
            })
            .collect()
    }

    /// What assistant turn `turn` (from 0) of `conversation` is sent under this policy: the
    /// messages before it, with the policy applied. `None` when the conversation has no
    /// such turn. An exporter can rebuild any step's context with any window this way.
    pub fn before_turn(&self, conversation: &[Message], turn: usize) -> Option<Vec<Message>> {
        let at = conversation
            .iter()
            .enumerate()
            .filter(|(_, message)| message.role == Role::Assistant)
            .nth(turn)?
            .0;
        Some(self.apply(&conversation[..at]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thinking(content: &str, reasoning: &str) -> Message {
        Message {
            reasoning_content: Some(reasoning.into()),
            ..Message::assistant(content)
        }
    }

    /// System, task, then three turns: a native call answered by a `tool` message and a
    /// user nudge; a text turn answered by a user message; a turn with no reasoning.
    fn conversation() -> Vec<Message> {
        vec![
            Message::system("s"),
            Message::user("task"),
            thinking("a0", "r0"),
            Message::tool("call_0", "o0"),
            Message::user("Steps Remaining: 3"),
            thinking("a1", "r1"),
            Message::user("o1"),
            Message::assistant("a2"),
            Message::user("o2"),
            thinking("a3", "r3"),
            Message::tool("call_3", "o3"),
        ]
    }

    /// The reasoning each assistant turn is sent with: `Some` in the field, `"inline"`
    /// markers, or nothing.
    fn sent_reasoning(messages: &[Message]) -> Vec<Option<String>> {
        messages
            .iter()
            .filter(|message| message.role == Role::Assistant)
            .map(|message| {
                let text = message.text();
                match (&message.reasoning_content, text.strip_prefix("<think>\n")) {
                    (Some(field), None) => Some(field.clone()),
                    (None, Some(rest)) => {
                        Some(format!("inline {}", rest.split('\n').next().unwrap()))
                    }
                    (None, None) => None,
                    (Some(_), Some(_)) => panic!("reasoning sent twice: {message:?}"),
                }
            })
            .collect()
    }

    fn policy(window: Window, send: SendReasoning) -> ContextPolicy {
        ContextPolicy { window, send }
    }

    #[test]
    fn windows_count_assistant_turns_not_positions() {
        let field =
            |window| sent_reasoning(&policy(window, SendReasoning::Field).apply(&conversation()));
        let some = |r: &str| Some(r.to_owned());
        assert_eq!(
            field(Window::All),
            [some("r0"), some("r1"), None, some("r3")]
        );
        assert_eq!(field(Window::Last(0)), [None, None, None, None]);
        assert_eq!(field(Window::Last(1)), [None, None, None, some("r3")]);
        // The turn without reasoning counts as a turn.
        assert_eq!(field(Window::Last(2)), [None, None, None, some("r3")]);
        assert_eq!(field(Window::Last(3)), [None, some("r1"), None, some("r3")]);
        assert_eq!(field(Window::Last(99)), field(Window::All));
        let inline =
            sent_reasoning(&policy(Window::Last(3), SendReasoning::Inline).apply(&conversation()));
        assert_eq!(inline, [None, some("inline r1"), None, some("inline r3")]);
    }

    #[test]
    fn tool_messages_and_extra_user_turns_do_not_shift_the_window() {
        // SWE-AGILE's positional rule with N = 2 keeps messages from index 7 - 4 = 3 on,
        // dropping r0 though a0 is one of the last two turns.
        let conversation = [
            Message::system("s"),
            Message::user("task"),
            thinking("a0", "r0"),
            Message::tool("call_0", "o0"),
            Message::user("Steps Remaining: 3"),
            thinking("a1", "r1"),
            Message::tool("call_1", "o1"),
        ];
        let sent = policy(Window::Last(2), SendReasoning::Field).apply(&conversation);
        let kept = sent_reasoning(&sent);
        assert_eq!(kept, [Some("r0".to_owned()), Some("r1".to_owned())]);
    }

    #[test]
    fn only_reasoning_changes() {
        let original = conversation();
        let sent = policy(Window::Last(1), SendReasoning::Inline).apply(&original);
        assert_eq!(sent.len(), original.len());
        for (before, after) in original.iter().zip(&sent) {
            if before.role != Role::Assistant {
                assert_eq!(before, after);
            }
            assert_eq!(
                (before.role, &before.tool_calls),
                (after.role, &after.tool_calls)
            );
        }
        assert_eq!(sent[9].text(), "<think>\nr3\n</think>\n\na3");
        assert_eq!(
            (sent[2].text(), &sent[2].reasoning_content),
            ("a0".into(), &None)
        );
        // The default policy sends the conversation as it is.
        assert_eq!(ContextPolicy::default().apply(&original), original);
    }

    #[test]
    fn an_inline_turn_without_content_keeps_its_reasoning() {
        let mut call_only = thinking("", "r");
        call_only.content = None;
        let sent = policy(Window::All, SendReasoning::Inline).apply(&[call_only]);
        assert_eq!(sent[0].text(), "<think>\nr\n</think>\n\n");
    }

    #[test]
    fn before_turn_is_the_context_a_turn_was_given() {
        let conversation = conversation();
        let last_one = policy(Window::Last(1), SendReasoning::Field);
        let context = last_one.before_turn(&conversation, 1).unwrap();
        assert_eq!(context.len(), 5);
        assert_eq!(sent_reasoning(&context), [Some("r0".to_owned())]);
        assert_eq!(last_one.before_turn(&conversation, 0).unwrap().len(), 2);
        assert_eq!(last_one.before_turn(&conversation, 4), None);
    }
}
