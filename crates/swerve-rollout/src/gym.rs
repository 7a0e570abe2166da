//! Gym-style environments over a task, driven from outside one step at a time (`swerve
//! serve`'s `/v1/envs`, the Python `swerve.Env`): the whole agent of `swerve run` minus the
//! policy. [`GymEnv::open`] assembles the episode's environment as a rollout does
//! ([`RunContext::open`]: the sandbox, SWE-World's simulation with `run.env = "world"`,
//! SWE-Edit's `llm_editor`) and answers with the first prompt; [`GymEnv::step`] takes the
//! policy's reply (or a tool call, run as given and kept as the format writes it) through
//! the agent's one step ([`Agent::take_reply`], [`Agent::take_call`]) and answers with what
//! the policy must see next: the conversation under the configured context policy (with
//! `--preset agile`, the windowed context with digests), and, given a tokenizer
//! (`run.tokenizer`), its token ids and the step's training sample. [`GymEnv::evaluation`]
//! then [`Evaluation::grade`] grade the patch (in a fresh workspace) and shape the reward by
//! `[reward]` from the episode's own record.
//!
//! Results are JSON objects, the same for every front end.

use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use swerve_agent::episode::{AgentError, Episode, Exit, Prompt};
use swerve_chat::{ChatModel, RenderOptions};
use swerve_core::trajectory::{ChatToolCall, ExitReason, Outcome, Role, Step, Trajectory};
use swerve_core::{Task, ToolCall};
use swerve_eval::grader::Grader;
use swerve_llm::{ModelInput, ModelResponse};
use swerve_sandbox::Environment;
use swerve_tools::Toolbox;
use swerve_tools::formats::{FALLBACK_CALL_ID, NativeToolCall};
use swerve_world::environment::WorldStats;

use crate::config::Config;
use crate::grading::reward_of;
use crate::rollout::{RunContext, TaskEnvironment, episode_outcome, record_grade};

/// What the agent does in one step.
#[derive(Debug, Clone)]
pub enum Action {
    /// A tool call, run exactly as given (not written with the configured format and read
    /// back, which would normalize its values); the conversation keeps it as the format
    /// writes it.
    Call(ToolCall),
    /// A model's reply.
    Reply(Reply),
}

/// A model's reply to the last prompt.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// Its text (`message.content`), read with the configured format.
    pub text: String,
    /// Its native tool calls (`message.tool_calls`, OpenAI's objects).
    pub tool_calls: Vec<Value>,
    /// The server's reasoning channel (`message.reasoning_content`), if any.
    pub reasoning: Option<String>,
    /// The reply's token ids as the policy sampled them (the step's sample then uses them
    /// rather than re-encoding the text).
    pub response_ids: Option<Vec<u32>>,
    /// The log-probabilities of `response_ids`.
    pub logprobs: Option<Vec<f64>>,
}

impl Reply {
    /// A reply of `text` with the native `tool_calls`.
    pub fn text(text: String, tool_calls: Vec<Value>) -> Self {
        Self {
            text,
            tool_calls,
            ..Self::default()
        }
    }
}

/// A step that cannot be taken.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The episode has ended.
    #[error("environment {id:?} is done ({why}): evaluate or delete it")]
    Done {
        /// The environment's id.
        id: String,
        /// How the episode ended, in words.
        why: String,
    },
    /// The action is malformed (the field and what is wrong).
    #[error("{0}")]
    Action(String),
    /// The agent's step failed (a prompt template, the step's tokens).
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// A task's episode under the configuration it was opened with.
pub struct GymEnv {
    id: String,
    task: Task,
    context: RunContext,
    environment: Box<dyn Environment>,
    toolbox: Toolbox,
    world_stats: Option<Arc<Mutex<WorldStats>>>,
    episode: Episode,
    /// The prompt awaiting the policy's reply (none once the episode has ended), with its
    /// token ids when there is a tokenizer.
    pending: Option<(Prompt, Option<Vec<u32>>)>,
    /// The episode's record: the header and the steps taken.
    record: Trajectory,
    /// `run.tokenizer`: prompts and replies as token ids.
    tokenizer: Option<ChatModel>,
    opening: Value,
}

impl GymEnv {
    /// Opens `task` (loaded from `task_file`, whose location finds its repository) under
    /// `config`, as environment `id`. Blocks while the workspace is made (the task's
    /// environment is built on first use, then cached); must be called inside a tokio
    /// runtime when the configuration calls models from tools (SWE-World, SWE-Edit).
    pub fn open(id: String, config: Config, task_file: &Path, task: Task) -> Result<Self> {
        let context = RunContext::for_environments(&config, task_file)?;
        let tokenizer = match &config.run.tokenizer {
            Some(dir) => Some(
                ChatModel::from_dir(dir)
                    .map_err(|error| anyhow::anyhow!("run.tokenizer {}: {error}", dir.display()))?,
            ),
            None => None,
        };
        let TaskEnvironment {
            environment,
            toolbox,
            world_stats,
        } = context.open(&task, &id)?;
        let agent = context.agent();
        let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
        let messages = agent.opening(&task, &toolbox, &mount_point)?;
        let record = Trajectory::new(context.header(&id, &task, &messages));
        let episode = agent.begin(messages, &toolbox, &id);
        let tool_specs = agent.tool_specs(&toolbox);
        let opening = json!({
            "id": id,
            "instance_id": task.instance_id,
            "format": agent.format.name(),
            "tools": agent.format.render(&tool_specs).tools,
            "tool_specs": tool_specs,
            "max_steps": config.agent.max_steps,
            "reasoning_window": record.header.extra.get("reasoning_window"),
        });
        let mut env = Self {
            id,
            task,
            context,
            environment,
            toolbox,
            world_stats,
            episode,
            pending: None,
            record,
            tokenizer,
            opening,
        };
        env.advance().map_err(anyhow::Error::from)?;
        let next = env.next_prompt();
        let opening = env.opening.as_object_mut().expect("an object");
        opening.extend(next.as_object().cloned().unwrap_or_default());
        Ok(env)
    }

    /// The opening: `id`, `instance_id`, `format`, `messages` (the first prompt: the system
    /// and first user messages), `prompt_ids` (their token ids, with a tokenizer), `tools`
    /// (as the format hands them to the model: OpenAI tool objects for the native format,
    /// else none), `tool_specs`, `max_steps` and `reasoning_window` (the N of a windowed
    /// context, else null).
    pub fn opening(&self) -> &Value {
        &self.opening
    }

    /// The environment's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The task it was opened for.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The configuration it was opened with.
    pub fn config(&self) -> &Config {
        &self.context.config
    }

    /// Whether the episode has ended (the agent called `finish`, or a limit, a repeated call
    /// or too many format errors ended it).
    pub fn is_done(&self) -> bool {
        self.episode.exit().is_some()
    }

    /// The episode's record: its header and the steps taken.
    pub fn record(&self) -> &Trajectory {
        &self.record
    }

    /// Takes `action` as the reply to the pending prompt, through the agent's one step:
    /// `step` (its index), `observation`, `done`, `exit_reason` and `exit_detail` (once
    /// done), `is_error`, `format_error` (the reason a reply could not be read: no tool
    /// ran and the observation tells the model how to answer), `call`, `message` (the
    /// observation as the chat message the format sends back, null when the reply ended the
    /// episode unanswered), `messages` (the next prompt under the context policy, null once
    /// done), `prompt_ids` (its token ids, with a tokenizer) and `sample` (this step's
    /// training sample: `prompt_ids`, `response_ids`, `logprobs`, `mask`; with a tokenizer
    /// or given ids). Blocks while the tool runs.
    pub fn step(&mut self, action: Action) -> Result<Value, StepError> {
        let Some((prompt, prompt_ids)) = self.pending.take() else {
            let why = match self.episode.exit().map(|exit| exit.reason) {
                Some(ExitReason::Submitted) => "the agent called finish".to_owned(),
                Some(reason) => format!("it ended: {}", reason.as_str()),
                None => "it ended".to_owned(),
            };
            return Err(StepError::Done {
                id: self.id.clone(),
                why,
            });
        };
        let agent = self.context.agent();
        let taken = match action {
            Action::Call(call) => agent
                .take_call(&mut self.episode, prompt, call, &mut self.toolbox)
                .map(|stepped| (stepped, None)),
            Action::Reply(reply) => {
                let response = match response(reply) {
                    Ok(response) => response,
                    Err(error) => {
                        self.pending = Some((prompt, prompt_ids));
                        return Err(error);
                    }
                };
                agent
                    .take_reply(&mut self.episode, prompt, &response, &mut self.toolbox)
                    .map(|stepped| (stepped, Some(response)))
            }
        };
        let (stepped, response) =
            taken.map_err(|error: AgentError| StepError::Failed(error.into()))?;
        let Some(step) = stepped.step else {
            return Err(StepError::Failed(anyhow::anyhow!(
                "environment {:?}: the agent took the reply but recorded no step",
                self.id
            )));
        };
        let sample = self.sample(prompt_ids, &step.response_text, response)?;
        self.record.steps.push(step.clone());
        self.advance()?;
        let mut answer = self.step_answer(&step, stepped.tool_error);
        let fields = answer.as_object_mut().expect("an object");
        fields.insert("sample".into(), sample);
        fields.extend(self.next_prompt().as_object().cloned().unwrap_or_default());
        Ok(answer)
    }

    /// What happened in `step`, as [`GymEnv::step`] answers it (the next prompt apart).
    fn step_answer(&self, step: &Step, tool_error: bool) -> Value {
        let exit = self.episode.exit();
        // The observation's message, when the step added one after the reply.
        let message = self
            .episode
            .conversation()
            .last()
            .filter(|message| message.role != Role::Assistant);
        json!({
            "step": step.index,
            "observation": step.observation.as_deref().unwrap_or(""),
            "done": exit.is_some(),
            "exit_reason": exit.map(|exit| exit.reason.as_str()),
            "exit_detail": exit.and_then(|exit| exit.detail.as_deref()),
            "is_error": tool_error,
            "format_error": step.format_error,
            "call": step.tool_call.as_ref().map(|call| json!({"name": call.name, "arguments": call.arguments})),
            "message": message,
        })
    }

    /// The next prompt, or the end when the episode cannot go on.
    fn advance(&mut self) -> Result<(), StepError> {
        let agent = self.context.agent();
        self.pending = match agent.prompt(&mut self.episode) {
            Ok(prompt) => {
                let ids = self.prompt_ids(&prompt)?;
                Some((prompt, ids))
            }
            Err(Exit { .. }) => None,
        };
        Ok(())
    }

    /// `messages` and `prompt_ids` of the pending prompt (null once done).
    fn next_prompt(&self) -> Value {
        match &self.pending {
            Some((prompt, ids)) => json!({"messages": prompt.messages, "prompt_ids": ids}),
            None => json!({"messages": null, "prompt_ids": null}),
        }
    }

    /// The token ids of `prompt` under the tokenizer's chat template (the prompt itself in
    /// prompt-rendered mode), with the generation prompt; `None` without a tokenizer.
    fn prompt_ids(&self, prompt: &Prompt) -> Result<Option<Vec<u32>>, StepError> {
        let Some(tokenizer) = &self.tokenizer else {
            return Ok(None);
        };
        let ids = match &prompt.request.input {
            ModelInput::Prompt(text) => tokenizer.tokenizer().encode(text, false),
            ModelInput::Chat { messages, tools } => {
                let mut options = RenderOptions::default().generation_prompt(true);
                if !tools.is_empty() {
                    options = options.tools(tools.clone());
                }
                tokenizer.encode(messages, &options)
            }
        };
        let ids = ids.map_err(|error| {
            StepError::Failed(anyhow::anyhow!(
                "run.tokenizer: cannot encode the prompt of step {}: {error}",
                prompt.index
            ))
        })?;
        Ok(Some(ids))
    }

    /// The step's training sample: the prompt's ids, the reply's ids (the policy's
    /// `response`'s when it gave them, else the tokenizer's encoding of the reply's `text`),
    /// their logprobs when given, and the loss mask (every reply token trained). Null when
    /// there are neither a tokenizer nor given ids.
    fn sample(
        &self,
        prompt_ids: Option<Vec<u32>>,
        text: &str,
        response: Option<ModelResponse>,
    ) -> Result<Value, StepError> {
        let (ids, logprobs) = response.map_or((None, None), |response| {
            (response.completion_token_ids, response.logprobs)
        });
        let response_ids = match (ids, &self.tokenizer) {
            (Some(ids), _) => ids,
            (None, Some(tokenizer)) => {
                tokenizer.tokenizer().encode(text, false).map_err(|error| {
                    StepError::Failed(anyhow::anyhow!(
                        "run.tokenizer: cannot encode the reply: {error}"
                    ))
                })?
            }
            (None, None) => return Ok(Value::Null),
        };
        Ok(json!({
            "prompt_ids": prompt_ids,
            "response_ids": response_ids,
            "logprobs": logprobs,
            "mask": vec![1u8; response_ids.len()],
        }))
    }

    /// The workspace's patch against the task's base commit (empty when nothing changed).
    /// Blocks.
    pub fn patch(&self) -> Result<String> {
        Ok(self.environment.patch(&self.context.config.patch)?.diff)
    }

    /// What grading needs of the episode as it stands: its patch and its outcome before
    /// grading (an episode the trainer stops before its end counts as `max_steps`, the
    /// trainer's step limit). Blocks while the patch is taken.
    pub fn evaluation(&self) -> Result<Evaluation> {
        let patch = self.patch()?;
        let outcome = episode_outcome(
            self.episode.end(),
            patch,
            &self.record,
            self.world_stats.as_deref(),
        )?;
        Ok(Evaluation {
            id: self.id.clone(),
            task: self.task.clone(),
            config: self.context.config.clone(),
            outcome,
            record: self.record.clone(),
        })
    }

    /// Destroys the workspace (also done when the environment is dropped, with the error
    /// only logged).
    pub fn destroy(self) -> Result<()> {
        Ok(self.environment.destroy()?)
    }
}

/// A gym episode to grade, from [`GymEnv::evaluation`].
pub struct Evaluation {
    id: String,
    task: Task,
    config: Config,
    outcome: Outcome,
    record: Trajectory,
}

impl Evaluation {
    /// Grades the patch with `grader` (in a fresh workspace; the environment stays as it
    /// is) and shapes the reward by `[reward]` from the episode's record, as `swerve run`
    /// records it (see [`Graded`]).
    pub async fn grade(mut self, grader: &dyn Grader) -> Result<Graded> {
        let patch = Some(self.outcome.patch.as_str()).filter(|patch| !patch.is_empty());
        let grade = grader.grade(&self.task, patch, Some(&self.id)).await;
        // Recorded as `swerve run` records it, infra failures included (no reward, the
        // report saying why), so that `swerve data` reads the trajectory as a run's.
        record_grade(
            &mut self.outcome,
            &grade,
            &self.record,
            Path::new(&self.id),
            &self.config,
        )
        .with_context(|| format!("environment {:?}", self.id))?;
        let score = reward_of(&grade);
        let terms = score.and(self.outcome.extra.get(crate::reward::REWARD_KEY).cloned());
        let result = json!({
            "id": self.id,
            "instance_id": self.task.instance_id,
            "reward": terms.as_ref().and_then(|terms| terms["total"].as_f64()),
            "reward_terms": terms,
            "score": score,
            "resolved": grade.resolved(),
            "patch": self.outcome.patch,
            "report": grade.to_json(),
            "exit_reason": self.outcome.exit_reason.as_str(),
            "steps": self.record.steps.len(),
        });
        let mut trajectory = self.record;
        trajectory.outcome = Some(self.outcome);
        Ok(Graded { result, trajectory })
    }
}

/// A graded gym episode, from [`Evaluation::grade`].
pub struct Graded {
    /// What the front ends answer: `id`, `instance_id`, `reward` (the shaped total, see
    /// [`reward_of`]; null when grading failed for the machinery's reason), `reward_terms`
    /// (the total's terms), `score` (the grade's), `resolved`, `patch`, `report`,
    /// `exit_reason` and `steps`.
    pub result: Value,
    /// The episode as a trajectory, its outcome graded as `swerve run --eval` writes it:
    /// what `swerve data export` and `swerve data advantages` read.
    pub trajectory: Trajectory,
}

/// The model response a policy's `reply` stands for; an error when its logprobs do not
/// match its token ids one for one.
fn response(reply: Reply) -> Result<ModelResponse, StepError> {
    let mut response = ModelResponse::text(reply.text);
    response.reasoning_content = reply.reasoning;
    response.tool_calls = reply
        .tool_calls
        .iter()
        .map(|call| chat_call(&NativeToolCall::from_openai(call)))
        .collect();
    if let (Some(ids), Some(logprobs)) = (&reply.response_ids, &reply.logprobs)
        && ids.len() != logprobs.len()
    {
        return Err(StepError::Action(format!(
            "logprobs: {} values for {} response_ids; give one per token",
            logprobs.len(),
            ids.len()
        )));
    }
    response.completion_token_ids = reply.response_ids;
    response.logprobs = reply.logprobs;
    Ok(response)
}

/// A format's native call as a chat message's.
fn chat_call(call: &NativeToolCall) -> ChatToolCall {
    ChatToolCall::new(
        call.id.as_deref().unwrap_or(FALLBACK_CALL_ID),
        &call.name,
        &call.arguments,
    )
}
