//! The model seam of swerve and its backends.
//!
//! An agent asks a [`Model`] to complete a [`ModelRequest`] (chat messages
//! with tool schemas, or a prompt it rendered itself) and gets a
//! [`ModelResponse`] with the text, reasoning, raw tool calls, usage, cost and,
//! when asked, the exact token ids and logprobs, or a [`ModelError`] whose kind
//! maps to a termination reason. Backends: [`HttpModel`] for OpenAI-compatible
//! servers and [`ScriptedModel`] for tests; [`HttpEmbedder`] embeds texts through the
//! same servers' `/embeddings` endpoint; a replay model that answers from a
//! recorded trajectory belongs beside them as another `Model` implementation.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod embeddings;
pub mod error;
pub mod http;
pub mod model;
pub mod price;
mod replay;
pub mod request;
pub mod response;
mod retry;
mod scripted;
mod wire;

pub use config::{ApiMode, HttpModelConfig};
pub use embeddings::{Embeddings, HttpEmbedder};
pub use error::ModelError;
pub use http::HttpModel;
pub use model::{Model, ModelFuture};
pub use price::{Price, PriceTable};
pub use replay::ReplayModel;
pub use request::{ModelInput, ModelRequest, Sampling, neutral_sampling};
pub use response::ModelResponse;
pub use scripted::ScriptedModel;
/// Chat messages are swerve-core's trajectory messages: what is sent is what is recorded.
pub use swerve_core::trajectory::{ChatToolCall, Content, FunctionCall, Message, Role, Usage};
