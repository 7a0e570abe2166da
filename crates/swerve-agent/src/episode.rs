//! The agent loop: one rollout of a model on a task, written to its trajectory step by step.
//!
//! [`Agent::run`] is a loop over [`Agent::step`], the one step every front end takes
//! (`swerve run`, `swerve serve`'s rollouts, and, with the reply given from outside through
//! [`Agent::prompt`] and [`Agent::take_reply`], the gym environments); its exits are
//! values ([`Exit`]), the state between steps an [`Episode`].
//!
//! Each step: check the limits; send the conversation as the context policy shows it (with
//! the format's tool schemas for native function calling); read the reply (its reasoning
//! structure when required, then the call: `reply`); run the call in the workspace (on a
//! blocking thread); append the assistant message and the observation; write the step. A
//! reply that cannot be read gets the error text as its observation; too many in a row end
//! the episode, and so does a structure error whose policy is to terminate. So do the same
//! call repeated, a model error, or a limit. `recall_thought`, when it is on, is answered
//! here from the conversation rather than by the toolbox.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use swerve_core::trajectory::{
    ExitReason, Message, MessagesSent, Role, Step, Timings, TokenCapture, TrajectoryError,
    TrajectoryWriter, Usage,
};
use swerve_core::{Task, ToolCall};
use swerve_llm::{Model, ModelError, ModelRequest, ModelResponse};
use swerve_tools::formats::{
    FormatErrorBudget, ParsedResponse, ResultMessage, ResultRole, ToolFormat,
};
use swerve_tools::{ToolResult, Toolbox};

use swerve_chat::{ChatModel, RenderOptions};

use crate::agile::{ContextPolicy, ReasoningConfig, recall};
use crate::prompt::{PromptContext, PromptError, Prompts};
use crate::reply::{self, Rejection};

/// Limits and behaviour of the loop. Every limit is optional except the step count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Model calls at most (R2E-Gym's `max_steps`).
    pub max_steps: u32,
    /// Stop once the context reaches this many tokens: the previous call's prompt and
    /// completion, as the server counted them (a server's own context-length error ends the
    /// episode the same way).
    pub max_context_tokens: Option<u64>,
    /// Stop once prompt + completion tokens of all calls reach this.
    pub max_total_tokens: Option<u64>,
    /// Stop once the cost reaches this (in the price table's currency), the subagents'
    /// included.
    pub max_cost: Option<f64>,
    /// Stop after this many seconds of wall time.
    pub max_wall_secs: Option<f64>,
    /// Consecutive replies without a valid call before giving up (0 = no limit).
    pub max_format_errors: u32,
    /// The same call this many times in a row ends the episode (0 = no limit).
    pub max_repeats: u32,
    /// Ask the server for token ids and logprobs.
    pub capture_tokens: bool,
    /// The reply structure and what the model is sent of earlier reasoning (SWE-AGILE);
    /// by default nothing is required and the conversation is sent as it is.
    #[serde(skip_serializing_if = "ReasoningConfig::is_default")]
    pub reasoning: ReasoningConfig,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_steps: 50,
            max_context_tokens: None,
            max_total_tokens: None,
            max_cost: None,
            max_wall_secs: None,
            max_format_errors: 3,
            max_repeats: 3,
            capture_tokens: false,
            reasoning: ReasoningConfig::default(),
        }
    }
}

/// How an episode ended.
#[derive(Debug, Clone)]
pub struct EpisodeEnd {
    /// Why the loop stopped (the same value the trajectory's outcome records).
    pub exit_reason: ExitReason,
    /// What happened, in words (e.g. the model error).
    pub detail: Option<String>,
    /// Model calls made (the trajectory's steps).
    pub steps: usize,
    /// The main model's tokens and cost.
    pub usage: Usage,
    /// The main model's cost, in the price table's currency (unknown costs count as 0).
    pub cost: f64,
    /// The tokens of the subagents the tools ran.
    pub subagent_usage: Usage,
    /// The subagents' cost, in the same currency.
    pub subagent_cost: f64,
    /// Time spent waiting for the model and running tools, summed over the steps.
    pub timings: Timings,
}

/// What can stop an episode from running at all.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A prompt template did not render.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The trajectory could not be written.
    #[error("writing the trajectory: {0}")]
    Trajectory(#[from] TrajectoryError),
}

/// Why an episode ended: the value a step returns when it ends the episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Exit {
    /// The trajectory's exit reason.
    pub reason: ExitReason,
    /// What happened, in words (e.g. the model error).
    pub detail: Option<String>,
}

impl Exit {
    fn new(reason: ExitReason, detail: Option<String>) -> Self {
        Self { reason, detail }
    }
}

/// One episode between its steps: the conversation as the agent keeps it, the counters the
/// limits read, and the totals so far. Made by [`Agent::begin`], advanced by
/// [`Agent::step`] (or [`Agent::prompt`] then [`Agent::take_reply`] when the reply comes
/// from outside, as in a gym environment).
pub struct Episode {
    trajectory_id: String,
    context: ContextPolicy,
    /// The tool schemas each request carries (native function calling), else `None`.
    tools: Option<Vec<serde_json::Value>>,
    started: Instant,
    /// Every message, each assistant turn with its reasoning in `reasoning_content`.
    conversation: Vec<Message>,
    /// The last request's step index and messages (what the next step's record is a
    /// delta against).
    sent_before: Option<(usize, Vec<Message>)>,
    budget: FormatErrorBudget,
    recent_calls: VecDeque<String>,
    /// The previous call's prompt and completion tokens, as the server counted them.
    context_tokens: u64,
    /// The totals so far; its exit reason is the final one once `exit` is set.
    totals: EpisodeEnd,
    exit: Option<Exit>,
}

impl Episode {
    /// The trajectory id the episode was begun with.
    pub fn trajectory_id(&self) -> &str {
        &self.trajectory_id
    }

    /// The conversation as the agent keeps it (every turn's reasoning in its
    /// `reasoning_content`; what the model is sent is [`Agent::prompt`]'s).
    pub fn conversation(&self) -> &[Message] {
        &self.conversation
    }

    /// The context policy of this trajectory (its reasoning window drawn).
    pub fn context_policy(&self) -> ContextPolicy {
        self.context
    }

    /// Why the episode ended, once it has.
    pub fn exit(&self) -> Option<&Exit> {
        self.exit.as_ref()
    }

    /// The steps taken so far.
    pub fn steps(&self) -> usize {
        self.totals.steps
    }

    /// The totals so far; the exit reason and detail are the episode's once it has ended
    /// (before, the exit reason is `max_steps` and the detail empty).
    pub fn end(&self) -> EpisodeEnd {
        self.totals.clone()
    }

    fn finish(&mut self, exit: Exit) -> Exit {
        self.totals.exit_reason = exit.reason;
        self.totals.detail = exit.detail.clone();
        self.exit = Some(exit.clone());
        exit
    }
}

/// The request of an episode's next turn.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The step it opens (from 0).
    pub index: usize,
    /// The messages the model is sent: the conversation under the context policy.
    pub messages: Vec<Message>,
    /// The request made of them: chat messages (with the tools for native function
    /// calling), or the prompt a chat template renders in prompt-rendered mode.
    pub request: ModelRequest,
}

/// What one step did.
#[derive(Debug)]
pub struct Stepped {
    /// The step's record (none when the episode ended before a reply: a limit, a prompt
    /// that does not render, a model error).
    pub step: Option<Step>,
    /// The end of the episode, when this step ended it.
    pub exit: Option<Exit>,
    /// Whether the step's tool reported an error.
    pub tool_error: bool,
}

/// One format, one set of prompts and limits (and a chat template in prompt-rendered mode),
/// ready to run episodes: [`Agent::run`] is the loop over [`Agent::step`], the one step every
/// front end takes.
pub struct Agent<'a> {
    /// How tool calls are offered to the model and read from its replies.
    pub format: &'a dyn ToolFormat,
    /// The system, instance and step-hint templates.
    pub prompts: &'a Prompts,
    /// Step and cost limits, context policy, token capture.
    pub config: &'a AgentConfig,
    /// Prompt-rendered mode: each request is the prompt this model's chat template renders
    /// (for raw `/completions`); `None` sends chat requests.
    pub renderer: Option<&'a ChatModel>,
}

impl Agent<'_> {
    /// The system and instance messages for `task`, given the toolbox's tools.
    pub fn opening(
        &self,
        task: &Task,
        toolbox: &Toolbox,
        workdir: &str,
    ) -> Result<Vec<Message>, AgentError> {
        opening(
            self.format,
            self.prompts,
            self.config,
            task,
            &self.tool_specs(toolbox),
            workdir,
        )
    }

    /// Runs one episode of `model` from `opening`, appending each step to `writer`.
    /// `trajectory_id` is sent as each request's `X-Session-ID` and fixes a random
    /// reasoning window (see [`ReasoningConfig::policy`]).
    pub async fn run(
        &self,
        model: &dyn Model,
        opening: Vec<Message>,
        toolbox: &mut Toolbox,
        writer: &mut TrajectoryWriter,
        trajectory_id: &str,
    ) -> Result<EpisodeEnd, AgentError> {
        let mut episode = self.begin(opening, toolbox, trajectory_id);
        loop {
            let stepped = self.step(model, &mut episode, toolbox).await?;
            if let Some(step) = &stepped.step {
                append(writer, step)?;
            }
            if stepped.exit.is_some() {
                return Ok(episode.end());
            }
        }
    }

    /// An episode from `opening` over `toolbox`'s tools, its reasoning window drawn for
    /// `trajectory_id`.
    pub fn begin(&self, opening: Vec<Message>, toolbox: &Toolbox, trajectory_id: &str) -> Episode {
        Episode {
            trajectory_id: trajectory_id.to_owned(),
            context: self.config.reasoning.policy(trajectory_id),
            tools: self.format.render(&self.tool_specs(toolbox)).tools,
            started: Instant::now(),
            conversation: opening,
            sent_before: None,
            budget: FormatErrorBudget::new(self.config.max_format_errors as usize),
            recent_calls: VecDeque::new(),
            context_tokens: 0,
            totals: EpisodeEnd {
                exit_reason: ExitReason::MaxSteps,
                detail: None,
                steps: 0,
                usage: Usage::default(),
                cost: 0.0,
                subagent_usage: Usage::default(),
                subagent_cost: 0.0,
                timings: Timings::default(),
            },
            exit: None,
        }
    }

    /// The one step: the next prompt, `model`'s reply to it, then [`Agent::take_reply`].
    pub async fn step(
        &self,
        model: &dyn Model,
        episode: &mut Episode,
        toolbox: &mut Toolbox,
    ) -> Result<Stepped, AgentError> {
        let prompt = match self.prompt(episode) {
            Ok(prompt) => prompt,
            Err(exit) => return Ok(ended(exit)),
        };
        match model.complete(&prompt.request).await {
            Ok(response) => self.take_reply(episode, prompt, &response, toolbox),
            Err(error) => {
                tracing::warn!(step = prompt.index, "model call failed: {error}");
                let reason = match error {
                    ModelError::ContextLength { .. } => ExitReason::ContextLimit,
                    _ => ExitReason::ModelError,
                };
                Ok(ended(
                    episode.finish(Exit::new(reason, Some(error.to_string()))),
                ))
            }
        }
    }

    /// The next turn's prompt, or why the episode ends before it: it has ended already, the
    /// step count or another limit is reached, or the prompt does not render.
    pub fn prompt(&self, episode: &mut Episode) -> Result<Prompt, Exit> {
        if let Some(exit) = &episode.exit {
            return Err(exit.clone());
        }
        let index = episode.totals.steps;
        if index >= self.config.max_steps as usize {
            return Err(episode.finish(Exit::new(ExitReason::MaxSteps, None)));
        }
        if let Some(reason) = self.limit_reached(episode) {
            tracing::info!(reason = reason.as_str(), "limit reached");
            return Err(episode.finish(Exit::new(reason, None)));
        }
        let messages = episode.context.apply(&episode.conversation);
        let mut request = match self.request(&messages, &episode.tools) {
            Ok(request) => request.with_session_id(&episode.trajectory_id),
            Err(error) => {
                tracing::error!(step = index, "cannot render the prompt: {error}");
                let detail = format!("cannot render the prompt: {error}");
                return Err(episode.finish(Exit::new(ExitReason::Error, Some(detail))));
            }
        };
        if self.config.capture_tokens {
            request = request.capturing_tokens();
        }
        Ok(Prompt {
            index,
            messages,
            request,
        })
    }

    /// Takes `response` as the reply to `prompt` (from [`Agent::prompt`] on the same
    /// episode): records it, reads it with the format (and the reasoning structure when
    /// required), runs its call through `toolbox` (interceptors included) on a blocking
    /// section, or tells the model what is wrong with it; the step's record, and the end
    /// when this step ended the episode.
    pub fn take_reply(
        &self,
        episode: &mut Episode,
        prompt: Prompt,
        response: &ModelResponse,
        toolbox: &mut Toolbox,
    ) -> Result<Stepped, AgentError> {
        let reply = reply::read(self.format, &self.config.reasoning, response);
        self.take(episode, prompt, response, reply, toolbox)
    }

    /// Takes `call`, given as is (a gym's structured action), as the reply to `prompt`: the
    /// reply recorded and kept in the conversation is the call as the format writes it, and
    /// the call run is `call` itself, not that text read back (reading normalizes: R2E-Gym's
    /// XML strips every value, so a file written through it would lose its last newline).
    /// Otherwise as [`Agent::take_reply`]; no reasoning structure is required of a given
    /// call.
    pub fn take_call(
        &self,
        episode: &mut Episode,
        prompt: Prompt,
        call: ToolCall,
        toolbox: &mut Toolbox,
    ) -> Result<Stepped, AgentError> {
        let (response, reply) = reply::given(self.format, call);
        self.take(episode, prompt, &response, reply, toolbox)
    }

    /// Records `response`, read as `reply`, as the reply to `prompt`, and runs its call or
    /// tells the model what is wrong with it.
    fn take(
        &self,
        episode: &mut Episode,
        prompt: Prompt,
        response: &ModelResponse,
        reply: reply::Reply,
        toolbox: &mut Toolbox,
    ) -> Result<Stepped, AgentError> {
        let index = prompt.index;
        episode.context_tokens = response.usage.prompt_tokens + response.usage.completion_tokens;
        let mut step = record_response(index, response, &prompt.messages, &episode.sent_before);
        episode.sent_before = Some((index, prompt.messages));
        let totals = &mut episode.totals;
        totals.steps += 1;
        totals.usage += response.usage;
        totals.cost += response.cost;
        *totals.timings.model_seconds.get_or_insert(0.0) += response.latency.as_secs_f64();

        step.reasoning = reply.reasoning;
        step.digest = reply.digest;
        episode.conversation.push(reply.message);
        let (exit, tool_error) = match reply.call {
            Ok(parsed) => self.run_call(episode, &mut step, parsed, response, toolbox)?,
            Err(rejection) => (Self::reject(episode, &mut step, rejection), false),
        };
        let exit = exit.map(|exit| episode.finish(exit));
        Ok(Stepped {
            step: Some(step),
            exit,
            tool_error,
        })
    }

    /// Runs the call of a readable reply, recording it and its observation in `step`; the
    /// end when it ended the episode, and whether the tool reported an error.
    fn run_call(
        &self,
        episode: &mut Episode,
        step: &mut Step,
        parsed: ParsedResponse,
        response: &ModelResponse,
        toolbox: &mut Toolbox,
    ) -> Result<(Option<Exit>, bool), AgentError> {
        episode.budget.record_success();
        let started_tool = Instant::now();
        let result = match self.recall(&parsed.call, &episode.conversation) {
            Some(recalled) => recalled,
            None => tokio::task::block_in_place(|| toolbox.call(&parsed.call)),
        };
        step.subagents = toolbox.take_subagents();
        let totals = &mut episode.totals;
        for subagent in &step.subagents {
            totals.subagent_usage += subagent.usage();
            totals.subagent_cost += subagent.cost();
        }
        let env_seconds = started_tool.elapsed().as_secs_f64();
        step.timings.env_seconds = Some(env_seconds);
        *totals.timings.env_seconds.get_or_insert(0.0) += env_seconds;
        let mut observation = result.observation.clone();
        if let Some(note) = &parsed.note {
            observation = format!("{note}\n{observation}");
        }
        let remaining = self.config.max_steps.saturating_sub(step.index as u32 + 1);
        if !result.done
            && let Some(hint) = self.prompts.step_hint(remaining)?
        {
            observation = format!("{observation}\n{hint}");
        }
        episode.conversation.push(result_message(
            self.format
                .render_result(&observation, parsed.call_id.as_deref()),
        ));
        tracing::info!(
            step = step.index,
            tool = %parsed.call.name,
            model_seconds = response.latency.as_secs_f64(),
            env_seconds,
            prompt_tokens = response.usage.prompt_tokens,
            completion_tokens = response.usage.completion_tokens,
            "step"
        );
        step.tool_call = Some(parsed.call);
        step.call_text = Some(parsed.call_text.clone());
        step.observation = Some(observation);
        if result.done {
            return Ok((
                Some(Exit::new(ExitReason::Submitted, None)),
                result.is_error,
            ));
        }
        Ok((self.repeating(episode, parsed.call_text), result.is_error))
    }

    /// Notes `call_text` as the latest call; the end when it makes `max_repeats` the same
    /// in a row.
    fn repeating(&self, episode: &mut Episode, call_text: String) -> Option<Exit> {
        let max_repeats = self.config.max_repeats as usize;
        let recent = &mut episode.recent_calls;
        recent.push_back(call_text);
        if recent.len() > max_repeats {
            recent.pop_front();
        }
        let repeated = max_repeats > 0
            && recent.len() == max_repeats
            && recent.iter().all(|call| *call == recent[0]);
        repeated.then(|| {
            let detail = format!("the same call {max_repeats} times in a row");
            Exit::new(ExitReason::Repeating, Some(detail))
        })
    }

    /// Records a reply that cannot be read: the model is told why (and the end when too
    /// many came in a row), or the episode ends at once when the error's policy says so.
    fn reject(episode: &mut Episode, step: &mut Step, rejection: Rejection) -> Option<Exit> {
        tracing::warn!(step = step.index, "format error: {}", rejection.text);
        step.format_error = Some(rejection.text.clone());
        episode.recent_calls.clear();
        if let Some(detail) = rejection.ends_episode {
            return Some(Exit::new(ExitReason::FormatErrors, Some(detail)));
        }
        episode.conversation.push(result_message(rejection.told));
        step.observation = Some(rejection.text);
        let budget = &mut episode.budget;
        budget.record_error().then(|| {
            let detail = format!(
                "{} replies in a row without a valid tool call",
                budget.consecutive()
            );
            Exit::new(ExitReason::FormatErrors, Some(detail))
        })
    }

    /// The schemas of the tools the model is offered: the toolbox's (its interceptors'
    /// included), and `recall_thought` when it is on.
    pub fn tool_specs(&self, toolbox: &Toolbox) -> Vec<serde_json::Value> {
        let mut specs = toolbox.tool_specs();
        if self.config.reasoning.recall_thought {
            specs.push(recall::spec());
        }
        specs
    }

    /// The result of `call` when it is `recall_thought` and the tool is on: the reasoning of
    /// the steps it names, from `conversation` (which holds the current turn already).
    fn recall(&self, call: &ToolCall, conversation: &[Message]) -> Option<ToolResult> {
        if !self.config.reasoning.recall_thought || call.name != recall::NAME {
            return None;
        }
        let recalled = recall::recall(conversation, call);
        Some(ToolResult {
            output: recalled.text.clone(),
            error_code: if recalled.is_error { "-1" } else { "0" }.to_owned(),
            done: false,
            is_error: recalled.is_error,
            observation: recalled.text,
            submission: None,
        })
    }

    /// The request for the messages `sent`: a chat request (with `tools` for native function
    /// calling), or in prompt-rendered mode the prompt the chat template renders from them.
    fn request(
        &self,
        sent: &[Message],
        tools: &Option<Vec<serde_json::Value>>,
    ) -> Result<ModelRequest, swerve_chat::Error> {
        let Some(renderer) = self.renderer else {
            let request = ModelRequest::chat(sent.to_vec());
            return Ok(match tools {
                Some(tools) => request.with_tools(tools.clone()),
                None => request,
            });
        };
        let mut options = RenderOptions::default().generation_prompt(true);
        if let Some(tools) = tools {
            options = options.tools(tools.clone());
        }
        Ok(ModelRequest::prompt(renderer.render(sent, &options)?))
    }

    /// The limit `episode` has reached, if any.
    fn limit_reached(&self, episode: &Episode) -> Option<ExitReason> {
        let config = self.config;
        let totals = &episode.totals;
        if config.max_wall_secs.is_some_and(|limit| {
            episode.started.elapsed() >= Duration::from_secs_f64(limit.max(0.0))
        }) {
            return Some(ExitReason::TimeLimit);
        }
        if config
            .max_cost
            .is_some_and(|limit| totals.cost + totals.subagent_cost >= limit)
        {
            return Some(ExitReason::CostLimit);
        }
        if config
            .max_context_tokens
            .is_some_and(|limit| episode.context_tokens >= limit)
        {
            return Some(ExitReason::ContextLimit);
        }
        let tokens = totals.usage.prompt_tokens + totals.usage.completion_tokens;
        if config.max_total_tokens.is_some_and(|limit| tokens >= limit) {
            return Some(ExitReason::TokenLimit);
        }
        None
    }
}
/// A step holding what the model was sent and what it answered (the loop adds how the
/// answer was read).
fn record_response(
    index: usize,
    response: &ModelResponse,
    sent: &[Message],
    before: &Option<(usize, Vec<Message>)>,
) -> Step {
    let mut step = Step::new(index, response.content.clone());
    step.messages_sent = Some(match before {
        Some((base, base_messages)) => MessagesSent::delta(Some(*base), base_messages, sent),
        None => MessagesSent::delta(None, &[], sent),
    });
    step.usage = Some(response.usage);
    step.cost = Some(response.cost);
    step.timings.model_seconds = Some(response.latency.as_secs_f64());
    if let (Some(prompt_ids), Some(completion_ids)) =
        (&response.prompt_token_ids, &response.completion_token_ids)
    {
        step.tokens = Some(TokenCapture {
            prompt_ids: prompt_ids.clone(),
            completion_ids: completion_ids.clone(),
            logprobs: response.logprobs.clone(),
        });
    }
    step
}

/// The system and instance messages for `task` under `config`, offering the tools whose
/// schemas are `tools` as `format` describes them.
pub fn opening(
    format: &dyn ToolFormat,
    prompts: &Prompts,
    config: &AgentConfig,
    task: &Task,
    tools: &[serde_json::Value],
    workdir: &str,
) -> Result<Vec<Message>, AgentError> {
    let rendered = format.render(tools);
    let context = PromptContext {
        problem_statement: &task.problem_statement,
        repo: &task.repo,
        instance_id: &task.instance_id,
        workdir,
        tool_documentation: rendered.system_text.as_deref().unwrap_or(""),
        max_steps: config.max_steps,
    };
    Ok(vec![
        Message::new(Role::System, prompts.system(&context)?),
        Message::new(Role::User, prompts.instance(&context)?),
    ])
}

/// The message a format's tool result is sent as.
pub(crate) fn result_message(result: ResultMessage) -> Message {
    let role = match result.role {
        ResultRole::User => Role::User,
        ResultRole::Tool => Role::Tool,
    };
    let mut message = Message::new(role, result.content);
    message.tool_call_id = result.tool_call_id;
    message
}

/// A step that ended the episode before a reply.
fn ended(exit: Exit) -> Stepped {
    Stepped {
        step: None,
        exit: Some(exit),
        tool_error: false,
    }
}

/// Appends `step` to the trajectory (a write and `fdatasync`) on a blocking section, so the
/// disk's latency does not stall the runtime's other rollouts.
fn append(writer: &mut TrajectoryWriter, step: &Step) -> Result<(), TrajectoryError> {
    tokio::task::block_in_place(|| writer.append_step(step))
}
