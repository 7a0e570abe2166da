//! Trainers' prompt datasets (`swerve data prompts`): one row per task holding the opening
//! messages an environment of it starts with (the system and first user message, as
//! [`crate::gym::GymEnv`] renders them under the same configuration) and the task's id
//! where each trainer looks for it:
//!
//! - **verl** (`RLHFDataset`, `data.train_files`): `data_source`, `prompt`, `ability`,
//!   `agent_name` (the agent loop to run, `swerve`), `reward_model` and `extra_info`
//!   (`task_id`, `index`), which verl passes to the agent loop;
//! - **skyrl** (`PromptDataset`): `prompt`, `env_class` (`swerve`) and `task_id`, which
//!   SkyRL hands to the environment in its extras;
//! - **openrlhf** (`--input_key prompt --label_key label --apply_chat_template`): `prompt`
//!   and `label` (the task id the reward endpoint grades against).

use anyhow::Result;
use serde_json::{Value, json};
use swerve_agent::episode::opening;
use swerve_agent::prompt::Prompts;
use swerve_core::Task;

use crate::config::Config;

/// The environment and agent-loop name the rows point the trainers to.
pub const NAME: &str = "swerve";

/// Which trainer's prompt dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptFormat {
    /// verl's RL dataset.
    Verl,
    /// SkyRL's prompt dataset.
    Skyrl,
    /// OpenRLHF's prompt dataset.
    Openrlhf,
}

/// The prompt rows of `tasks` under `config`, in order.
pub fn prompt_rows(config: &Config, tasks: &[Task], format: PromptFormat) -> Result<Vec<Value>> {
    let tool_format = config.format()?;
    let prompts = Prompts::new(&config.prompts)?;
    let tools = swerve_tools::tool_specs(&config.tools);
    let mount_point = config.sandbox.mount_point.to_string_lossy().into_owned();
    tasks
        .iter()
        .enumerate()
        .map(|(index, task)| {
            let messages = opening(
                tool_format.as_ref(),
                &prompts,
                &config.agent,
                task,
                &tools,
                &mount_point,
            )?;
            let id = &task.instance_id;
            Ok(match format {
                PromptFormat::Verl => json!({
                    "data_source": NAME,
                    "prompt": messages,
                    "ability": "software-engineering",
                    "agent_name": NAME,
                    "reward_model": {"style": "rule", "ground_truth": id},
                    "extra_info": {"task_id": id, "index": index},
                }),
                PromptFormat::Skyrl => json!({
                    "prompt": messages,
                    "env_class": NAME,
                    "task_id": id,
                    "data_source": NAME,
                }),
                PromptFormat::Openrlhf => json!({"prompt": messages, "label": id}),
            })
        })
        .collect()
}
