//! Gym-style environments over a task, driven from outside one step at a time (`swerve
//! serve`'s `/v1/envs`, the Python `swerve.Env`): [`GymEnv::open`] makes the task's
//! sandboxed workspace and tools and the opening messages; [`GymEnv::step`] runs a tool
//! call, given or parsed from a model's reply with the configured format; [`GymEnv::patch`]
//! is the workspace's diff; [`grade`] grades it (in a fresh workspace, the
//! environment stays as it is) and says whether it earns a reward.
//!
//! Commands always run in the sandbox here (`run.env = "world"` applies to rollouts only).
//! Results are JSON objects, the same for every front end.

use std::path::Path;

use anyhow::Result;
use serde_json::{Value, json};
use swerve_agent::episode::opening;
use swerve_agent::prompt::Prompts;
use swerve_core::{Task, ToolCall};
use swerve_eval::grader::{Grade, Grader};
use swerve_sandbox::Workspace;
use swerve_tools::Toolbox;
use swerve_tools::formats::{ModelOutput, NativeToolCall, ToolFormat};

use crate::config::Config;
use crate::open;

/// What the agent does in one step.
#[derive(Debug, Clone)]
pub enum Action {
    /// A tool call, as is.
    Call(ToolCall),
    /// A model's reply: its text (`message.content`) and native tool calls
    /// (`message.tool_calls`, OpenAI's objects), read with the configured format.
    Reply {
        /// The reply's text.
        text: String,
        /// Its native tool calls.
        tool_calls: Vec<Value>,
    },
}

/// A step was refused: the environment is done.
#[derive(Debug, Clone, thiserror::Error)]
#[error("environment {id:?} is done (the agent called finish): evaluate or delete it")]
pub struct Done {
    /// The environment's id.
    pub id: String,
}

/// A task's workspace and tools, under the configuration it was opened with.
pub struct GymEnv {
    id: String,
    task: Task,
    config: Config,
    format: Box<dyn ToolFormat>,
    workspace: Workspace,
    toolbox: Toolbox,
    opening: Value,
    done: bool,
}

impl GymEnv {
    /// Opens `task` (loaded from `task_file`, whose location finds its repository) under
    /// `config`, as environment `id`. Blocks while the workspace is made (the task's
    /// environment is built on first use, then cached).
    pub fn open(id: String, config: Config, task_file: &Path, task: Task) -> Result<Self> {
        let format = config.format()?;
        let prompts = Prompts::new(&config.prompts)?;
        let cache = config.cache()?;
        let workspace = open::workspace(&config, &cache, task_file, &task)?;
        let toolbox = open::toolbox(&config, &workspace);
        let tools = swerve_tools::tool_specs(toolbox.config());
        let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
        let messages = opening(
            format.as_ref(),
            &prompts,
            &config.agent,
            &task,
            &tools,
            &mount_point,
        )?;
        let rendered = format.render(&tools);
        let opening = json!({
            "id": id,
            "instance_id": task.instance_id,
            "format": format.name(),
            "messages": messages,
            "tools": rendered.tools,
            "tool_specs": tools,
            "max_steps": config.agent.max_steps,
        });
        Ok(Self {
            id,
            task,
            config,
            format,
            workspace,
            toolbox,
            opening,
            done: false,
        })
    }

    /// The opening: `id`, `instance_id`, `format`, `messages` (the system and first user
    /// messages), `tools` (as the format hands them to the model: OpenAI tool objects for
    /// the native format, else none), `tool_specs` and `max_steps`.
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
        &self.config
    }

    /// Whether the agent called `finish`.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Runs `action`: `observation`, `done`, `is_error`, `format_error` (the reason a reply
    /// could not be read, then no tool ran and the observation tells the model how to
    /// answer), `call` and `message` (the observation as the chat message the format sends
    /// back). Blocks while the tool runs.
    pub fn step(&mut self, action: Action) -> Result<Value, Done> {
        if self.done {
            return Err(Done {
                id: self.id.clone(),
            });
        }
        let (call, call_id) = match action {
            Action::Call(call) => (call, None),
            Action::Reply { text, tool_calls } => {
                let output = ModelOutput {
                    text,
                    tool_calls: tool_calls.iter().map(NativeToolCall::from_openai).collect(),
                };
                match self.format.parse(&output) {
                    Ok(parsed) => (parsed.call, parsed.call_id),
                    Err(error) => {
                        let told = self.format.render_error(&error);
                        return Ok(json!({
                            "observation": told.content,
                            "done": false,
                            "is_error": false,
                            "format_error": error.to_string(),
                            "call": null,
                            "message": told.to_openai(),
                        }));
                    }
                }
            }
        };
        let result = self.toolbox.call(&call);
        self.done = result.done;
        let rendered = self
            .format
            .render_result(&result.observation, call_id.as_deref());
        Ok(json!({
            "observation": result.observation,
            "done": result.done,
            "is_error": result.is_error,
            "format_error": null,
            "call": {"name": call.name, "arguments": call.arguments},
            "message": rendered.to_openai(),
        }))
    }

    /// The workspace's patch against the task's base commit (empty when nothing changed).
    /// Blocks.
    pub fn patch(&self) -> Result<String> {
        Ok(self.workspace.patch(&self.config.patch)?.diff)
    }

    /// Destroys the workspace (also done when the environment is dropped, with the error
    /// only logged).
    pub fn destroy(self) -> Result<()> {
        Ok(self.workspace.destroy()?)
    }
}

/// Grades `patch` (environment `id`'s, from [`GymEnv::patch`]) for `task` with `grader`:
/// `id`, `instance_id`, `reward` (see [`reward_of`]), `resolved`, `patch` and `report`.
/// Grading runs in a fresh workspace; the environment stays as it is.
pub async fn grade(grader: &dyn Grader, task: &Task, id: &str, patch: &str) -> Value {
    let grade = grader
        .grade(
            task,
            Some(patch).filter(|patch| !patch.is_empty()),
            Some(id),
        )
        .await;
    json!({
        "id": id,
        "instance_id": task.instance_id,
        "reward": reward_of(&grade),
        "resolved": grade.resolved(),
        "patch": patch,
        "report": grade.to_json(),
    })
}

/// The reward a grade earns: its score (1 resolved, 0 not, or the reward model's), or
/// `None` when grading failed for a reason that is not the model's (the machinery: an
/// `infra` error), so the rollout is left out of training rather than counted as a failure.
pub fn reward_of(grade: &Grade) -> Option<f64> {
    if swerve_train::reward::infra_failure(&grade.to_json()) {
        return None;
    }
    Some(grade.score.unwrap_or(0.0))
}
