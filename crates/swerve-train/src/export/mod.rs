//! Trainer records from trajectories (FORMATS.md §g), one module per format:
//! [`skyrl`] (step-wise generator output), [`verl`] (agent-loop output), [`trl`]
//! (prompt/completion), [`messages`] (whole conversations with per-message weights) and
//! [`llamafactory`] (v1 content blocks); [`exporter`] runs one export over many
//! trajectories for every front end.
//!
//! The token formats take each step's ids from what the model server returned
//! ([`swerve_core::trajectory::TokenCapture`], `agent.capture_tokens`). A step without them
//! is an error naming the trajectory and step, unless the caller opted into re-tokenizing
//! the text ([`Retokenize`]); re-tokenized steps are marked so the caller can warn.

pub mod exporter;
pub mod llamafactory;
pub mod messages;
pub mod skyrl;
pub mod trl;
pub mod verl;

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::{Header, Message, Role, Trajectory};

/// The tokens of one step: what the model was sent and what it generated.
#[derive(Debug, Clone, PartialEq)]
pub struct StepTokens {
    /// The prompt's token ids.
    pub prompt_ids: Vec<u32>,
    /// The generated token ids.
    pub response_ids: Vec<u32>,
    /// The log-probability of each generated token, when captured.
    pub logprobs: Option<Vec<f64>>,
    /// Whether the ids were re-tokenized from text rather than captured.
    pub retokenized: bool,
}

/// Turns a step's text back into token ids: the explicit opt-in when ids were not captured.
pub trait Retokenize {
    /// The ids of the prompt `sent` (generation prompt on) and of `reply` after it.
    fn step(&self, sent: &[Message], reply: &Message) -> Result<(Vec<u32>, Vec<u32>), String>;
}

/// Why a trajectory cannot be exported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// A step has no captured ids and re-tokenizing was not asked for.
    #[error(
        "trajectory {id} step {step}: no captured token ids\nhint: run with \
         `--set agent.capture_tokens=true` against a server that returns them (vLLM), or \
         re-tokenize the text with --retokenize --tokenizer DIR (the ids may then differ \
         from what the model saw)"
    )]
    NoTokens {
        /// The trajectory id.
        id: String,
        /// The step.
        step: usize,
    },
    /// Re-tokenizing a step failed.
    #[error("trajectory {id} step {step}: cannot re-tokenize: {message}")]
    Retokenize {
        /// The trajectory id.
        id: String,
        /// The step.
        step: usize,
        /// Why.
        message: String,
    },
    /// The recorded data does not fit together.
    #[error("trajectory {id}: {message}")]
    Invalid {
        /// The trajectory id.
        id: String,
        /// What is wrong and what to do.
        message: String,
    },
}

impl ExportError {
    fn invalid(trajectory: &Trajectory, message: impl Into<String>) -> Self {
        ExportError::Invalid {
            id: trajectory.header.id.clone(),
            message: message.into(),
        }
    }
}

/// The tokens of every step: captured ones as they are, the others re-tokenized when
/// `retokenize` is given, else an error.
pub fn step_tokens(
    trajectory: &Trajectory,
    retokenize: Option<&dyn Retokenize>,
) -> Result<Vec<StepTokens>, ExportError> {
    if trajectory.steps.is_empty() {
        return Err(ExportError::invalid(trajectory, "no steps to export"));
    }
    let id = &trajectory.header.id;
    let mut conversation = None;
    let mut tokens = Vec::with_capacity(trajectory.steps.len());
    for (index, step) in trajectory.steps.iter().enumerate() {
        let step_tokens = match (&step.tokens, retokenize) {
            (Some(captured), _) => {
                if let Some(logprobs) = &captured.logprobs
                    && logprobs.len() != captured.completion_ids.len()
                {
                    return Err(ExportError::invalid(
                        trajectory,
                        format!(
                            "step {index}: {} logprobs for {} completion ids; the capture is \
                             damaged, run the rollout again",
                            logprobs.len(),
                            captured.completion_ids.len()
                        ),
                    ));
                }
                StepTokens {
                    prompt_ids: captured.prompt_ids.clone(),
                    response_ids: captured.completion_ids.clone(),
                    logprobs: captured.logprobs.clone(),
                    retokenized: false,
                }
            }
            (None, Some(retokenize)) => {
                if conversation.is_none() {
                    conversation = Some(conversation_of(trajectory)?);
                }
                let sent = sent_messages(trajectory, index, conversation.as_deref());
                let (prompt_ids, response_ids) = retokenize
                    .step(&sent, &step.reply_turn())
                    .map_err(|message| ExportError::Retokenize {
                        id: id.clone(),
                        step: index,
                        message,
                    })?;
                StepTokens {
                    prompt_ids,
                    response_ids,
                    logprobs: None,
                    retokenized: true,
                }
            }
            (None, None) => {
                return Err(ExportError::NoTokens {
                    id: id.clone(),
                    step: index,
                });
            }
        };
        if step_tokens.response_ids.is_empty() {
            return Err(ExportError::invalid(
                trajectory,
                format!("step {index}: the model generated no tokens; there is nothing to train"),
            ));
        }
        tokens.push(step_tokens);
    }
    Ok(tokens)
}

/// The whole conversation, every turn with its reasoning.
pub fn conversation_of(trajectory: &Trajectory) -> Result<Vec<Message>, ExportError> {
    trajectory
        .conversation()
        .map_err(|error| ExportError::invalid(trajectory, error.to_string()))
}

/// What step `step` was sent: its recorded request, else (imports that record none) the
/// conversation before its assistant turn.
pub fn sent_messages(
    trajectory: &Trajectory,
    step: usize,
    conversation: Option<&[Message]>,
) -> Vec<Message> {
    if let Some(sent) = trajectory.messages_sent(step) {
        return sent;
    }
    let conversation = conversation.unwrap_or(&trajectory.header.prompt);
    let end = conversation
        .iter()
        .enumerate()
        .filter(|(_, message)| message.role == Role::Assistant)
        .nth(step)
        .map_or(conversation.len(), |(at, _)| at);
    conversation[..end].to_vec()
}

/// SkyRL's `TrajectoryID`: the task and which sample of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryId {
    /// The task instance.
    pub instance_id: String,
    /// The sample: the `k` of a `swerve run` trajectory id `<instance_id>__<k>`, else (and
    /// when another trajectory of the export took that `k`) as [`Repetitions`] numbers it.
    pub repetition_id: usize,
}

/// Numbers the samples of each task across one export, so that no two trajectories of a
/// task share a [`TrajectoryId`]: a `swerve run` id keeps its `k` when it is free, and ids
/// without one (serve sessions, shims, imports) get the lowest number still free.
#[derive(Debug, Default)]
pub struct Repetitions(std::collections::HashMap<String, std::collections::BTreeSet<usize>>);

impl Repetitions {
    /// The id of the trajectory with `header`, unique among those assigned so far.
    pub fn assign(&mut self, header: &Header) -> TrajectoryId {
        let used = self.0.entry(header.instance_id.clone()).or_default();
        let repetition_id = sample_k(header)
            .filter(|k| !used.contains(k))
            .or_else(|| (0..).find(|k| !used.contains(k)))
            .unwrap_or_default();
        used.insert(repetition_id);
        TrajectoryId {
            instance_id: header.instance_id.clone(),
            repetition_id,
        }
    }
}

impl TrajectoryId {
    /// The id of the trajectory with `header`.
    pub fn of(header: &Header) -> Self {
        Self {
            instance_id: header.instance_id.clone(),
            repetition_id: sample_k(header).unwrap_or(0),
        }
    }
}

/// The `k` of a `swerve run` trajectory id `<instance_id>__<k>`.
fn sample_k(header: &Header) -> Option<usize> {
    header
        .id
        .strip_prefix(header.instance_id.as_str())?
        .strip_prefix("__")?
        .parse()
        .ok()
}

#[cfg(test)]
pub(crate) mod fixture {
    //! A small captured trajectory, as `swerve run` with `agent.capture_tokens` writes it:
    //! every prompt extends the previous prompt and reply (an append-only history).

    use swerve_core::trajectory::{
        ExitReason, Header, Message, MessagesSent, Outcome, Step, TokenCapture, Trajectory,
    };

    /// Three steps; step 1 had a format error. Prompt ids of step k are those of step k−1,
    /// its reply's ids, then two ids of the observation.
    pub fn captured() -> Trajectory {
        let mut header = Header::new("calc-1__2", "calc-1");
        header.prompt = vec![Message::system("sys"), Message::user("task")];
        let mut trajectory = Trajectory::new(header);
        let mut prompt = vec![1, 2, 3];
        let mut sent = trajectory.header.prompt.clone();
        for index in 0..3 {
            let reply = format!("reply {index}");
            let mut step = Step::new(index, reply.clone());
            let completion = vec![100 + index as u32, 200 + index as u32];
            step.tokens = Some(TokenCapture {
                prompt_ids: prompt.clone(),
                completion_ids: completion.clone(),
                logprobs: Some(vec![-0.5, -0.25]),
            });
            step.messages_sent = Some(MessagesSent::Full(sent.clone()));
            step.observation = Some(format!("observation {index}"));
            if index == 1 {
                step.format_error = Some("no function call".into());
            }
            trajectory.steps.push(step);
            sent.push(Message::assistant(reply));
            sent.push(Message::user(format!("observation {index}")));
            prompt.extend(&completion);
            prompt.extend([10 + index as u32, 11]);
        }
        let mut outcome = Outcome::new(ExitReason::Submitted, "diff");
        outcome.eval_report = Some(serde_json::json!({"resolved": true}));
        outcome.reward = Some(1.0);
        trajectory.outcome = Some(outcome);
        trajectory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct ByteTokens;

    impl Retokenize for ByteTokens {
        fn step(&self, sent: &[Message], reply: &Message) -> Result<(Vec<u32>, Vec<u32>), String> {
            let bytes = |text: String| text.bytes().map(u32::from).collect();
            let prompt: String = sent.iter().map(Message::text).collect();
            Ok((bytes(prompt), bytes(reply.text())))
        }
    }

    #[test]
    fn captured_ids_are_taken_as_they_are() {
        let trajectory = fixture::captured();
        let tokens = step_tokens(&trajectory, None).unwrap();
        assert_eq!(tokens.len(), 3);
        for (step, tokens) in trajectory.steps.iter().zip(&tokens) {
            let captured = step.tokens.as_ref().unwrap();
            assert_eq!(tokens.prompt_ids, captured.prompt_ids);
            assert_eq!(tokens.response_ids, captured.completion_ids);
            assert!(!tokens.retokenized);
        }
        // Captured ids win over re-tokenizing even when it is offered.
        let offered = step_tokens(&trajectory, Some(&ByteTokens)).unwrap();
        assert_eq!(offered, tokens);
    }

    #[test]
    fn missing_ids_are_an_error_unless_retokenizing_is_asked_for() {
        let mut trajectory = fixture::captured();
        trajectory.steps[1].tokens = None;
        let error = step_tokens(&trajectory, None).unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("trajectory calc-1__2 step 1: no captured token ids"));
        assert!(
            message.contains("--retokenize --tokenizer DIR"),
            "{message}"
        );
        let tokens = step_tokens(&trajectory, Some(&ByteTokens)).unwrap();
        assert!(tokens[1].retokenized && tokens[1].logprobs.is_none());
        assert_eq!(tokens[1].response_ids, b"reply 1".map(u32::from).to_vec());
        assert_eq!(
            tokens[1].prompt_ids,
            "systaskreply 0observation 0"
                .bytes()
                .map(u32::from)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn trajectory_ids_come_from_run_ids() {
        let header = Header::new("django__django-1__3", "django__django-1");
        assert_eq!(TrajectoryId::of(&header).repetition_id, 3);
        let imported = Header::new("some-import", "django__django-1");
        assert_eq!(TrajectoryId::of(&imported).repetition_id, 0);
        // Numbered across an export: sessions and imports take the free numbers.
        let mut repetitions = Repetitions::default();
        let session = |id: &str| Header::new(id, "calc-1");
        let ids: Vec<usize> = ["calc-1__g3__s5", "calc-1__0", "calc-1__g3__s6", "calc-1__1"]
            .into_iter()
            .map(|id| repetitions.assign(&session(id)).repetition_id)
            .collect();
        assert_eq!(ids, [0, 1, 2, 3]);
    }

    #[test]
    fn sent_messages_fall_back_to_the_conversation() {
        let mut trajectory = fixture::captured();
        for step in &mut trajectory.steps {
            step.messages_sent = None;
        }
        let conversation = conversation_of(&trajectory).unwrap();
        let sent = sent_messages(&trajectory, 1, Some(&conversation));
        let texts: Vec<String> = sent.iter().map(Message::text).collect();
        assert_eq!(texts, ["sys", "task", "reply 0", "observation 0"]);
    }
}
