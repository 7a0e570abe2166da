//! [`ChatModel`]: a model directory's tokenizer and chat template together, for exact token
//! counts of conversations.

use std::path::{Path, PathBuf};

use swerve_core::trajectory::Message;

use crate::error::Result;
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

    /// The directory it was loaded from.
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
    fn a_missing_tokenizer_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = ChatModel::from_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json"), "{err}");
        std::fs::write(dir.path().join("tokenizer.json"), "{}").unwrap();
        let err = ChatModel::from_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cannot load the tokenizer"), "{err}");
    }
}
