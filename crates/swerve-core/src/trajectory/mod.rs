//! Trajectories: the record of one agent run, step by step.
//!
//! A [`Trajectory`] is a [`Header`] (ids, the resolved run configuration, the prompt
//! messages), the [`Step`]s (per model call: the exact request, the raw answer, the parsed
//! reasoning / digest / tool call, the observation, usage, timings, token ids, errors) and,
//! once the run ends, an [`Outcome`] (exit reason, patch, cost, totals, evaluation report
//! and reward).
//!
//! On disk a trajectory is JSON lines: a header record, one record per finished step, and
//! an outcome record. [`TrajectoryWriter`] writes and syncs each record as it happens, so
//! killing a run loses at most the step in flight; [`read_trajectory`] reads such a file,
//! dropping (and reporting) a last line cut short by a crash. The schema is versioned
//! ([`SCHEMA_VERSION`]) and described in `docs/trajectories.md`. [`import`] converts the
//! trajectories of mini-swe-agent, SWE-agent, R2E-Gym and OpenHands.
//!
//! ```
//! use swerve_core::trajectory::{ExitReason, Header, Outcome, Step, TrajectoryWriter, read_trajectory};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("run.jsonl");
//! let mut writer = TrajectoryWriter::create(&path, &Header::new("run-1", "octocat__hello-1"))?;
//! writer.append_step(&Step::new(0, "I will submit."))?;
//! writer.finish(&Outcome::new(ExitReason::Submitted, ""))?;
//!
//! let read = read_trajectory(&path)?;
//! assert_eq!(read.trajectory.steps.len(), 1);
//! assert_eq!(read.trajectory.outcome.unwrap().exit_reason, ExitReason::Submitted);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod conversation;
mod error;
pub mod import;
mod message;
mod messages_sent;
mod outcome;
mod reader;
mod record;
mod step;
mod subagent;
mod time;
pub mod turn;
mod usage;
mod writer;

use serde::Serialize;
use serde_json::{Map, Value};

pub use error::{TrajectoryError, TrajectoryErrorKind};
pub use message::{ChatToolCall, Content, FunctionCall, Message, Role};
pub use messages_sent::{MessagesDelta, MessagesSent};
pub use outcome::{ExitReason, Outcome};
pub use reader::{PartialLine, ReadTrajectory, parse_trajectory, read_trajectory};
pub use step::{Step, Timings, TokenCapture};
pub use subagent::{SubTrajectory, SubagentCall};
pub use usage::Usage;
pub use writer::{TrajectoryWriter, write_trajectory};

/// The version of the file layout this build writes, and the newest it reads.
pub const SCHEMA_VERSION: u32 = 1;

/// What is known when a run starts: the first record of a trajectory file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    /// This run's id (unique per run; also usable as a sticky-routing session id).
    pub id: String,
    /// The task instance, e.g. `django__django-11099`; empty when an import cannot tell.
    pub instance_id: String,
    /// When the run started, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The resolved run configuration (model, sampling, limits, tools, prompts), as JSON.
    pub config: Value,
    /// The messages every request starts from (system prompt, task). Step requests refer
    /// to them (see [`MessagesDelta::base`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompt: Vec<Message>,
    /// Anything else, such as where an import came from.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Header {
    /// A header created now, with no configuration or prompt yet.
    pub fn new(id: impl Into<String>, instance_id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            instance_id: instance_id.into(),
            created_at: Some(time::now_rfc3339()),
            config: Value::Null,
            prompt: Vec::new(),
            extra: Map::new(),
        }
    }
}

/// A whole run: header, steps (numbered 0, 1, 2, …) and, once it ended, its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// Ids, configuration, prompt.
    pub header: Header,
    /// The finished steps, in order; `steps[i].index == i`.
    pub steps: Vec<Step>,
    /// How the run ended; `None` while it runs or when it died.
    pub outcome: Option<Outcome>,
}

impl Trajectory {
    /// A trajectory with no steps yet.
    pub fn new(header: Header) -> Self {
        Self {
            header,
            steps: Vec::new(),
            outcome: None,
        }
    }

    /// The exact messages step `step` (a position in `steps`) sent, rebuilt from the chain
    /// of deltas; `None` when there is no such step, a step on the chain did not record
    /// its messages, or a reference is invalid (files read or written by swerve never
    /// have invalid ones).
    pub fn messages_sent(&self, step: usize) -> Option<Vec<Message>> {
        let mut chain = Vec::new();
        let mut at = step;
        let root = loop {
            match self.steps.get(at)?.messages_sent.as_ref()? {
                MessagesSent::Full(messages) => break messages.clone(),
                MessagesSent::Delta(delta) => {
                    chain.push(delta);
                    match delta.base {
                        None => break self.header.prompt.clone(),
                        Some(base) if base < at => at = base,
                        Some(_) => return None,
                    }
                }
            }
        };
        chain
            .into_iter()
            .rev()
            .try_fold(root, |messages, delta| delta.apply(messages))
    }
}

/// Checks steps as they are appended: indexes in order, message references that resolve.
#[derive(Debug)]
pub(super) struct Checker {
    prompt_len: usize,
    request_lens: Vec<Option<usize>>,
}

impl Checker {
    /// A checker for the steps of a trajectory with this header.
    fn new(header: &Header) -> Self {
        Self {
            prompt_len: header.prompt.len(),
            request_lens: Vec::new(),
        }
    }

    /// Checks `step` as the next one; returns the length of its request, if recorded.
    fn check(&self, step: &Step) -> Result<Option<usize>, TrajectoryError> {
        let expected = self.request_lens.len();
        if step.index != expected {
            return Err(TrajectoryError::in_field(
                "index",
                TrajectoryErrorKind::StepIndex {
                    expected,
                    found: step.index,
                },
            ));
        }
        step.messages_sent
            .as_ref()
            .map(|sent| sent.request_len(step.index, self.prompt_len, &self.request_lens))
            .transpose()
            .map_err(|reason| {
                TrajectoryError::in_field(
                    "messages_sent",
                    TrajectoryErrorKind::MessagesReference(reason),
                )
            })
    }

    /// Records a checked step by the length [`Checker::check`] returned.
    fn accept(&mut self, request_len: Option<usize>) {
        self.request_lens.push(request_len);
    }

    /// Checks and records `step`.
    fn push(&mut self, step: &Step) -> Result<(), TrajectoryError> {
        let request_len = self.check(step)?;
        self.accept(request_len);
        Ok(())
    }
}
