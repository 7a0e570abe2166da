//! An in-process model backend: a small instruct model run on the CPU with candle, so
//! swerve can drive a real language model with no server, GPU or API key. The model is a
//! quantized GGUF file, or a Hugging Face model directory of the Llama family
//! (`config.json`, `tokenizer.json`, `*.safetensors`: what a trainer saves).
//!
//! [`EmbeddedModel`] implements swerve-llm's [`Model`](swerve_llm::Model) seam like the HTTP
//! backend: chat messages are rendered with the chat template from the file's metadata or
//! the directory's `tokenizer_config.json` (swerve-chat, as transformers renders it),
//! tokenized with the model's own tokenizer ([`Tokenizer`]: a `tokenizer.json` in the
//! directory or beside the file, else byte-level BPE from the metadata), and answered with text, token ids and per-token logprobs. Sampling follows the
//! request (temperature, `top_p`, `max_tokens`, stop strings, seed: a seed gives the same
//! tokens every time); a prompt that does not fit the context is a
//! [`ModelError::ContextLength`](swerve_llm::ModelError::ContextLength).
//!
//! [`chat_model`] reads only a file's tokenizer and chat template, for exact token counts of
//! conversations (SWE-AGILE's compression rate) with the model the file holds.
//!
//! The default model is SmolLM2-135M-Instruct (Q4_1), which `scripts/fetch-model.sh` puts
//! in the [models directory](models_dir). See `docs/embedded.md`.
//!
//! ```no_run
//! use swerve_embedded::{EmbeddedModel, resolve};
//! use swerve_llm::{Message, Model, ModelRequest};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let model = EmbeddedModel::load(&resolve(None)?)?;
//! let request = ModelRequest::chat(vec![Message::user("Say hello.")]).capturing_tokens();
//! let response = model.complete(&request).await?;
//! println!("{} ({:?})", response.content, response.logprobs);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod backend;
mod chat;
mod engine;
mod error;
mod gguf;
mod hf;
mod locate;
mod sampler;
mod tokenizer;
mod weights;

pub use backend::{DEFAULT_MAX_TOKENS, EmbeddedModel};
pub use chat::chat_model;
pub use engine::{Finish, Generation, ModelInfo};
pub use error::{Error, Result};
pub use locate::{DEFAULT_MODEL_FILE, MODELS_DIR_ENV, default_model_path, models_dir, resolve};
pub use tokenizer::{BpeParts, Tokenizer};
