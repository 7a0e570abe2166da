//! [`MessagesSent`]: the exact messages of a step's request, in full or as a delta.
//!
//! A long run resends almost the same conversation at every step, so storing every request
//! in full grows with the square of the step count. A [`MessagesDelta`] instead says "the
//! request of step `base` (or the trajectory's prompt), cut to its first `keep` messages,
//! with the reasoning of some of them dropped, then these messages appended". That covers
//! append-only histories and sliding reasoning windows; any other edit (a condensed
//! observation) simply makes `keep` smaller. [`MessagesSent::delta`] computes one that
//! reconstructs `current` exactly, and [`super::Trajectory::messages_sent`] rebuilds it.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::message::Message;

/// The messages a step sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessagesSent {
    /// The whole list (a JSON array).
    Full(Vec<Message>),
    /// An edit of an earlier request (a JSON object).
    Delta(MessagesDelta),
}

/// An earlier request, cut, with some reasoning dropped, plus appended messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagesDelta {
    /// The step whose request this edits, which must come before this step; `None` (absent
    /// in JSON) means the trajectory's prompt messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<usize>,
    /// How many messages of the base request are kept, from its start.
    pub keep: usize,
    /// Positions (below `keep`) of kept messages whose `reasoning_content` is removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_reasoning: Vec<usize>,
    /// Messages added after the kept ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub append: Vec<Message>,
}

impl MessagesSent {
    /// The delta that turns `base_messages` (the request of step `base`, or the prompt when
    /// `base` is `None`) into `current`: the longest prefix that is equal, or equal but for
    /// dropped reasoning, is kept; the rest is appended.
    pub fn delta(base: Option<usize>, base_messages: &[Message], current: &[Message]) -> Self {
        let mut keep = 0;
        let mut drop_reasoning = Vec::new();
        for (old, new) in base_messages.iter().zip(current) {
            let dropped = old != new
                && old.reasoning_content.is_some()
                && new.reasoning_content.is_none()
                && equal_but_reasoning(old, new);
            if old != new && !dropped {
                break;
            }
            if dropped {
                drop_reasoning.push(keep);
            }
            keep += 1;
        }
        MessagesSent::Delta(MessagesDelta {
            base,
            keep,
            drop_reasoning,
            append: current[keep..].to_vec(),
        })
    }

    /// How many messages the request has, given the prompt's length and the lengths of the
    /// requests of the steps before step `index` (`None` where not recorded). Errors say
    /// why the reference cannot be followed.
    pub(super) fn request_len(
        &self,
        index: usize,
        prompt_len: usize,
        earlier: &[Option<usize>],
    ) -> Result<usize, String> {
        let delta = match self {
            MessagesSent::Full(messages) => return Ok(messages.len()),
            MessagesSent::Delta(delta) => delta,
        };
        let base_len = match delta.base {
            None => prompt_len,
            Some(base) if base >= index => {
                return Err(format!("base {base} is not a step before step {index}"));
            }
            Some(base) => earlier
                .get(base)
                .copied()
                .flatten()
                .ok_or_else(|| format!("base step {base} has no recorded messages"))?,
        };
        if delta.keep > base_len {
            return Err(format!(
                "keep {} is more than the {base_len} messages of the base request",
                delta.keep
            ));
        }
        if let Some(position) = delta.drop_reasoning.iter().find(|&&p| p >= delta.keep) {
            return Err(format!(
                "drop_reasoning position {position} is not below keep {}",
                delta.keep
            ));
        }
        Ok(delta.keep + delta.append.len())
    }
}

impl MessagesDelta {
    /// Applies the delta to the base request; `None` if it does not fit.
    pub(super) fn apply(&self, mut messages: Vec<Message>) -> Option<Vec<Message>> {
        if self.keep > messages.len() {
            return None;
        }
        messages.truncate(self.keep);
        for &position in &self.drop_reasoning {
            messages.get_mut(position)?.reasoning_content = None;
        }
        messages.extend(self.append.iter().cloned());
        Some(messages)
    }
}

/// Reads a JSON array as [`MessagesSent::Full`] and an object as [`MessagesSent::Delta`].
impl<'de> Deserialize<'de> for MessagesSent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            list @ Value::Array(_) => serde_json::from_value(list)
                .map(MessagesSent::Full)
                .map_err(D::Error::custom),
            object @ Value::Object(_) => serde_json::from_value(object)
                .map(MessagesSent::Delta)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "expected a list of messages or a delta object {base, keep, drop_reasoning, append}",
            )),
        }
    }
}

/// True when the messages are equal in everything but `reasoning_content`.
fn equal_but_reasoning(a: &Message, b: &Message) -> bool {
    a.role == b.role
        && a.content == b.content
        && a.tool_calls == b.tool_calls
        && a.tool_call_id == b.tool_call_id
        && a.name == b.name
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trajectory::message::Role;

    fn thinking(text: &str, reasoning: &str) -> Message {
        let mut message = Message::new(Role::Assistant, text);
        message.reasoning_content = Some(reasoning.into());
        message
    }

    #[test]
    fn delta_keeps_prefix_drops_reasoning_and_reconstructs() {
        let old = vec![
            Message::new(Role::System, "s"),
            thinking("a1", "r1"),
            Message::new(Role::User, "o1"),
        ];
        let mut new = old.clone();
        new[1].reasoning_content = None;
        new.push(thinking("a2", "r2"));
        new.push(Message::new(Role::User, "o2"));
        let MessagesSent::Delta(delta) = MessagesSent::delta(Some(0), &old, &new) else {
            panic!("expected a delta");
        };
        assert_eq!((delta.keep, delta.drop_reasoning.as_slice()), (3, &[1][..]));
        assert_eq!(delta.append.len(), 2);
        assert_eq!(delta.apply(old.clone()), Some(new));
    }

    #[test]
    fn delta_rebuilds_a_turn_whose_inline_reasoning_was_dropped() {
        // Reasoning sent inline in the content (SWE-AGILE) is an edit of the content: the
        // delta keeps the messages before it and appends the rest.
        let old = vec![
            Message::new(Role::System, "s"),
            Message::new(Role::Assistant, "<think>\nr1\n</think>\n\na1"),
            Message::new(Role::Tool, "o1"),
        ];
        let new = vec![
            old[0].clone(),
            Message::new(Role::Assistant, "a1"),
            old[2].clone(),
            Message::new(Role::Assistant, "<think>\nr2\n</think>\n\na2"),
            Message::new(Role::Tool, "o2"),
        ];
        let MessagesSent::Delta(delta) = MessagesSent::delta(Some(0), &old, &new) else {
            panic!("expected a delta");
        };
        assert_eq!((delta.keep, delta.append.len()), (1, 4));
        assert_eq!(delta.apply(old), Some(new));
    }

    #[test]
    fn request_len_rejects_bad_references() {
        let delta = |base, keep, drop_reasoning: Vec<usize>| {
            MessagesSent::Delta(MessagesDelta {
                base,
                keep,
                drop_reasoning,
                append: vec![Message::new(Role::User, "x")],
            })
        };
        assert_eq!(delta(None, 2, vec![1]).request_len(0, 2, &[]), Ok(3));
        assert_eq!(
            delta(Some(0), 3, vec![]).request_len(1, 2, &[Some(3)]),
            Ok(4)
        );
        assert!(
            delta(Some(1), 0, vec![])
                .request_len(1, 2, &[Some(3)])
                .is_err()
        );
        assert!(
            delta(Some(0), 0, vec![])
                .request_len(1, 2, &[None])
                .is_err()
        );
        assert!(delta(None, 3, vec![]).request_len(0, 2, &[]).is_err());
        assert!(delta(None, 1, vec![1]).request_len(0, 2, &[]).is_err());
    }

    #[test]
    fn reads_arrays_and_objects_only() {
        let full: MessagesSent =
            serde_json::from_str(r#"[{"role":"user","content":"x"}]"#).unwrap();
        assert!(matches!(full, MessagesSent::Full(ref m) if m.len() == 1));
        let delta: MessagesSent = serde_json::from_str(r#"{"keep":0}"#).unwrap();
        assert!(matches!(delta, MessagesSent::Delta(ref d) if d.base.is_none()));
        assert!(serde_json::from_str::<MessagesSent>("3").is_err());
        assert!(serde_json::from_str::<MessagesSent>(r#"{"keep":0,"bogus":1}"#).is_err());
    }
}
