//! Exact token accounting for chat models.
//!
//! A [`ChatModel`] loads a model directory's `tokenizer.json` ([`Tokenizer`], the Hugging Face
//! `tokenizers` crate) and chat template ([`ChatTemplate`], minijinja set up as transformers
//! sets up Jinja2), renders swerve's [`Message`](swerve_core::trajectory::Message)s with it and
//! counts their tokens as `apply_chat_template(tokenize=True)` does. See `docs/tokens.md`.
//!
//! ```no_run
//! use swerve_chat::{ChatModel, RenderOptions};
//! use swerve_core::trajectory::Message;
//!
//! let model = ChatModel::from_dir("models/Qwen3-8B")?;
//! let messages = [Message::system("You are a coding agent."), Message::user("Fix the bug.")];
//! let options = RenderOptions::default().generation_prompt(true);
//! let prompt = model.render(&messages, &options)?;
//! let tokens = model.count(&messages, &options)?;
//! # Ok::<(), swerve_chat::Error>(())
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod config;
mod environment;
mod error;
mod messages;
mod model;
mod template;
mod tojson;
mod tokenizer;

pub use error::{Error, Result};
pub use model::ChatModel;
pub use template::{ChatTemplate, RenderOptions};
pub use tokenizer::Tokenizer;
