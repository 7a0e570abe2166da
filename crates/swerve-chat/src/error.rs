//! The one error type of the crate: every variant names the file, field or template at fault.

use std::path::PathBuf;

/// What went wrong loading a model directory, rendering a conversation or tokenizing text.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A JSON file is not valid JSON.
    #[error("{} is not valid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Where and why parsing stopped.
        source: serde_json::Error,
    },
    /// A field of a configuration file has the wrong shape.
    #[error("{}: field `{field}` {problem}", path.display())]
    Field {
        /// The file.
        path: PathBuf,
        /// The field, as a dotted path (`chat_template[1].template`).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The model directory holds no chat template.
    #[error(
        "{}: no chat template (neither `chat_template.jinja` nor a `chat_template` field in `tokenizer_config.json`)",
        dir.display()
    )]
    NoChatTemplate {
        /// The model directory.
        dir: PathBuf,
    },
    /// The model has several named templates and none fits the request.
    #[error("{origin}: no chat template named `{name}` (available: {})", available.join(", "))]
    UnknownTemplateName {
        /// Where the templates came from.
        origin: String,
        /// The name asked for (or `default` when none was).
        name: String,
        /// The names there are.
        available: Vec<String>,
    },
    /// `tokenizer.json` could not be loaded.
    #[error("{}: cannot load the tokenizer: {message}", path.display())]
    Tokenizer {
        /// The file.
        path: PathBuf,
        /// The tokenizers library's message.
        message: String,
    },
    /// Encoding or decoding failed inside the tokenizer.
    #[error("{}: cannot {action}: {message}", path.display())]
    Tokenize {
        /// The tokenizer's file.
        path: PathBuf,
        /// `encode` or `decode`.
        action: &'static str,
        /// The tokenizers library's message.
        message: String,
    },
    /// A template failed to compile or to render, or raised an exception itself.
    #[error("chat template {template}: {message}")]
    Template {
        /// Which template: its file and name.
        template: String,
        /// The template engine's message, with the failing line where known.
        message: String,
    },
    /// A render option is invalid (an extra variable that shadows a reserved one).
    #[error("render options: {0}")]
    Options(String),
}

/// This crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
