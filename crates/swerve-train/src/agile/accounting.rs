//! Exact token accounting of a trajectory under a reasoning window, and SWE-AGILE's
//! compression rate both ways it is defined (FORMATS b.4, paper Eq. 3).
//!
//! Per step: the context the model was actually sent (the step's recorded request rendered
//! with the chat template), the context under the window and with every turn's reasoning
//! kept (the conversation through the agent's policy, reasoning inline), and the lengths of
//! the step's reasoning, digest and action as the model wrote them
//! ([`Step::reply_turn`](swerve_core::trajectory::Step::reply_turn)) and of its
//! observation, as plain text.
//!
//! - **code** (`compression_rate`, as SWE-AGILE's engine computes it once per trajectory):
//!   `1 - tokens(final conversation, window N) / tokens(final conversation, all reasoning)`,
//!   both rendered with the template (no generation prompt), the prompt included.
//! - **paper** (`paper_compression_rate`, Eq. 3): `1 - L_hybrid / L_full` with
//!   `L_full = Σ_t |τ_t|`, where the tuple of step t is its reasoning, digest, action and
//!   the observation it got back, each tokenized as plain text; `L_hybrid` is the same sum
//!   without the reasoning of the steps outside the final window (all but the last N).
//!   The prompt is in no tuple.

use anyhow::Result;
use serde::Serialize;
use swerve_agent::agile::Window;
use swerve_core::trajectory::turn::action;
use swerve_core::trajectory::{Message, Trajectory};

use super::tokens::{Tokens, policy};

/// The tokens of one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepTokens {
    /// The step's index.
    pub step: usize,
    /// Its recorded request, rendered (generation prompt on); `None` when not recorded.
    pub sent: Option<usize>,
    /// Its context under the window.
    pub window: usize,
    /// Its context with every earlier turn's reasoning kept.
    pub full: usize,
    /// The reasoning, as plain text.
    pub reasoning: usize,
    /// The digest, as plain text.
    pub digest: usize,
    /// The action as written: the turn's content after the digest block, and any native
    /// call.
    pub action: usize,
    /// The observation the step got back.
    pub observation: usize,
}

/// The tokens of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrajectoryTokens {
    /// The trajectory id.
    pub id: String,
    /// The task instance.
    pub instance_id: String,
    /// The window N (`None`, written `null`: every turn keeps its reasoning).
    pub window: Option<usize>,
    /// Per step.
    pub steps: Vec<StepTokens>,
    /// The final conversation under the window.
    pub final_window: usize,
    /// The final conversation with all reasoning.
    pub final_full: usize,
    /// `1 - final_window / final_full` (SWE-AGILE's code).
    pub compression_rate: f64,
    /// `Σ_t |τ_t|` with only the window's reasoning (the paper's `L_hybrid`).
    pub paper_hybrid: usize,
    /// `Σ_t |τ_t|` (the paper's `L_full`).
    pub paper_full: usize,
    /// `1 - paper_hybrid / paper_full` (the paper's Eq. 3).
    pub paper_compression_rate: f64,
    /// True when the chat template renders the final conversation the same with every
    /// turn's reasoning as with the last turn's only, although earlier turns have some
    /// (Qwen3's drops reasoning before the last user message): every window looks alike.
    pub template_drops_reasoning: bool,
}

/// Accounts `trajectory`, whose conversation is `conversation`, under `window`.
pub fn account(
    tokens: &Tokens,
    trajectory: &Trajectory,
    conversation: &[Message],
    window: Window,
) -> Result<TrajectoryTokens> {
    let mut steps = Vec::with_capacity(trajectory.steps.len());
    for (index, step) in trajectory.steps.iter().enumerate() {
        let sent = trajectory
            .messages_sent(index)
            .map(|messages| tokens.count(&messages, true))
            .transpose()?;
        let text = |text: Option<&String>| text.map_or(Ok(0), |text| tokens.text(text));
        steps.push(StepTokens {
            step: index,
            sent,
            window: tokens.context(conversation, window, index)?,
            full: tokens.context(conversation, Window::All, index)?,
            reasoning: text(step.reasoning.as_ref())?,
            digest: text(step.digest.as_ref())?,
            action: tokens.text(&action_text(&step.reply_turn(), step.digest.as_deref()))?,
            observation: text(step.observation.as_ref())?,
        });
    }
    let final_under = |window| tokens.count(&policy(window).apply(conversation), false);
    let (final_window, final_full) = (final_under(window)?, final_under(Window::All)?);
    let earlier_reasoning = trajectory
        .steps
        .iter()
        .rev()
        .skip(1)
        .any(|step| step.reasoning.as_deref().is_some_and(|r| !r.is_empty()));
    let template_drops_reasoning = earlier_reasoning && final_under(Window::Last(1))? == final_full;
    let (paper_hybrid, paper_full) = paper_sums(&steps, window);
    Ok(TrajectoryTokens {
        id: trajectory.header.id.clone(),
        instance_id: trajectory.header.instance_id.clone(),
        window: super::window::turns(window),
        steps,
        final_window,
        final_full,
        compression_rate: rate(final_window, final_full),
        paper_hybrid,
        paper_full,
        paper_compression_rate: rate(paper_hybrid, paper_full),
        template_drops_reasoning,
    })
}

/// The compression rates of `trajectory` under `window` without the per-step contexts: the
/// code's (final conversation under the window vs. with all reasoning), and with `paper`
/// the paper's Eq. 3 from the per-step tuples.
pub fn rates(
    tokens: &Tokens,
    trajectory: &Trajectory,
    conversation: &[Message],
    window: Window,
    paper: bool,
) -> Result<(f64, Option<f64>)> {
    let final_under = |window| tokens.count(&policy(window).apply(conversation), false);
    let code = rate(final_under(window)?, final_under(Window::All)?);
    if !paper {
        return Ok((code, None));
    }
    let mut steps = Vec::with_capacity(trajectory.steps.len());
    for (index, step) in trajectory.steps.iter().enumerate() {
        let text = |text: Option<&String>| text.map_or(Ok(0), |text| tokens.text(text));
        steps.push(StepTokens {
            step: index,
            sent: None,
            window: 0,
            full: 0,
            reasoning: text(step.reasoning.as_ref())?,
            digest: text(step.digest.as_ref())?,
            action: tokens.text(&action_text(&step.reply_turn(), step.digest.as_deref()))?,
            observation: text(step.observation.as_ref())?,
        });
    }
    let (hybrid, full) = paper_sums(&steps, window);
    Ok((code, Some(rate(hybrid, full))))
}

/// `1 - part / whole`; 0 for an empty whole.
fn rate(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        1.0 - part as f64 / whole as f64
    }
}

/// The paper's `(L_hybrid, L_full)`: the tuples' sum without, and with, the reasoning of
/// steps outside the final window.
fn paper_sums(steps: &[StepTokens], window: Window) -> (usize, usize) {
    let first_kept = match window {
        Window::All => 0,
        Window::Last(n) => steps.len().saturating_sub(n),
    };
    steps.iter().fold((0, 0), |(hybrid, full), step| {
        let rest = step.digest + step.action + step.observation;
        let kept = if step.step >= first_kept {
            step.reasoning
        } else {
            0
        };
        (hybrid + rest + kept, full + rest + step.reasoning)
    })
}

/// The action of an assistant turn: its content after the digest block (all of it without
/// a digest), then each native call as `{"name": …, "arguments": …}` on a line of its own.
fn action_text(turn: &Message, digest: Option<&str>) -> String {
    let content = turn.text();
    let mut text = digest
        .and_then(|digest| action(digest, &content))
        .unwrap_or(&content)
        .to_owned();
    for call in &turn.tool_calls {
        text.push('\n');
        text.push_str(&serde_json::to_string(&call.function).unwrap_or_default());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use swerve_core::trajectory::ChatToolCall;
    use swerve_core::trajectory::turn::content;

    fn step(step: usize, reasoning: usize) -> StepTokens {
        StepTokens {
            step,
            sent: None,
            window: 0,
            full: 0,
            reasoning,
            digest: 2,
            action: 3,
            observation: 5,
        }
    }

    #[test]
    fn the_paper_sums_drop_reasoning_outside_the_final_window() {
        let steps = [step(0, 100), step(1, 40), step(2, 60)];
        // Every tuple has 10 tokens besides its reasoning.
        assert_eq!(paper_sums(&steps, Window::All), (230, 230));
        assert_eq!(paper_sums(&steps, Window::Last(1)), (90, 230));
        assert_eq!(paper_sums(&steps, Window::Last(2)), (130, 230));
        assert_eq!(paper_sums(&steps, Window::Last(0)), (30, 230));
        assert!((rate(90, 230) - 140.0 / 230.0).abs() < 1e-12);
        assert_eq!(rate(0, 0), 0.0);
    }

    #[test]
    fn the_action_is_the_content_after_the_digest_and_the_native_call() {
        let turn = Message::assistant(content("d", "<function=finish>"));
        assert_eq!(action_text(&turn, Some("d")), "<function=finish>");
        assert_eq!(action_text(&turn, None), content("d", "<function=finish>"));
        let native = Message {
            tool_calls: vec![ChatToolCall::new("c", "finish", "{}")],
            ..Message::assistant(content("d", ""))
        };
        assert_eq!(
            action_text(&native, Some("d")),
            "\n{\"name\":\"finish\",\"arguments\":\"{}\"}"
        );
    }
}
