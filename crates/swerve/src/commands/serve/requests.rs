//! What requests carry and how the service reads it: the task (inline or by id), the
//! configuration a request runs under (the service's, with its `overrides`), and ids.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value};
use swerve_core::Task;
use swerve_core::task::parse_tasks;

use super::errors::ApiError;
use swerve_rollout::config::Config;
use swerve_rollout::config::layers::{self, Layer};
use swerve_rollout::config::serve::ServeSection;

/// `POST /v1/rollouts`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutRequest {
    /// The task as a SWE-bench row (or swerve task JSON); or give `task_id`.
    pub task: Option<Value>,
    /// The `instance_id` of a task of the service's task file (`serve.tasks`).
    pub task_id: Option<String>,
    /// The OpenAI-compatible endpoint, e.g. `http://127.0.0.1:8000/v1` (not needed for
    /// `replay`).
    #[serde(default)]
    pub base_url: String,
    /// The served model's name (`replay` replays the task's demonstration).
    pub model: String,
    /// Sampling parameters; unset ones are the configuration's.
    #[serde(default)]
    pub sampling: swerve_llm::Sampling,
    /// The rollout's id: its trajectory's name and its requests' `X-Session-ID`.
    pub session_id: Option<String>,
    /// Dotted configuration keys (as `--set` takes them) and their values.
    #[serde(default)]
    pub overrides: Map<String, Value>,
    /// Grade the patch and answer with the reward (default true).
    #[serde(default = "yes")]
    pub evaluate: bool,
}

fn yes() -> bool {
    true
}

/// `POST /v1/envs`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvRequest {
    pub task: Option<Value>,
    pub task_id: Option<String>,
    /// The environment's id (default: a new one).
    pub session_id: Option<String>,
    #[serde(default)]
    pub overrides: Map<String, Value>,
}

/// `POST /v1/envs/{id}/step`: a tool call, or a model's raw reply parsed with the
/// configured tool-call format.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRequest {
    pub call: Option<swerve_core::ToolCall>,
    /// The reply's text (`message.content`).
    pub text: Option<String>,
    /// The reply's native tool calls (`message.tool_calls`), for the native format.
    #[serde(default)]
    pub tool_calls: Vec<Value>,
    /// The reply's reasoning channel (`message.reasoning_content`).
    #[serde(default)]
    pub reasoning_content: Option<String>,
    /// The reply's token ids, as sampled (the step's training sample uses them).
    #[serde(default)]
    pub response_ids: Option<Vec<u32>>,
    /// Their log-probabilities.
    #[serde(default)]
    pub logprobs: Option<Vec<f64>>,
}

/// `POST /v1/reward`: OpenRLHF's remote reward model request.
#[derive(Debug, Deserialize)]
pub struct RewardRequest {
    /// Prompt and response, one text per sample.
    pub query: Vec<String>,
    /// The prompts; each is cut from the front of its query when it starts it.
    #[serde(default)]
    pub prompts: Vec<String>,
    /// Each sample's task id (`instance_id` of the service's task file).
    pub labels: Vec<String>,
}

/// The tasks `task_id` is looked up in: the service's task file, by id.
pub struct TaskIndex {
    /// The file, or `None` when the service has none.
    pub file: Option<std::path::PathBuf>,
    tasks: HashMap<String, Task>,
}

impl TaskIndex {
    /// The tasks of `file` (`serve.tasks`), or none.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        let tasks = match file {
            Some(file) => swerve_rollout::open::tasks(file)?,
            None => Vec::new(),
        };
        Ok(Self {
            file: file.map(Path::to_path_buf),
            tasks: tasks
                .into_iter()
                .map(|task| (task.instance_id.clone(), task))
                .collect(),
        })
    }

    /// The task with `id`; `field` names the request field it came from.
    pub fn get(&self, id: &str, field: &str) -> Result<Task, ApiError> {
        let Some(file) = &self.file else {
            return Err(ApiError::bad_field(
                field,
                "the service has no task file (serve.tasks): send the task itself in `task`",
            ));
        };
        self.tasks.get(id).cloned().ok_or_else(|| {
            ApiError::bad_field(
                field,
                format!("no task with instance_id {id:?} in {}", file.display()),
            )
        })
    }

    /// The task a request names: inline (`task`) or by id (`task_id`), exactly one.
    pub fn resolve(&self, task: Option<&Value>, task_id: Option<&str>) -> Result<Task, ApiError> {
        match (task, task_id) {
            (Some(task), None) => inline_task(task),
            (None, Some(id)) => self.get(id, "task_id"),
            (Some(_), Some(_)) => Err(ApiError::bad_field(
                "task",
                "give either `task` or `task_id`, not both",
            )),
            (None, None) => Err(ApiError::bad_field(
                "task",
                "missing the task: give `task` (a SWE-bench row) or `task_id` (an instance_id of \
                 the service's task file)",
            )),
        }
    }
}

/// A task given inline, checked as a task file's record is.
fn inline_task(value: &Value) -> Result<Task, ApiError> {
    if !value.is_object() {
        return Err(ApiError::bad_field(
            "task",
            "`task` must be a JSON object (a SWE-bench row)",
        ));
    }
    let mut tasks = parse_tasks(&value.to_string(), "request field `task`")
        .map_err(|error| ApiError::bad_field("task", error.to_string()))?;
    match tasks.len() {
        1 => Ok(tasks.remove(0)),
        _ => Err(ApiError::bad_field("task", "`task` must be one task")),
    }
}

/// `config` with a request's `overrides` over it. Each key must be one the service lets
/// requests set (`serve.overridable`); values are JSON, set as `--set` sets them.
pub fn overridden(
    config: &Config,
    serve: &ServeSection,
    overrides: &Map<String, Value>,
) -> Result<Config, ApiError> {
    if overrides.is_empty() {
        return Ok(config.clone());
    }
    let mut assignments = Vec::new();
    for (key, value) in overrides {
        let field = format!("overrides.{key}");
        if !serve.may_override(key) {
            return Err(ApiError::bad_field(
                field,
                format!(
                    "`{key}` may not be set by a request; the service allows: {}",
                    serve.overridable.join(", ")
                ),
            ));
        }
        let value = toml::Value::try_from(value).map_err(|error| {
            ApiError::bad_field(
                field.clone(),
                format!("not a configuration value ({error}); null is not allowed"),
            )
        })?;
        assignments.push((key.clone(), value.to_string()));
    }
    let base = toml::Table::try_from(config)
        .map_err(|error| ApiError::internal(&anyhow::anyhow!("{error}")))?;
    let layers = [
        Layer {
            origin: "the service's configuration".into(),
            table: base,
        },
        Layer::assignments("request field `overrides`:", &assignments)
            .map_err(|error| ApiError::bad_field("overrides", format!("{error:#}")))?,
    ];
    layers::merge(&layers)
        .map(|(config, _)| config)
        .map_err(|error| ApiError::bad_field("overrides", format!("{error:#}")))
}

/// The longest id accepted.
const MAX_ID_BYTES: usize = 128;

/// `id` checked as a rollout or environment id: 1 to 128 letters, digits, `.`, `_` or `-`,
/// not starting with `.` (it names files).
pub fn checked_id(id: &str, field: &str) -> Result<String, ApiError> {
    let valid = !id.is_empty()
        && id.len() <= MAX_ID_BYTES
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid {
        return Ok(id.to_owned());
    }
    Err(ApiError::bad_field(
        field,
        format!(
            "{id:?} is not a usable id: use 1 to {MAX_ID_BYTES} letters, digits, '.', '_' or '-', \
             not starting with '.'"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn overrides_apply_as_set_does_and_unknown_or_forbidden_keys_are_named() {
        let config = Config::load(None).unwrap();
        let serve = ServeSection::default();
        let overrides = json!({"agent.max_steps": 7, "model.sampling.temperature": 0.5, "run.format": "hermes"});
        let changed = overridden(&config, &serve, overrides.as_object().unwrap()).unwrap();
        assert_eq!(changed.agent.max_steps, 7);
        assert_eq!(changed.model.sampling.temperature, Some(0.5));
        assert_eq!(changed.run.format, "hermes");

        let error = overridden(
            &config,
            &serve,
            json!({"sandbox.network": true}).as_object().unwrap(),
        )
        .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("overrides.sandbox.network"));

        let error = overridden(
            &config,
            &serve,
            json!({"agent.max_stepz": 3}).as_object().unwrap(),
        )
        .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("overrides"));
        assert!(error.message.contains("max_stepz"), "{}", error.message);

        let error = overridden(
            &config,
            &serve,
            json!({"agent.max_steps": "many"}).as_object().unwrap(),
        )
        .unwrap_err();
        assert!(error.message.contains("max_steps"), "{}", error.message);

        let error = overridden(
            &config,
            &serve,
            json!({"agent.max_steps": null}).as_object().unwrap(),
        )
        .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("overrides.agent.max_steps"));
    }

    #[test]
    fn ids_name_files_safely() {
        assert_eq!(
            checked_id("task-1__0.a", "session_id").unwrap(),
            "task-1__0.a"
        );
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(129)] {
            let error = checked_id(bad, "session_id").unwrap_err();
            assert_eq!(error.field.as_deref(), Some("session_id"));
        }
    }

    #[test]
    fn a_task_is_given_once() {
        let index = TaskIndex::load(None).unwrap();
        assert_eq!(
            index.resolve(None, None).unwrap_err().field.as_deref(),
            Some("task")
        );
        let error = index.resolve(None, Some("x")).unwrap_err();
        assert!(error.message.contains("no task file"), "{}", error.message);
        let error = index.resolve(Some(&json!([1])), None).unwrap_err();
        assert!(error.message.contains("JSON object"), "{}", error.message);
        let error = index
            .resolve(Some(&json!({"repo": "a/b"})), None)
            .unwrap_err();
        assert_eq!(error.field.as_deref(), Some("task"));
    }
}
