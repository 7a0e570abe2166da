//! Errors loading an embedded model: each names the file (of a model directory: the file
//! at fault), and the metadata key or what is missing, and says what to do. Errors of a model call are `swerve_llm::ModelError`s.

use std::path::PathBuf;

/// What went wrong finding or loading a model file, its tokenizer or its chat template.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// There is no model file where one was looked for.
    #[error(
        "no model file at {}{}\nhint: {hint}",
        path.display(),
        why.as_deref().map(|why| format!(": {why}")).unwrap_or_default()
    )]
    NotFound {
        /// Where it was looked for.
        path: PathBuf,
        /// Why there is none there, when more can be said than its absence.
        why: Option<String>,
        /// How to get one (printed on its own `hint:` line).
        hint: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a GGUF model candle can load.
    #[error("{}: not a usable GGUF model file: {message}", path.display())]
    Gguf {
        /// The file.
        path: PathBuf,
        /// What the GGUF reader or the model loader said.
        message: String,
    },
    /// A metadata key the backend needs is missing or has the wrong type.
    #[error("{}: GGUF metadata `{key}` {problem}", path.display())]
    Metadata {
        /// The file.
        path: PathBuf,
        /// The metadata key.
        key: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A file of a model directory is missing, or does not hold what the model needs.
    #[error("{}: {problem}", path.display())]
    Invalid {
        /// The file (or the directory, for what is missing from it as a whole).
        path: PathBuf,
        /// What is missing or wrong.
        problem: String,
    },
    /// The model or its tokenizer is of a kind this backend does not run.
    #[error("{}: {what}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is not supported, and what would work instead.
        what: String,
    },
    /// The tokenizer could not be built or loaded.
    #[error("{}: cannot build the tokenizer: {message}", path.display())]
    Tokenizer {
        /// The GGUF file, or the `tokenizer.json` beside it.
        path: PathBuf,
        /// The tokenizers library's message.
        message: String,
    },
    /// The chat template in the metadata does not compile.
    #[error("{}: {source}", path.display())]
    Template {
        /// The file.
        path: PathBuf,
        /// swerve-chat's error, naming the template and line.
        source: swerve_chat::Error,
    },
}

/// This crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
