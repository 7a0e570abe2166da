//! Prompt templates: the system prompt, the instance prompt that presents a task, and the
//! hint appended to observations.
//!
//! Templates are Jinja (minijinja) with undefined variables as errors, so a typo in a user's
//! template fails loudly instead of rendering as nothing. Variables: `problem_statement`,
//! `repo`, `instance_id`, `workdir` (where the repository is, `/testbed`), `tool_documentation`
//! (the tools as the tool-call format documents them; empty for native function calling),
//! `max_steps`, and for the step hint `steps_remaining`. The defaults are written for swerve
//! in the style of R2E-Gym's prompts, so models trained on R2E-Gym data see what they expect.

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior};
use serde::{Deserialize, Serialize};

/// The default system prompt.
pub const DEFAULT_SYSTEM: &str = r#"You are a software engineer working in a code repository to resolve an issue. You act only through the tools below, one tool call per reply, and you see the result of each call before choosing the next.
{% if tool_documentation %}
{{ tool_documentation }}
{% endif %}
Work like this:
1. Explore the repository to find the code the issue is about.
2. Write a small script that reproduces the issue and run it.
3. Edit the source code to fix the root cause, not just the symptom.
4. Run your script again, and the existing tests near your change, to confirm the fix.
5. Think about edge cases the fix should handle, and check them.
6. When you are done, call `finish` with command `submit`.

Do not modify the existing tests: they will be replaced by the maintainers' tests when your change is evaluated. Never ask for human help: nobody will answer."#;

/// The default instance prompt.
pub const DEFAULT_INSTANCE: &str = r#"The repository {{ repo }} is checked out at {{ workdir }}. Resolve the following issue by changing its non-test files.

<issue>
{{ problem_statement }}
</issue>

You have at most {{ max_steps }} steps."#;

/// The default hint appended to each observation.
pub const DEFAULT_STEP_HINT: &str = "Steps Remaining: {{ steps_remaining }}";

/// The three templates; `None` means the default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromptTemplates {
    /// The system prompt template.
    pub system: Option<String>,
    /// The instance prompt template.
    pub instance: Option<String>,
    /// The observation hint template; `Some("")` turns the hint off.
    pub step_hint: Option<String>,
}

/// The values templates are rendered with.
#[derive(Debug, Clone, Serialize)]
pub struct PromptContext<'a> {
    /// The task's issue text.
    pub problem_statement: &'a str,
    /// The repository, `owner/name`.
    pub repo: &'a str,
    /// The task's id.
    pub instance_id: &'a str,
    /// Where the repository is checked out, as the agent sees it (`/testbed`).
    pub workdir: &'a str,
    /// The tools' documentation for text formats; empty when the model is offered tools
    /// natively.
    pub tool_documentation: &'a str,
    /// The step limit.
    pub max_steps: u32,
}

/// A template that failed to render, naming which one and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {which} prompt template cannot be rendered: {message}")]
pub struct PromptError {
    /// `system`, `instance` or `step hint`.
    pub which: &'static str,
    /// minijinja's description, with the line.
    pub message: String,
}

/// Compiled prompts, ready to render for tasks.
#[derive(Debug)]
pub struct Prompts {
    environment: Environment<'static>,
}

impl Prompts {
    /// Compiles `templates`, reporting the first syntax error.
    pub fn new(templates: &PromptTemplates) -> Result<Self, PromptError> {
        let mut environment = Environment::new();
        environment.set_undefined_behavior(UndefinedBehavior::Strict);
        environment.set_syntax(
            SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .expect("the default delimiters are valid"),
        );
        let sources = [
            (
                "system",
                templates
                    .system
                    .clone()
                    .unwrap_or_else(|| DEFAULT_SYSTEM.to_owned()),
            ),
            (
                "instance",
                templates
                    .instance
                    .clone()
                    .unwrap_or_else(|| DEFAULT_INSTANCE.to_owned()),
            ),
            (
                "step hint",
                templates
                    .step_hint
                    .clone()
                    .unwrap_or_else(|| DEFAULT_STEP_HINT.to_owned()),
            ),
        ];
        for (which, source) in sources {
            environment
                .add_template_owned(which, source)
                .map_err(|error| PromptError {
                    which,
                    message: describe(&error),
                })?;
        }
        Ok(Self { environment })
    }

    /// The system prompt for `context`.
    pub fn system(&self, context: &PromptContext<'_>) -> Result<String, PromptError> {
        self.render("system", context)
    }

    /// The instance prompt for `context`.
    pub fn instance(&self, context: &PromptContext<'_>) -> Result<String, PromptError> {
        self.render("instance", context)
    }

    /// The hint appended to an observation (`None` when the template renders empty).
    pub fn step_hint(&self, steps_remaining: u32) -> Result<Option<String>, PromptError> {
        let template = self
            .environment
            .get_template("step hint")
            .map_err(|error| PromptError {
                which: "step hint",
                message: describe(&error),
            })?;
        let text = template
            .render(minijinja::context! { steps_remaining })
            .map_err(|error| PromptError {
                which: "step hint",
                message: describe(&error),
            })?;
        Ok((!text.trim().is_empty()).then_some(text))
    }

    fn render(
        &self,
        which: &'static str,
        context: &PromptContext<'_>,
    ) -> Result<String, PromptError> {
        let template = self
            .environment
            .get_template(which)
            .map_err(|error| PromptError {
                which,
                message: describe(&error),
            })?;
        template
            .render(Serde(context))
            .map_err(|error| PromptError {
                which,
                message: describe(&error),
            })
    }
}

/// minijinja's error with its line, when known.
fn describe(error: &minijinja::Error) -> String {
    match error.line() {
        Some(line) => format!(
            "line {line}: {}",
            error.detail().unwrap_or(&error.to_string())
        ),
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> PromptContext<'static> {
        PromptContext {
            problem_statement: "10 - 4 - 3 gives 9",
            repo: "swerve-examples/calc",
            instance_id: "swerve-examples__calc-1",
            workdir: "/testbed",
            tool_documentation: "",
            max_steps: 30,
        }
    }

    #[test]
    fn defaults_render_the_task() {
        let prompts = Prompts::new(&PromptTemplates::default()).unwrap();
        let instance = prompts.instance(&context()).unwrap();
        assert!(
            instance.starts_with("The repository swerve-examples/calc is checked out at /testbed.")
        );
        assert!(instance.contains("<issue>\n10 - 4 - 3 gives 9\n</issue>"));
        let system = prompts.system(&context()).unwrap();
        assert!(system.contains("call `finish` with command `submit`"));
        let with_tools = prompts
            .system(&PromptContext {
                tool_documentation: "TOOLS HERE",
                ..context()
            })
            .unwrap();
        assert!(with_tools.contains("\nTOOLS HERE\n"));
        assert_eq!(
            prompts.step_hint(7).unwrap().as_deref(),
            Some("Steps Remaining: 7")
        );
    }

    #[test]
    fn user_templates_fail_loudly() {
        let typo = PromptTemplates {
            instance: Some("Fix {{ problem_statment }}".into()),
            ..PromptTemplates::default()
        };
        let error = Prompts::new(&typo)
            .unwrap()
            .instance(&context())
            .unwrap_err();
        assert_eq!(error.which, "instance");
        assert!(
            error.message.contains("problem_statment") || error.message.contains("undefined"),
            "{error}"
        );
        let broken = PromptTemplates {
            system: Some("{% if %}".into()),
            ..PromptTemplates::default()
        };
        assert!(
            Prompts::new(&broken)
                .unwrap_err()
                .message
                .starts_with("line 1")
        );
        let off = PromptTemplates {
            step_hint: Some(String::new()),
            ..PromptTemplates::default()
        };
        assert_eq!(Prompts::new(&off).unwrap().step_hint(3).unwrap(), None);
    }
}
