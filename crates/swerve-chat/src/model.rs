//! [`ChatModel`]: a model directory's tokenizer and chat template together, for exact token
//! counts of conversations.

use std::path::{Path, PathBuf};

use swerve_core::trajectory::Message;

use crate::error::{Error, Result};
use crate::template::{ChatTemplate, RenderOptions};
use crate::tokenizer::Tokenizer;

/// A model's `tokenizer.json` and chat template, loaded from its directory.
#[derive(Debug)]
pub struct ChatModel {
    dir: PathBuf,
    tokenizer: Tokenizer,
    template: ChatTemplate,
}

impl ChatModel {
    /// Loads `dir/tokenizer.json` and the chat template (see [`ChatTemplate::from_dir`]).
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref().to_owned();
        let tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))?;
        let template = ChatTemplate::from_dir(&dir)?;
        Ok(Self {
            dir,
            tokenizer,
            template,
        })
    }

    /// A model from its parts, loaded elsewhere (a GGUF file's metadata); `origin` is the
    /// file or directory they came from.
    pub fn from_parts(
        origin: impl Into<PathBuf>,
        tokenizer: Tokenizer,
        template: ChatTemplate,
    ) -> Self {
        Self {
            dir: origin.into(),
            tokenizer,
            template,
        }
    }

    /// The same model with the chat template in the file `path` instead of its own (vLLM's
    /// `--chat-template`); the special tokens stay those of the directory.
    pub fn with_template_file(mut self, path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let source = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        self.template = self
            .template
            .with_source(path.display().to_string(), source)?;
        Ok(self)
    }

    /// The directory it was loaded from (or the file, for [`ChatModel::from_parts`]).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The chat template.
    pub fn template(&self) -> &ChatTemplate {
        &self.template
    }

    /// The conversation as the model reads it (see [`ChatTemplate::render`]).
    pub fn render(&self, messages: &[Message], options: &RenderOptions) -> Result<String> {
        self.template.render(messages, options)
    }

    /// The conversation's token ids: the rendered text encoded without adding special tokens
    /// again (the template writes them), as `apply_chat_template(tokenize=True)` does.
    pub fn encode(&self, messages: &[Message], options: &RenderOptions) -> Result<Vec<u32>> {
        let text = self.render(messages, options)?;
        self.tokenizer.encode(&text, false)
    }

    /// How many tokens the conversation is (the length of [`ChatModel::encode`]).
    pub fn count(&self, messages: &[Message], options: &RenderOptions) -> Result<usize> {
        self.encode(messages, options).map(|ids| ids.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<ChatModel>();
    }

    #[test]
    fn a_template_file_replaces_the_template_and_keeps_the_special_tokens() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), TINY_TOKENIZER).unwrap();
        std::fs::write(
            dir.path().join("tokenizer_config.json"),
            r#"{"bos_token": "<s>", "chat_template": "own"}"#,
        )
        .unwrap();
        let template = dir.path().join("other.jinja");
        std::fs::write(&template, "{{ bos_token }}{{ messages[0].content }}").unwrap();
        let model = ChatModel::from_dir(dir.path()).unwrap();
        let messages = [Message::user("hi")];
        let options = RenderOptions::default();
        assert_eq!(model.render(&messages, &options).unwrap(), "own");
        let model = model.with_template_file(&template).unwrap();
        assert_eq!(model.render(&messages, &options).unwrap(), "<s>hi");
        let missing = ChatModel::from_dir(dir.path())
            .unwrap()
            .with_template_file(dir.path().join("missing.jinja"))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("missing.jinja"), "{missing}");
        std::fs::write(&template, "{% if %}").unwrap();
        let broken = ChatModel::from_dir(dir.path())
            .unwrap()
            .with_template_file(&template)
            .unwrap_err()
            .to_string();
        assert!(broken.contains("other.jinja"), "{broken}");
    }

    /// A word-level tokenizer with an empty vocabulary: enough to load a directory.
    const TINY_TOKENIZER: &str = r#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"WordLevel","vocab":{"[UNK]":0},"unk_token":"[UNK]"}}"#;

    #[test]
    fn a_missing_tokenizer_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = ChatModel::from_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json"), "{err}");
        std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
        let err = ChatModel::from_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cannot load the tokenizer"), "{err}");
    }
}
