//! [`EmbeddedModel`]: the [`Model`] seam over a loaded [`Engine`]. A call renders chat
//! messages with the model's chat template (or takes a rendered prompt), tokenizes, checks
//! the context, and generates on a blocking thread (never on the async runtime). Dropping
//! the call's future cancels the generation at the next token.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use swerve_chat::RenderOptions;
use swerve_llm::{
    Message, Model, ModelError, ModelFuture, ModelInput, ModelRequest, ModelResponse, Sampling,
    Usage,
};

use crate::engine::{Engine, Failure, Generation, Job, ModelInfo};
use crate::error::Result;
use crate::sampler::SamplingParams;

/// Tokens generated when neither the request nor the configuration sets `max_tokens`
/// (less where the context ends first).
pub const DEFAULT_MAX_TOKENS: usize = 2048;

/// A small model (a GGUF file or a Hugging Face model directory) run in this process, on
/// the CPU.
///
/// Calls must run inside a tokio runtime (generation goes to its blocking pool). Calls
/// from concurrent rollouts take turns: the model runs one sequence at a time.
#[derive(Clone)]
pub struct EmbeddedModel {
    engine: Arc<Engine>,
    name: String,
    defaults: Sampling,
}

impl std::fmt::Debug for EmbeddedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedModel")
            .field("name", &self.name)
            .field("info", &self.engine.info)
            .finish_non_exhaustive()
    }
}

impl EmbeddedModel {
    /// Loads the model in `path`: a GGUF file, or a Hugging Face model directory of the
    /// Llama family (a second or so for the default model). Its name is `embedded` until
    /// [`EmbeddedModel::with_name`] changes it.
    pub fn load(path: &Path) -> Result<Self> {
        let engine = if path.is_dir() {
            crate::hf::load(path)?
        } else {
            Engine::load(path)?
        };
        Ok(Self {
            engine: Arc::new(engine),
            name: "embedded".to_owned(),
            defaults: Sampling::default(),
        })
    }

    /// Renames the model (for trajectories and the price table).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Sampling used where a request leaves a field unset (`[model.sampling]`).
    pub fn with_sampling(mut self, defaults: Sampling) -> Self {
        self.defaults = defaults;
        self
    }

    /// What the model is.
    pub fn info(&self) -> &ModelInfo {
        &self.engine.info
    }

    /// The model's tokenizer.
    pub fn tokenizer(&self) -> &crate::Tokenizer {
        &self.engine.tokenizer
    }

    /// `messages` rendered with the model's chat template (from its GGUF metadata or its
    /// directory), with the generation prompt, as a chat call sends them to the model.
    pub fn render(
        &self,
        messages: &[Message],
        tools: &[serde_json::Value],
    ) -> Result<String, ModelError> {
        let Some(template) = &self.engine.template else {
            return Err(ModelError::config(format!(
                "{} has no chat template (tokenizer.chat_template, or a directory's \
                 tokenizer_config.json or chat_template.jinja): send rendered prompts \
                 (model.mode = \"completions\" with run.tokenizer) or use a model that has one",
                self.engine.info.path.display()
            )));
        };
        let mut options = RenderOptions::default().generation_prompt(true);
        if !tools.is_empty() {
            options = options.tools(tools.to_vec());
        }
        for (name, text) in &self.engine.special_tokens {
            options = options.variable(name.clone(), text.clone());
        }
        template
            .render(messages, &options)
            .map_err(|error| ModelError::config(error.to_string()))
    }

    /// The prompt's token ids: a chat rendered and tokenized as it is (the template writes
    /// the special tokens), a rendered prompt tokenized with the tokenizer's special tokens
    /// (a BOS for models that want one), as vLLM's two endpoints do.
    pub fn prompt_tokens(&self, input: &ModelInput) -> Result<Vec<u32>, ModelError> {
        let (text, add_special) = match input {
            ModelInput::Chat { messages, tools } => (self.render(messages, tools)?, false),
            ModelInput::Prompt(prompt) => (prompt.clone(), true),
        };
        self.engine
            .tokenizer
            .encode(&text, add_special)
            .map_err(ModelError::malformed)
    }

    /// Generates after `prompt` with `sampling` (over the model's defaults), on this thread.
    /// `ignore_eos` keeps going past stop tokens (for measuring throughput).
    pub fn generate(
        &self,
        prompt: &[u32],
        sampling: &Sampling,
        ignore_eos: bool,
    ) -> Result<Generation, ModelError> {
        let job = self.job(prompt.len(), &sampling.or(&self.defaults), ignore_eos)?;
        self.engine
            .generate(prompt, &job, &AtomicBool::new(false))
            .map_err(failure)
    }

    /// The model's logprob of each token of `continuation` after `prompt`, with those tokens
    /// forced (teacher forcing) instead of chosen: the prompt runs as generation runs it,
    /// then each token in turn through the key-value cache. For a generated continuation
    /// these are the logprobs generation reported.
    pub fn score(&self, prompt: &[u32], continuation: &[u32]) -> Result<Vec<f64>, ModelError> {
        self.check_fits(prompt.len() + continuation.len(), 0)?;
        self.engine
            .score(prompt, continuation, &AtomicBool::new(false))
            .map_err(failure)
    }

    /// How a generation after `prompt_len` tokens runs, or why it cannot.
    fn job(
        &self,
        prompt_len: usize,
        sampling: &Sampling,
        ignore_eos: bool,
    ) -> Result<Job, ModelError> {
        let context = self.engine.info.context_length;
        let requested = sampling.max_tokens.map(|n| n as usize);
        self.check_fits(prompt_len, requested.unwrap_or(1))?;
        let max_tokens = requested
            .unwrap_or(DEFAULT_MAX_TOKENS)
            .min(context - prompt_len);
        let temperature = sampling.temperature.unwrap_or(1.0);
        if !(temperature >= 0.0 && temperature.is_finite()) {
            return Err(ModelError::config(format!(
                "temperature {temperature} is not a number of at least 0 (model.sampling.temperature)"
            )));
        }
        let top_p = sampling.top_p.unwrap_or(1.0);
        if !(top_p > 0.0 && top_p <= 1.0) {
            return Err(ModelError::config(format!(
                "top_p {top_p} is not in (0, 1] (model.sampling.top_p)"
            )));
        }
        Ok(Job {
            sampling: SamplingParams {
                temperature,
                top_p,
                seed: sampling.seed,
            },
            max_tokens,
            stop: sampling.stop.clone().unwrap_or_default(),
            ignore_eos,
        })
    }

    /// Whether `prompt_len` tokens plus `new_tokens` fit the context.
    fn check_fits(&self, prompt_len: usize, new_tokens: usize) -> Result<(), ModelError> {
        let info = &self.engine.info;
        if prompt_len == 0 {
            return Err(ModelError::config(
                "the prompt is empty: there is nothing to continue",
            ));
        }
        if prompt_len + new_tokens > info.context_length {
            return Err(ModelError::ContextLength {
                detail: format!(
                    "the prompt has {prompt_len} tokens and {new_tokens} more were asked for, but \
                     {} ({}) takes at most {} tokens here{}",
                    info.name,
                    info.path.display(),
                    info.context_length,
                    if info.context_length < info.trained_context_length {
                        format!(
                            " (trained for {}; candle's Llama computes {} positions)",
                            info.trained_context_length, info.context_length
                        )
                    } else {
                        String::new()
                    }
                ),
            });
        }
        Ok(())
    }

    /// One call, on the blocking thread.
    fn answer(
        &self,
        request: &ModelRequest,
        cancel: &AtomicBool,
    ) -> Result<ModelResponse, ModelError> {
        let started = Instant::now();
        let prompt = self.prompt_tokens(&request.input)?;
        let job = self.job(prompt.len(), &request.sampling.or(&self.defaults), false)?;
        let generation = self
            .engine
            .generate(&prompt, &job, cancel)
            .map_err(failure)?;
        let usage = Usage {
            prompt_tokens: prompt.len() as u64,
            completion_tokens: generation.tokens.len() as u64,
            ..Usage::default()
        };
        let capture = request.capture_tokens;
        Ok(ModelResponse {
            content: generation.text,
            finish_reason: Some(generation.finish.as_str().to_owned()),
            usage,
            latency: started.elapsed(),
            attempts: 1,
            prompt_token_ids: capture.then_some(prompt),
            completion_token_ids: capture.then_some(generation.tokens),
            logprobs: capture.then_some(generation.logprobs),
            ..ModelResponse::default()
        })
    }
}

/// Sets its flag when dropped: the generation of a call whose future is gone stops.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Model for EmbeddedModel {
    fn complete<'a>(&'a self, request: &'a ModelRequest) -> ModelFuture<'a> {
        let model = self.clone();
        let request = request.clone();
        Box::pin(async move {
            let flag = Arc::new(AtomicBool::new(false));
            let _cancel = CancelOnDrop(flag.clone());
            let started = Instant::now();
            let mut response = tokio::task::spawn_blocking(move || model.answer(&request, &flag))
                .await
                .map_err(|error| {
                    ModelError::malformed(format!("the embedded model's thread failed: {error}"))
                })??;
            response.latency = started.elapsed();
            Ok(response)
        })
    }

    fn name(&self) -> &str {
        &self.name
    }
}

fn failure(failure: Failure) -> ModelError {
    match failure {
        Failure::Cancelled => ModelError::config("the call was cancelled"),
        Failure::Model(detail) => ModelError::malformed(detail),
    }
}
