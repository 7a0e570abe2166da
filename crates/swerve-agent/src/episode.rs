//! The agent loop: one rollout of a model on a task, written to its trajectory step by step.
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
use swerve_tools::formats::{FormatErrorBudget, ResultMessage, ResultRole, ToolFormat};
use swerve_tools::{ToolResult, Toolbox};

use swerve_chat::{ChatModel, RenderOptions};

use crate::prompt::{PromptContext, PromptError, Prompts};
use crate::reasoning::{ReasoningConfig, recall};
use crate::reply;

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

/// One model, one format, one set of prompts and limits, ready to run episodes.
pub struct Agent<'a> {
    /// The model that answers each step.
    pub model: &'a dyn Model,
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

    /// Runs one episode from `opening`, appending each step to `writer`. `trajectory_id`
    /// is sent as each request's `X-Session-ID` and fixes a random reasoning window (see
    /// [`ReasoningConfig::policy`]).
    pub async fn run(
        &self,
        opening: Vec<Message>,
        toolbox: &mut Toolbox,
        writer: &mut TrajectoryWriter,
        trajectory_id: &str,
    ) -> Result<EpisodeEnd, AgentError> {
        let tools = self.format.render(&self.tool_specs(toolbox)).tools;
        let context = self.config.reasoning.policy(trajectory_id);
        let started = Instant::now();
        let mut messages = opening;
        let mut sent_before: Option<(usize, Vec<Message>)> = None;
        let mut budget = FormatErrorBudget::new(self.config.max_format_errors as usize);
        let mut recent_calls: VecDeque<String> = VecDeque::new();
        let mut context_tokens = 0;
        let mut end = EpisodeEnd {
            exit_reason: ExitReason::MaxSteps,
            detail: None,
            steps: 0,
            usage: Usage::default(),
            cost: 0.0,
            subagent_usage: Usage::default(),
            subagent_cost: 0.0,
            timings: Timings::default(),
        };
        for index in 0..self.config.max_steps as usize {
            if let Some(reason) = self.limit_reached(&end, context_tokens, started) {
                end.exit_reason = reason;
                tracing::info!(reason = reason.as_str(), "limit reached");
                return Ok(end);
            }
            let sent = context.apply(&messages);
            let mut request = match self.request(&sent, &tools) {
                Ok(request) => request.with_session_id(trajectory_id),
                Err(error) => {
                    end.exit_reason = ExitReason::Error;
                    tracing::error!(step = index, "cannot render the prompt: {error}");
                    end.detail = Some(format!("cannot render the prompt: {error}"));
                    return Ok(end);
                }
            };
            if self.config.capture_tokens {
                request = request.capturing_tokens();
            }
            let response = match self.model.complete(&request).await {
                Ok(response) => response,
                Err(error) => {
                    end.exit_reason = match error {
                        ModelError::ContextLength { .. } => ExitReason::ContextLimit,
                        _ => ExitReason::ModelError,
                    };
                    tracing::warn!(step = index, "model call failed: {error}");
                    end.detail = Some(error.to_string());
                    return Ok(end);
                }
            };
            context_tokens = response.usage.prompt_tokens + response.usage.completion_tokens;
            let mut step = self.record_response(index, &response, &sent, &sent_before);
            sent_before = Some((index, sent));
            end.steps += 1;
            end.usage += response.usage;
            end.cost += response.cost;
            *end.timings.model_seconds.get_or_insert(0.0) += response.latency.as_secs_f64();

            let reply = reply::read(self.format, &self.config.reasoning, &response);
            step.reasoning = reply.reasoning;
            step.digest = reply.digest;
            messages.push(reply.message);
            match reply.call {
                Ok(parsed) => {
                    budget.record_success();
                    let started_tool = Instant::now();
                    let result = match self.recall(&parsed.call, &messages) {
                        Some(recalled) => recalled,
                        None => tokio::task::block_in_place(|| toolbox.call(&parsed.call)),
                    };
                    step.subagents = toolbox.take_subagents();
                    for subagent in &step.subagents {
                        end.subagent_usage += subagent.usage();
                        end.subagent_cost += subagent.cost();
                    }
                    let env_seconds = started_tool.elapsed().as_secs_f64();
                    step.timings.env_seconds = Some(env_seconds);
                    *end.timings.env_seconds.get_or_insert(0.0) += env_seconds;
                    let mut observation = result.observation.clone();
                    if let Some(note) = &parsed.note {
                        observation = format!("{note}\n{observation}");
                    }
                    let remaining = self.config.max_steps.saturating_sub(index as u32 + 1);
                    if !result.done
                        && let Some(hint) = self.prompts.step_hint(remaining)?
                    {
                        observation = format!("{observation}\n{hint}");
                    }
                    messages.push(result_message(
                        self.format
                            .render_result(&observation, parsed.call_id.as_deref()),
                    ));
                    tracing::info!(
                        step = index,
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
                    append(writer, &step)?;
                    if result.done {
                        end.exit_reason = ExitReason::Submitted;
                        return Ok(end);
                    }
                    recent_calls.push_back(parsed.call_text);
                    if recent_calls.len() > self.config.max_repeats as usize {
                        recent_calls.pop_front();
                    }
                    if self.config.max_repeats > 0
                        && recent_calls.len() == self.config.max_repeats as usize
                        && recent_calls.iter().all(|call| *call == recent_calls[0])
                    {
                        end.exit_reason = ExitReason::Repeating;
                        end.detail = Some(format!(
                            "the same call {} times in a row",
                            self.config.max_repeats
                        ));
                        return Ok(end);
                    }
                }
                Err(rejection) => {
                    tracing::warn!(step = index, "format error: {}", rejection.text);
                    step.format_error = Some(rejection.text.clone());
                    recent_calls.clear();
                    if let Some(detail) = rejection.ends_episode {
                        append(writer, &step)?;
                        end.exit_reason = ExitReason::FormatErrors;
                        end.detail = Some(detail);
                        return Ok(end);
                    }
                    messages.push(result_message(rejection.told));
                    step.observation = Some(rejection.text);
                    append(writer, &step)?;
                    if budget.record_error() {
                        end.exit_reason = ExitReason::FormatErrors;
                        end.detail = Some(format!(
                            "{} replies in a row without a valid tool call",
                            budget.consecutive()
                        ));
                        return Ok(end);
                    }
                }
            }
        }
        Ok(end)
    }

    /// The schemas of the tools the model is offered: the toolbox's (its interceptors'
    /// included), and `recall_thought` when it is on.
    fn tool_specs(&self, toolbox: &Toolbox) -> Vec<serde_json::Value> {
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

    /// The limit `end` has reached, if any.
    fn limit_reached(
        &self,
        end: &EpisodeEnd,
        context_tokens: u64,
        started: Instant,
    ) -> Option<ExitReason> {
        let config = self.config;
        if config
            .max_wall_secs
            .is_some_and(|limit| started.elapsed() >= Duration::from_secs_f64(limit.max(0.0)))
        {
            return Some(ExitReason::TimeLimit);
        }
        if config
            .max_cost
            .is_some_and(|limit| end.cost + end.subagent_cost >= limit)
        {
            return Some(ExitReason::CostLimit);
        }
        if config
            .max_context_tokens
            .is_some_and(|limit| context_tokens >= limit)
        {
            return Some(ExitReason::ContextLimit);
        }
        let tokens = end.usage.prompt_tokens + end.usage.completion_tokens;
        if config.max_total_tokens.is_some_and(|limit| tokens >= limit) {
            return Some(ExitReason::TokenLimit);
        }
        None
    }

    /// A step holding what the model was sent and what it answered (the loop adds how the
    /// answer was read).
    fn record_response(
        &self,
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

/// Appends `step` to the trajectory (a write and `fdatasync`) on a blocking section, so the
/// disk's latency does not stall the runtime's other rollouts.
fn append(writer: &mut TrajectoryWriter, step: &Step) -> Result<(), TrajectoryError> {
    tokio::task::block_in_place(|| writer.append_step(step))
}
