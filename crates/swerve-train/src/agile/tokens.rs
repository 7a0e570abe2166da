//! [`Tokens`]: a model's chat template and tokenizer applied to one trajectory's messages,
//! with the tool schemas its requests carried (native function calling); and
//! [`TemplateTokens`], re-tokenizing a step for an export that asks for it.
//!
//! A step's context under a window is the agent's own [`ContextPolicy`] applied to the
//! conversation, kept reasoning sent inline (`agent.reasoning.send = "inline"`), rendered
//! with the generation prompt on: what a prompt-rendered run sends the model.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;
use swerve_agent::agile::{ContextPolicy, SendReasoning, Window, recall};
use swerve_chat::{ChatModel, RenderOptions};
use swerve_core::trajectory::{Header, Message};
use swerve_tools::ToolConfig;

/// Loads the model directory `dir` (tokenizer and chat template), or a GGUF file's
/// tokenizer and chat template (the embedded model's), with the chat template of the file
/// `template` instead of its own when given.
pub fn load_model(dir: &Path, template: Option<&Path>) -> Result<ChatModel> {
    let model = match dir
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("gguf"))
    {
        true => gguf_model(dir)?,
        false => ChatModel::from_dir(dir)
            .with_context(|| format!("cannot load the tokenizer from {}", dir.display()))?,
    };
    match template {
        Some(path) => model
            .with_template_file(path)
            .with_context(|| format!("cannot use the chat template {}", path.display())),
        None => Ok(model),
    }
}

/// The tokenizer and chat template of the GGUF file `path`.
#[cfg(feature = "gguf")]
fn gguf_model(path: &Path) -> Result<ChatModel> {
    swerve_embedded::chat_model(path)
        .with_context(|| format!("cannot load the tokenizer from {}", path.display()))
}

/// Without the embedded model's code, GGUF files cannot be read.
#[cfg(not(feature = "gguf"))]
fn gguf_model(path: &Path) -> Result<ChatModel> {
    anyhow::bail!(
        "{} is a GGUF file, and this swerve was built without the `embedded` feature that \
         reads them; give the model's directory (tokenizer.json, tokenizer_config.json) instead",
        path.display()
    )
}

/// The policy that keeps the reasoning of `window`, sent inline.
pub fn policy(window: Window) -> ContextPolicy {
    ContextPolicy {
        window,
        send: SendReasoning::Inline,
    }
}

/// Renders and counts one trajectory's messages.
pub struct Tokens<'a> {
    model: &'a ChatModel,
    tools: Option<Vec<Value>>,
}

impl<'a> Tokens<'a> {
    /// For the trajectory with `header`: its requests' tool schemas come from its
    /// configuration when its run used native function calling.
    pub fn new(model: &'a ChatModel, header: &Header) -> Result<Self> {
        Ok(Self {
            model,
            tools: request_tools(&header.config)?,
        })
    }

    /// The tool schemas rendered with every request, if any.
    pub fn tools(&self) -> Option<&[Value]> {
        self.tools.as_deref()
    }

    fn options(&self, generation_prompt: bool) -> RenderOptions {
        let options = RenderOptions::default().generation_prompt(generation_prompt);
        match &self.tools {
            Some(tools) => options.tools(tools.clone()),
            None => options,
        }
    }

    /// `messages` as the model reads them.
    pub fn render(&self, messages: &[Message], generation_prompt: bool) -> Result<String> {
        Ok(self
            .model
            .render(messages, &self.options(generation_prompt))?)
    }

    /// The token ids of rendered text (the template wrote the special tokens).
    pub fn encode_text(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self.model.tokenizer().encode(text, false)?)
    }

    /// How many tokens `messages` are.
    pub fn count(&self, messages: &[Message], generation_prompt: bool) -> Result<usize> {
        Ok(self
            .encode_text(&self.render(messages, generation_prompt)?)?
            .len())
    }

    /// How many tokens the context of assistant turn `turn` is under `window` (generation
    /// prompt on); 0 when the conversation has no such turn.
    pub fn context(&self, conversation: &[Message], window: Window, turn: usize) -> Result<usize> {
        match policy(window).before_turn(conversation, turn) {
            Some(context) => self.count(&context, true),
            None => Ok(0),
        }
    }

    /// How many tokens plain `text` is, without a template.
    pub fn text(&self, text: &str) -> Result<usize> {
        Ok(self.model.tokenizer().count(text, false)?)
    }
}

/// The tool schemas a run's requests carried: with native function calling (`run.format`),
/// the tools of its `tools` section, and `recall_thought` when it was on, as the agent
/// offers them.
pub fn request_tools(config: &Value) -> Result<Option<Vec<Value>>> {
    if config.pointer("/run/format").and_then(Value::as_str) != Some("native") {
        return Ok(None);
    }
    let section = config.get("tools").cloned().unwrap_or(Value::Null);
    let tools: ToolConfig = match section {
        Value::Null => ToolConfig::default(),
        section => serde_json::from_value(section)
            .context("header field config.tools is not a [tools] section")?,
    };
    let mut specs = swerve_tools::tool_specs(&tools);
    if config.pointer("/agent/reasoning/recall_thought") == Some(&Value::Bool(true)) {
        specs.push(recall::spec());
    }
    Ok(Some(specs))
}

/// Re-tokenizes a step with a model's chat template: the prompt rendered with the
/// generation prompt, and the reply as the template renders it after that prompt (its
/// end-of-turn tokens included). Only on explicit request: the ids may differ from those
/// the model saw and wrote.
pub struct TemplateTokens<'a>(pub Tokens<'a>);

impl crate::export::Retokenize for TemplateTokens<'_> {
    fn step(&self, sent: &[Message], reply: &Message) -> Result<(Vec<u32>, Vec<u32>), String> {
        let tokens = &self.0;
        let prompt = tokens.render(sent, true).map_err(|e| format!("{e:#}"))?;
        let mut whole_messages = sent.to_vec();
        whole_messages.push(reply.clone());
        let whole = tokens
            .render(&whole_messages, false)
            .map_err(|e| format!("{e:#}"))?;
        let Some(reply_text) = whole.strip_prefix(prompt.as_str()) else {
            return Err(
                "the chat template renders the prompt differently once the reply follows it, \
                 so the reply's tokens cannot be told apart"
                    .into(),
            );
        };
        let encode = |text: &str| tokens.encode_text(text).map_err(|e| format!("{e:#}"));
        Ok((encode(&prompt)?, encode(reply_text)?))
    }
}
