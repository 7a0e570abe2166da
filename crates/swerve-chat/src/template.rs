//! [`ChatTemplate`]: a model's chat templates, rendered as transformers'
//! `apply_chat_template(..., tokenize=False)` renders them.
//!
//! A template sees `messages` (see [`crate::messages`] for their shape), `tools` (the JSON
//! schemas, or none), `documents` (none unless given as a variable), `add_generation_prompt`,
//! the model's special tokens (`bos_token`, `eos_token`, …) and any extra variables such as
//! `enable_thinking`, which override special tokens of the same name.

use std::collections::BTreeMap;
use std::path::Path;

use minijinja::value::Serde;
use minijinja::{Environment, Value};
use serde_json::Map;
use swerve_core::trajectory::Message;

use crate::config::{ChatConfig, TemplateSource};
use crate::environment::{hf_environment, rewrite_generation_blocks};
use crate::error::{Error, Result};
use crate::messages::template_messages;

/// Variables [`RenderOptions`] sets through its own fields, never through `variables`.
const RESERVED: [&str; 3] = ["messages", "tools", "add_generation_prompt"];

/// How to render a conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderOptions {
    /// End with the header of a new assistant turn (`<|im_start|>assistant\n` for Qwen).
    pub add_generation_prompt: bool,
    /// Tool schemas (`{"type": "function", "function": {…}}`), or `None` for no tools.
    pub tools: Option<Vec<serde_json::Value>>,
    /// Which of several named templates to use; by default `tool_use` when there are tools
    /// and the model has one, else `default` (transformers' rule).
    pub template: Option<String>,
    /// Extra template variables, such as `enable_thinking`.
    pub variables: Map<String, serde_json::Value>,
}

impl RenderOptions {
    /// Sets [`RenderOptions::add_generation_prompt`].
    pub fn generation_prompt(mut self, yes: bool) -> Self {
        self.add_generation_prompt = yes;
        self
    }

    /// Sets [`RenderOptions::tools`].
    pub fn tools(mut self, tools: Vec<serde_json::Value>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets [`RenderOptions::template`].
    pub fn template(mut self, name: impl Into<String>) -> Self {
        self.template = Some(name.into());
        self
    }

    /// Adds one extra template variable.
    pub fn variable(
        mut self,
        name: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.variables.insert(name.into(), value.into());
        self
    }
}

/// A model's chat templates, compiled, with the special tokens they are given.
#[derive(Debug)]
pub struct ChatTemplate {
    /// The model directory, or the origin given to [`ChatTemplate::from_source`].
    origin: String,
    env: Environment<'static>,
    templates: Vec<TemplateSource>,
    named: bool,
    special_tokens: Vec<(String, String)>,
}

impl ChatTemplate {
    /// Loads the templates of a model directory: `chat_template.jinja` and
    /// `additional_chat_templates/*.jinja` if present, else `chat_template` in
    /// `tokenizer_config.json`; special tokens from `tokenizer_config.json`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let config = ChatConfig::read_dir(dir)?;
        let origin = dir.display().to_string();
        Self::compile(
            origin,
            config.templates,
            config.named,
            config.special_tokens,
        )
    }

    /// One template from its source, with no special tokens (give them as variables).
    /// `origin` names it in errors.
    pub fn from_source(origin: impl Into<String>, source: impl Into<String>) -> Result<Self> {
        Self::from_source_with_tokens(origin, source, Vec::new())
    }

    /// One template from its source with the special tokens it is given (`bos_token`,
    /// `eos_token`, as a GGUF file's metadata names them). `origin` names it in errors.
    pub fn from_source_with_tokens(
        origin: impl Into<String>,
        source: impl Into<String>,
        special_tokens: Vec<(String, String)>,
    ) -> Result<Self> {
        let origin = origin.into();
        let template = TemplateSource {
            name: "default".to_owned(),
            origin: origin.clone(),
            source: source.into(),
        };
        Self::compile(origin, vec![template], false, special_tokens)
    }

    /// A template from `source` given the special tokens of `self`, as vLLM's
    /// `--chat-template` replaces a model's template and keeps its tokenizer. `origin`
    /// names it in errors.
    pub fn with_source(
        &self,
        origin: impl Into<String>,
        source: impl Into<String>,
    ) -> Result<Self> {
        let origin = origin.into();
        let template = TemplateSource {
            name: "default".to_owned(),
            origin: origin.clone(),
            source: source.into(),
        };
        Self::compile(origin, vec![template], false, self.special_tokens.clone())
    }

    fn compile(
        origin: String,
        templates: Vec<TemplateSource>,
        named: bool,
        special_tokens: Vec<(String, String)>,
    ) -> Result<Self> {
        let mut env = hf_environment();
        for template in &templates {
            env.add_template_owned(
                template.name.clone(),
                rewrite_generation_blocks(&template.source),
            )
            .map_err(|err| template_error(template, &err))?;
        }
        Ok(Self {
            origin,
            env,
            templates,
            named,
            special_tokens,
        })
    }

    /// The templates' names (`default` for a single template).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.templates.iter().map(|t| t.name.as_str())
    }

    /// The special tokens templates are given, as `(attribute, text)`.
    pub fn special_tokens(&self) -> &[(String, String)] {
        &self.special_tokens
    }

    /// Renders a conversation to the text the model reads.
    pub fn render(&self, messages: &[Message], options: &RenderOptions) -> Result<String> {
        if let Some(name) = options
            .variables
            .keys()
            .find(|k| RESERVED.contains(&k.as_str()))
        {
            return Err(Error::Options(format!(
                "`{name}` cannot be an extra variable; it is set from the messages and options"
            )));
        }
        let source = self.select(options)?;
        let mut context: BTreeMap<String, Value> = self
            .special_tokens
            .iter()
            .map(|(name, text)| (name.clone(), Value::from(text.as_str())))
            .collect();
        context.insert("documents".to_owned(), Value::from(()));
        for (name, value) in &options.variables {
            context.insert(name.clone(), Value::from(Serde(value)));
        }
        context.insert(
            "messages".to_owned(),
            Value::from(Serde(template_messages(messages))),
        );
        let tools = options
            .tools
            .as_ref()
            .map_or(Value::from(()), |tools| Value::from(Serde(tools)));
        context.insert("tools".to_owned(), tools);
        context.insert(
            "add_generation_prompt".to_owned(),
            Value::from(options.add_generation_prompt),
        );
        self.env
            .get_template(&source.name)
            .and_then(|template| template.render(Value::from(context)))
            .map_err(|err| template_error(source, &err))
    }

    /// The template `options` asks for, by transformers' rule.
    fn select(&self, options: &RenderOptions) -> Result<&TemplateSource> {
        let find = |name: &str| self.templates.iter().find(|t| t.name == name);
        let wanted = match (&options.template, self.named) {
            (None, false) => return Ok(&self.templates[0]),
            (Some(name), _) => name.as_str(),
            (None, true) if options.tools.is_some() && find("tool_use").is_some() => "tool_use",
            (None, true) => "default",
        };
        find(wanted).ok_or_else(|| Error::UnknownTemplateName {
            origin: self.origin.clone(),
            name: wanted.to_owned(),
            available: self.templates.iter().map(|t| t.name.clone()).collect(),
        })
    }
}

/// A minijinja error as [`Error::Template`], naming the template and, where known, its line.
fn template_error(template: &TemplateSource, err: &minijinja::Error) -> Error {
    let mut message = match err.detail() {
        Some(detail) => format!("{}: {detail}", err.kind()),
        None => err.kind().to_string(),
    };
    if let Some(line) = err.line() {
        message.push_str(&format!(" (line {line})"));
    }
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    Error::Template {
        template: if template.name == "default" {
            template.origin.clone()
        } else {
            format!("`{}` of {}", template.name, template.origin)
        },
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ECHO: &str = "{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}\
        {{ bos_token }}|{{ tools | length if tools else 'none' }}|{{ documents is none }}|{{ add_generation_prompt }}|{{ flag }}";

    #[test]
    fn renders_the_context_transformers_gives() {
        let template = ChatTemplate::from_source("echo.jinja", ECHO).unwrap();
        let messages = [Message::system("s"), Message::user("u")];
        let options = RenderOptions::default()
            .generation_prompt(true)
            .variable("bos_token", "<s>")
            .variable("flag", true);
        assert_eq!(
            template.render(&messages, &options).unwrap(),
            "[system:s][user:u]<s>|none|True|True|True"
        );
        let options = options.tools(vec![serde_json::json!({"type": "function"})]);
        assert_eq!(
            template.render(&messages, &options).unwrap(),
            "[system:s][user:u]<s>|1|True|True|True"
        );
    }

    #[test]
    fn errors_name_the_template() {
        let template = ChatTemplate::from_source(
            "strict.jinja",
            "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with user') }}{% endif %}ok",
        )
        .unwrap();
        let err = template
            .render(&[Message::system("s")], &RenderOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("chat template strict.jinja:"), "{err}");
        assert!(err.contains("Conversation must start with user"), "{err}");

        let err = ChatTemplate::from_source("bad.jinja", "{% for %}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.jinja") && err.contains("line 1"), "{err}");

        let err = template
            .render(&[], &RenderOptions::default().variable("messages", 1))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`messages` cannot be an extra variable"),
            "{err}"
        );
    }

    #[test]
    fn named_templates_follow_transformers_selection() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("tokenizer_config.json"),
            r#"{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}, {"name": "rag", "template": "R"}]}"#,
        )
        .unwrap();
        let template = ChatTemplate::from_dir(dir.path()).unwrap();
        assert_eq!(
            template.names().collect::<Vec<_>>(),
            ["default", "tool_use", "rag"]
        );
        let render = |options: RenderOptions| template.render(&[], &options);
        assert_eq!(render(RenderOptions::default()).unwrap(), "D");
        assert_eq!(render(RenderOptions::default().tools(vec![])).unwrap(), "T");
        assert_eq!(
            render(RenderOptions::default().template("rag")).unwrap(),
            "R"
        );
        let err = render(RenderOptions::default().template("nope"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "{}: no chat template named `nope` (available: default, tool_use, rag)",
                dir.path().display()
            )),
            "{err}"
        );
    }
}
