//! Snapshot SFT samples (SWE-AGILE's trajectory snapshot training, FORMATS b.7 and g.7).
//!
//! Step t of a trajectory becomes one sample: its context C_t (the conversation before
//! turn t under the window: the last N earlier turns keep their reasoning inline, older
//! ones only their digest and action), and its target Y_t (turn t as the model wrote it,
//! reasoning inline, then digest and action). Only the target is trained. Under the run's
//! own window, each sample is exactly what the model was sent and what it answered.
//!
//! Two row shapes, one JSON object per line, each with `id` (`<trajectory id>/<step>`),
//! `trajectory_id`, `instance_id`, `step`, `window` and `is_last_step`:
//! - [`SampleFormat::Messages`]: `messages`, every message with `loss_weight` (LLaMA-Factory)
//!   and `train` (axolotl), 1.0/true on the last, the target (SkyRL's, OpenRLHF's and
//!   rLLM's "last assistant message"); `tools` as a JSON string when the run used native
//!   calls; `num_tokens` when a tokenizer is given.
//! - [`SampleFormat::Tokens`]: `input_ids`, `loss_mask` (SkyRL's pretokenized rows) and the
//!   same mask again as `completion_mask` (TRL's: for `input_ids` rows TRL ignores
//!   `loss_mask` and trains where `completion_mask` is 1), the sample rendered with the
//!   model's chat template; the mask is 1 exactly on the target as the template renders
//!   it, its header and end tokens included.

use std::io::Write;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use swerve_agent::agile::Window;
use swerve_core::trajectory::{Message, Trajectory};

use super::tokens::{Tokens, policy};

/// The row shape of the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SampleFormat {
    /// Chat messages with per-message loss weights.
    #[default]
    Messages,
    /// Token ids with a loss mask.
    Tokens,
}

/// One snapshot: the context and the target of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The step (assistant turn) from 0.
    pub step: usize,
    /// Whether it is the trajectory's last step.
    pub is_last_step: bool,
    /// The context, then the target.
    pub messages: Vec<Message>,
}

impl Sample {
    /// The context C_t.
    pub fn context(&self) -> &[Message] {
        &self.messages[..self.messages.len() - 1]
    }

    /// The target Y_t.
    pub fn target(&self) -> &Message {
        &self.messages[self.messages.len() - 1]
    }
}

/// The samples of `trajectory`, whose conversation is `conversation`, under `window`: one
/// per step, in order. The target is the turn as the model wrote it
/// ([`Step::reply_turn`](swerve_core::trajectory::Step::reply_turn)) with its reasoning
/// inline: what the model generated, given the context it was sent.
pub fn samples<'a>(
    trajectory: &'a Trajectory,
    conversation: &'a [Message],
    window: Window,
) -> impl Iterator<Item = Sample> + 'a {
    let steps = trajectory.steps.len();
    trajectory
        .steps
        .iter()
        .enumerate()
        .filter_map(move |(step, record)| {
            let mut messages = policy(window).before_turn(conversation, step)?;
            messages.extend(policy(Window::All).apply(&[record.reply_turn()]));
            Some(Sample {
                step,
                is_last_step: step + 1 == steps,
                messages,
            })
        })
}

/// A sample rendered with the chat template: its token ids and a loss mask that is 1 on
/// the target's tokens. Errors when the template renders the context differently once the
/// target follows it, or when the target's tokens change at the boundary.
pub fn tokenize(tokens: &Tokens, sample: &Sample) -> Result<(Vec<u32>, Vec<u8>)> {
    let context = tokens.render(sample.context(), false)?;
    let whole = tokens.render(&sample.messages, false)?;
    let Some(target) = whole.strip_prefix(context.as_str()) else {
        bail!(
            "the chat template renders the context differently when the target follows it, \
             so the target cannot be masked alone"
        );
    };
    let ids = tokens.encode_text(&whole)?;
    let target_ids = tokens.encode_text(target)?;
    if !ids.ends_with(&target_ids) {
        bail!(
            "the target's tokens change when the context precedes it (a token spans the boundary)"
        );
    }
    let context_len = ids.len() - target_ids.len();
    let mut mask = vec![0u8; context_len];
    mask.resize(ids.len(), 1);
    Ok((ids, mask))
}

/// One row of the output.
#[derive(Serialize)]
struct Row<'a> {
    id: String,
    trajectory_id: &'a str,
    instance_id: &'a str,
    step: usize,
    window: Option<usize>,
    is_last_step: bool,
    #[serde(flatten)]
    body: Body<'a>,
}

/// What a row holds besides its ids.
#[derive(Serialize)]
#[serde(untagged)]
enum Body<'a> {
    Tokens {
        input_ids: Vec<u32>,
        completion_mask: Vec<u8>,
        loss_mask: Vec<u8>,
    },
    Messages {
        messages: Vec<Weighted<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tools: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        num_tokens: Option<usize>,
    },
}

/// A message with its loss weight.
#[derive(Serialize)]
struct Weighted<'a> {
    #[serde(flatten)]
    message: &'a Message,
    loss_weight: f64,
    train: bool,
}

/// Writes the samples of one trajectory as JSON lines, leaving out steps whose weight in
/// `weights` is 0 (rejection fine-tuning: format errors); returns how many, and their
/// tokens (when a tokenizer is given).
pub fn write_trajectory(
    out: &mut dyn Write,
    trajectory: &Trajectory,
    window: Window,
    format: SampleFormat,
    tokens: Option<&Tokens>,
    weights: Option<&[f64]>,
) -> Result<(usize, usize)> {
    let conversation = trajectory.conversation()?;
    let header = &trajectory.header;
    let tools = tokens
        .and_then(Tokens::tools)
        .map(serde_json::to_string)
        .transpose()?;
    let (mut count, mut total) = (0, 0);
    for sample in samples(trajectory, &conversation, window) {
        if weights.is_some_and(|weights| weights.get(sample.step) == Some(&0.0)) {
            continue;
        }
        let step = || format!("step {}", sample.step);
        let body = match (format, tokens) {
            (SampleFormat::Tokens, Some(tokens)) => {
                let (input_ids, loss_mask) = tokenize(tokens, &sample).with_context(step)?;
                total += input_ids.len();
                Body::Tokens {
                    input_ids,
                    completion_mask: loss_mask.clone(),
                    loss_mask,
                }
            }
            (SampleFormat::Tokens, None) => bail!("token rows need a tokenizer (--tokenizer DIR)"),
            (SampleFormat::Messages, _) => {
                let num_tokens = tokens
                    .map(|tokens| tokens.count(&sample.messages, false))
                    .transpose()
                    .with_context(step)?;
                total += num_tokens.unwrap_or(0);
                Body::Messages {
                    messages: weighted(&sample.messages),
                    tools: tools.clone(),
                    num_tokens,
                }
            }
        };
        let row = Row {
            id: format!("{}/{}", header.id, sample.step),
            trajectory_id: &header.id,
            instance_id: &header.instance_id,
            step: sample.step,
            window: super::window::turns(window),
            is_last_step: sample.is_last_step,
            body,
        };
        serde_json::to_writer(&mut *out, &row)?;
        out.write_all(b"\n")?;
        count += 1;
    }
    Ok((count, total))
}

/// The messages, each with `loss_weight` and `train`: only the last is trained.
fn weighted(messages: &[Message]) -> Vec<Weighted<'_>> {
    let last = messages.len().saturating_sub(1);
    messages
        .iter()
        .enumerate()
        .map(|(index, message)| Weighted {
            message,
            loss_weight: if index == last { 1.0 } else { 0.0 },
            train: index == last,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use swerve_core::trajectory::turn::{content, inline};
    use swerve_core::trajectory::{Header, Step};

    fn turn(k: usize) -> Message {
        Message {
            reasoning_content: Some(format!("r{k}")),
            ..Message::assistant(content(&format!("d{k}"), &format!("a{k}")))
        }
    }

    /// Step `k` wrote turn `k` with its action as `A{k}`, which the conversation keeps as
    /// `a{k}` (a format writing the call back its own way).
    fn step(k: usize) -> Step {
        Step {
            reasoning: Some(format!("r{k}")),
            digest: Some(format!("d{k}")),
            ..Step::new(
                k,
                format!(
                    "<think>r{k}</think>{}",
                    content(&format!("d{k}"), &format!(" A{k} "))
                ),
            )
        }
    }

    #[test]
    fn each_turn_is_a_target_after_its_windowed_context() {
        let conversation = vec![
            Message::system("s"),
            Message::user("task"),
            turn(0),
            Message::user("o0"),
            turn(1),
            Message::user("o1"),
            turn(2),
        ];
        let mut trajectory = Trajectory::new(Header::new("t", "i"));
        trajectory.steps = (0..3).map(step).collect();
        let all: Vec<Sample> = samples(&trajectory, &conversation, Window::Last(1)).collect();
        assert_eq!(all.len(), 3);
        assert_eq!(
            all.iter().map(|s| s.is_last_step).collect::<Vec<_>>(),
            [false, false, true]
        );
        let last = &all[2];
        assert_eq!(last.context().len(), 6);
        assert_eq!(last.context()[2].text(), content("d0", "a0"));
        assert_eq!(last.context()[4].text(), inline("r1", &content("d1", "a1")));
        assert_eq!(last.target().text(), inline("r2", &content("d2", "A2")));
        assert_eq!(last.target().reasoning_content, None);
        assert_eq!(all[0].context(), &conversation[..2]);
        let rows = serde_json::to_value(weighted(&last.messages)).unwrap();
        let weights: Vec<f64> = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["loss_weight"].as_f64().unwrap())
            .collect();
        assert_eq!(weights, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(rows[6]["train"], true);
        assert_eq!(rows[6]["role"], "assistant");
    }

    #[test]
    fn steps_of_weight_zero_have_no_sample() {
        let mut trajectory = Trajectory::new(Header::new("t", "i"));
        trajectory.header.prompt = vec![Message::system("s"), Message::user("task")];
        trajectory.steps = (0..3).map(step).collect();
        for step in &mut trajectory.steps {
            step.observation = Some(format!("o{}", step.index));
        }
        let steps_written = |weights: Option<&[f64]>| {
            let mut out = Vec::new();
            let format = SampleFormat::Messages;
            write_trajectory(&mut out, &trajectory, Window::All, format, None, weights).unwrap();
            String::from_utf8(out)
                .unwrap()
                .lines()
                .map(|line| {
                    serde_json::from_str::<serde_json::Value>(line).unwrap()["step"].clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(steps_written(None), [0, 1, 2]);
        assert_eq!(steps_written(Some(&[1.0, 0.0, 1.0])), [0, 2]);
    }
}
