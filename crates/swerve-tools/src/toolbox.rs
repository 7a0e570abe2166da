//! [`Toolbox`]: one agent's tools over one workspace. It dispatches a [`ToolCall`] to the
//! right tool, keeps the editor's undo history, and returns the output, R2E-Gym's error
//! code and the rendered observation together. [`CallInterceptor`]s may answer a call
//! before it runs (SWE-World's router answers commands that run project code with a
//! transition model's prediction) and may add tools of their own (SWE-Edit's `llm_editor`,
//! whose subagent runs the toolbox hands on for the step's record).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use swerve_core::trajectory::SubTrajectory;
use swerve_core::{Shell, ToolCall};

use crate::config::ToolConfig;
use crate::config::Toolset;
use crate::file_editor::Editor;
use crate::fs::WorkspaceFs;
use crate::observation::{render_observation, strip_ansi_and_cr};
use crate::swe_agent::SweAgentState;
use crate::{bash, finish, search};

/// The result of one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// What the tool printed (R2E-Gym's `bash_output`), with ANSI colour codes and `\r`
    /// removed as R2E-Gym's runtime does.
    pub output: String,
    /// The runtime's error code: `0`, `Error: Exit code N`, or `-1` (timeout, failure to
    /// run, unknown tool). `file_editor` prints its errors and exits 0, as upstream.
    pub error_code: String,
    /// The call ended the episode (`finish`/`submit`).
    pub done: bool,
    /// The call failed: an `ERROR:` from a tool, a non-zero exit, a timeout, a blocked
    /// command, an unknown tool or a missing tool name.
    pub is_error: bool,
    /// The text the model sees (R2E-Gym `Observation.__str__`).
    pub observation: String,
    /// `finish`'s `result` argument, when given.
    pub submission: Option<String>,
}

/// Answers some calls instead of the tools.
pub trait CallInterceptor: Send + Sync {
    /// The result for `call`, or `None` to let the tool run it. `fs` is the workspace as it
    /// is now and `config` the tools' settings.
    fn intercept(
        &mut self,
        call: &ToolCall,
        fs: &WorkspaceFs,
        config: &ToolConfig,
    ) -> Option<ToolResult>;

    /// The schemas of the tools this interceptor answers itself, offered beside the native
    /// ones (none by default).
    fn tool_specs(&self) -> Vec<Value> {
        Vec::new()
    }

    /// The subagent runs behind the result [`CallInterceptor::intercept`] last returned,
    /// handed over once (none by default).
    fn take_subagents(&mut self) -> Vec<SubTrajectory> {
        Vec::new()
    }
}

/// The native tools of one workspace.
pub struct Toolbox {
    fs: WorkspaceFs,
    shell: Arc<dyn Shell>,
    config: ToolConfig,
    editor: Editor,
    /// SWE-agent's open file and window, for [`Toolset::SweAgent`].
    swe_agent: SweAgentState,
    interceptors: Vec<Box<dyn CallInterceptor>>,
    /// The subagent runs of the last call, until [`Toolbox::take_subagents`].
    subagents: Vec<SubTrajectory>,
}

impl Toolbox {
    /// Tools over `fs`, running commands through `shell`, with an empty undo history.
    pub fn new(fs: WorkspaceFs, shell: Arc<dyn Shell>, config: ToolConfig) -> Self {
        Self {
            fs,
            shell,
            config,
            editor: Editor::default(),
            swe_agent: SweAgentState::default(),
            interceptors: Vec::new(),
            subagents: Vec::new(),
        }
    }

    /// Lets `interceptor` answer calls before the tools run them (after the interceptors
    /// added before it) and offer its own tools.
    pub fn with_interceptor(mut self, interceptor: Box<dyn CallInterceptor>) -> Self {
        self.interceptors.push(interceptor);
        self
    }

    /// The schemas of the tools offered: the native ones the settings leave in
    /// ([`crate::tool_specs`]), then the interceptors' own.
    pub fn tool_specs(&self) -> Vec<Value> {
        let mut specs = crate::specs::tool_specs(&self.config);
        for interceptor in &self.interceptors {
            specs.extend(interceptor.tool_specs());
        }
        specs
    }

    /// The subagent runs behind the last call's result (SWE-Edit's viewer and editor),
    /// handed over once.
    pub fn take_subagents(&mut self) -> Vec<SubTrajectory> {
        std::mem::take(&mut self.subagents)
    }

    /// The settings in use.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// The workspace the tools work on.
    pub fn fs(&self) -> &WorkspaceFs {
        &self.fs
    }

    /// Runs one call. Never panics on bad input: problems come back as error observations.
    pub fn call(&mut self, call: &ToolCall) -> ToolResult {
        self.subagents.clear();
        for interceptor in &mut self.interceptors {
            if let Some(result) = interceptor.intercept(call, &self.fs, &self.config) {
                self.subagents = interceptor.take_subagents();
                return result;
            }
        }
        if self.config.toolset == Toolset::SweAgent {
            return self.call_swe_agent(call);
        }
        let offered = call.name.as_str();
        if self.config.rename.contains_key(offered) {
            // A renamed tool is not offered under its old name.
            let message = invalid_action(offered, &self.tool_specs());
            return ToolResult {
                output: message.clone(),
                error_code: "-1".to_owned(),
                done: false,
                is_error: true,
                observation: message,
                submission: None,
            };
        }
        let name = self.config.native_name(offered);
        let mut submission = None;
        let (output, error_code, is_error) = match name {
            "" => (String::new(), "0".to_owned(), true),
            "file_editor" if self.config.offers_file_editor() => {
                let result = self.editor.run(&self.fs, &self.config, call);
                (result.output, "0".to_owned(), result.is_error)
            }
            "search" => {
                let result = search::run(&self.fs, &self.config, call);
                let failed = result.exit_code != 0;
                (result.output, bash::error_code(result.exit_code), failed)
            }
            "execute_bash" => {
                let result = bash::run(self.shell.as_ref(), &self.config, call);
                (result.output, result.error_code, result.is_error)
            }
            "finish" | "submit" => {
                submission = finish::submission(call);
                (finish::FINISH_OUTPUT.to_owned(), "0".to_owned(), false)
            }
            unknown => {
                let message = invalid_action(unknown, &self.tool_specs());
                return ToolResult {
                    output: message.clone(),
                    error_code: "-1".to_owned(),
                    done: false,
                    is_error: true,
                    observation: message,
                    submission: None,
                };
            }
        };
        let output = strip_ansi_and_cr(&output).into_owned();
        let mut observation =
            render_observation(name, &output, &error_code, self.config.observation_lines);
        if name != offered {
            observation = observation.replacen(
                &format!("Execution output of [{name}]:"),
                &format!("Execution output of [{offered}]:"),
                1,
            );
        }
        ToolResult {
            output,
            error_code,
            done: matches!(name, "finish" | "submit"),
            is_error,
            observation,
            submission,
        }
    }
}

impl Toolbox {
    /// A call under [`Toolset::SweAgent`]: a special command, `submit`, or a shell command
    /// whose stdout and stderr are shown together, each observation followed by SWE-agent's
    /// `(Open file: …)` / `(Current directory: …)` prompt.
    fn call_swe_agent(&mut self, call: &ToolCall) -> ToolResult {
        let command = call
            .arguments
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (output, error_code, is_error, done) = match call.name.as_str() {
            "submit" => (String::new(), "0".to_owned(), false, true),
            "execute_bash" => {
                let command = command.unwrap_or_default();
                let first_word = command.split_whitespace().next().unwrap_or_default();
                if command.trim().is_empty() {
                    (
                        "Error: empty command".to_owned(),
                        "-1".to_owned(),
                        true,
                        false,
                    )
                } else if self
                    .config
                    .blocked_commands
                    .iter()
                    .any(|word| word == first_word)
                {
                    (
                        format!("Operation '{first_word}' is not supported by this environment."),
                        "-1".to_owned(),
                        true,
                        false,
                    )
                } else {
                    let timeout = std::time::Duration::from_secs(self.config.bash_timeout_secs);
                    match self.shell.run(&command, timeout) {
                        Ok(outcome) if outcome.timed_out => (
                            format!(
                                "The command took too long to execute (>{}s)",
                                self.config.bash_timeout_secs
                            ),
                            "-1".to_owned(),
                            true,
                            false,
                        ),
                        Ok(outcome) => {
                            let status = outcome.shell_status();
                            (
                                format!("{}{}", outcome.stdout_text(), outcome.stderr_text()),
                                bash::error_code(status),
                                status != 0,
                                false,
                            )
                        }
                        Err(err) => (format!("Error: {err}"), "-1".to_owned(), true, false),
                    }
                }
            }
            name if crate::swe_agent::COMMANDS.contains(&name) => {
                let result = self
                    .swe_agent
                    .run(&self.fs, self.shell.as_ref(), &self.config, call);
                (result.output, "0".to_owned(), result.is_error, false)
            }
            unknown => {
                let message = invalid_action(unknown, &self.tool_specs());
                (message, "-1".to_owned(), true, false)
            }
        };
        let output = strip_ansi_and_cr(&output).into_owned();
        let observation = if done {
            crate::observation::FINISHED.to_owned()
        } else {
            crate::swe_agent::render_observation(&output, self.swe_agent.open_file())
        };
        ToolResult {
            output,
            error_code,
            done,
            is_error,
            observation,
            submission: None,
        }
    }
}

/// SWE-AGILE's text for an unknown tool, listing the tools of `specs` (R2E-Gym raises the
/// same text but then shows the model an empty output).
fn invalid_action(name: &str, specs: &[Value]) -> String {
    let allowed: Vec<String> = specs
        .iter()
        .map(|spec| {
            format!(
                "'{}'",
                spec["function"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    format!(
        "Invalid Action: input action must be one of allowed actions \n Allowed actions: [{}] \n Input action: {name}\n",
        allowed.join(", ")
    )
}
