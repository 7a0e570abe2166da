//! A loaded model (a GGUF file here, a Hugging Face directory by [`crate::hf`]) and the
//! generation loop: the prompt is run in chunks (prefill), then one
//! token at a time with the key-value cache (decode), choosing each token with the
//! [`Sampler`] until a stop token, a stop string, the token budget or the end of the context.
//! Calls take the weights one at a time (they hold the cache) and check a cancel flag
//! between tokens.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use swerve_chat::ChatTemplate;

use crate::error::{Error, Result};
use crate::gguf::Gguf;
use crate::sampler::{self, Sampler, SamplingParams};
use crate::tokenizer::{self, Tokenizer};
use crate::weights::{MAX_POSITIONS, Weights};

/// Prompt tokens run through the network at once: bounds the attention scores held in
/// memory (heads × chunk × context) for long prompts.
const PREFILL_CHUNK: usize = 512;

/// What a model is, as its metadata (a GGUF file's, or a directory's `config.json`) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The GGUF file, or the Hugging Face model directory.
    pub path: PathBuf,
    /// `general.name`, else the file name (a directory: its name).
    pub name: String,
    /// `general.architecture` (a directory: `model_type`).
    pub architecture: String,
    /// Tokens a prompt and its completion may take together here: the trained context
    /// length, capped (GGUF) by what candle's quantized Llama computes positions for.
    pub context_length: usize,
    /// `<arch>.context_length` (a directory: `max_position_embeddings`), the context the
    /// model was trained for.
    pub trained_context_length: usize,
    /// Tokens in the vocabulary.
    pub vocab_size: usize,
    /// The file's size in bytes (a directory: its safetensors files').
    pub file_bytes: u64,
    /// Bytes of the weights as they are multiplied, which generating one token reads (more
    /// than the file where types without a fast kernel were dequantized to f32).
    pub weight_bytes: u64,
    /// Where the tokenizer came from: `GGUF metadata` or a `tokenizer.json`.
    pub tokenizer: String,
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// A stop token or stop string.
    Stop,
    /// The token budget or the end of the context.
    Length,
}

impl Finish {
    /// The OpenAI name of the reason (`stop`, `length`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
        }
    }
}

/// One generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// The generated token ids, a final stop token included.
    pub tokens: Vec<u32>,
    /// The model's logprob of each generated token given everything before it.
    pub logprobs: Vec<f64>,
    /// The text of the tokens without special tokens, cut before a stop string.
    pub text: String,
    /// Why it ended.
    pub finish: Finish,
    /// Time spent running the prompt.
    pub prompt_time: Duration,
    /// Time spent generating after the prompt.
    pub generation_time: Duration,
}

/// How one generation runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Job {
    pub sampling: SamplingParams,
    /// Most tokens to generate; the caller keeps prompt + this within the context.
    pub max_tokens: usize,
    pub stop: Vec<String>,
    /// Keep going past stop tokens (benchmarks).
    pub ignore_eos: bool,
}

/// Why a generation did not finish.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The caller went away.
    Cancelled,
    /// The network, sampler or tokenizer failed; the message says where.
    Model(String),
}

/// `bos_token` and `eos_token` as texts, from the metadata's ids, for the chat template.
pub(crate) fn special_tokens(gguf: &Gguf, tokenizer: &Tokenizer) -> Result<Vec<(String, String)>> {
    let mut special_tokens = Vec::new();
    for (name, key) in [
        ("bos_token", "tokenizer.ggml.bos_token_id"),
        ("eos_token", "tokenizer.ggml.eos_token_id"),
    ] {
        if let Some(id) = gguf.opt_u64(key)? {
            let id = tokenizer::token_id(gguf, key, id, tokenizer.vocab_size())?;
            if let Some(text) = tokenizer.id_to_token(id) {
                special_tokens.push((name.to_owned(), text));
            }
        }
    }
    Ok(special_tokens)
}

/// The chat template of the metadata (`tokenizer.chat_template`) given `special_tokens`,
/// if the file has one.
pub(crate) fn chat_template(
    gguf: &Gguf,
    special_tokens: Vec<(String, String)>,
) -> Result<Option<ChatTemplate>> {
    let Some(source) = gguf.opt_string("tokenizer.chat_template")? else {
        return Ok(None);
    };
    ChatTemplate::from_source_with_tokens(
        format!("{} (tokenizer.chat_template)", gguf.path.display()),
        source,
        special_tokens,
    )
    .map(Some)
    .map_err(|source| Error::Template {
        path: gguf.path.clone(),
        source,
    })
}

/// A model loaded for generation.
pub(crate) struct Engine {
    pub info: ModelInfo,
    pub tokenizer: Tokenizer,
    /// The chat template from the metadata (or `tokenizer_config.json`), if there is one.
    pub template: Option<ChatTemplate>,
    /// `bos_token` and `eos_token` for the template.
    pub special_tokens: Vec<(String, String)>,
    /// Tokens that end a generation.
    pub stop_ids: Vec<u32>,
    weights: Mutex<Weights>,
}

impl Engine {
    /// Loads the GGUF model in `path`: metadata, tokenizer, chat template and weights.
    pub fn load(path: &Path) -> Result<Self> {
        let gguf = Gguf::open(path)?;
        let architecture = gguf.string("general.architecture")?.to_owned();
        let context_key = format!("{architecture}.context_length");
        let trained = gguf
            .opt_u64(&context_key)?
            .ok_or_else(|| gguf.error(&context_key, "is missing"))?;
        let trained = usize::try_from(trained).unwrap_or(usize::MAX);
        let tokenizer = Tokenizer::for_model(&gguf)?;
        let vocab_size = tokenizer.vocab_size();
        let mut stop_ids = Vec::new();
        for key in [
            "tokenizer.ggml.eos_token_id",
            "tokenizer.ggml.eot_token_id",
            "tokenizer.ggml.eom_token_id",
        ] {
            if let Some(id) = gguf.opt_u64(key)? {
                let id = tokenizer::token_id(&gguf, key, id, vocab_size)?;
                if !stop_ids.contains(&id) {
                    stop_ids.push(id);
                }
            }
        }
        if stop_ids.is_empty() {
            return Err(gguf.error(
                "tokenizer.ggml.eos_token_id",
                "is missing: without an end-of-sequence token generation would never stop",
            ));
        }
        let special_tokens = special_tokens(&gguf, &tokenizer)?;
        let template = chat_template(&gguf, special_tokens.clone())?;
        let beside = path.with_file_name("tokenizer.json");
        let file_bytes = gguf.file.metadata().map(|meta| meta.len()).unwrap_or(0);
        let name = match gguf.opt_string("general.name")? {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => path
                .file_name()
                .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
        };
        let weights = Weights::from_gguf(gguf)?;
        let info = ModelInfo {
            path: path.to_path_buf(),
            name,
            architecture,
            context_length: trained.min(MAX_POSITIONS),
            trained_context_length: trained,
            vocab_size,
            file_bytes,
            weight_bytes: weights.bytes,
            tokenizer: if beside.is_file() {
                beside.display().to_string()
            } else {
                "GGUF metadata".to_owned()
            },
        };
        Ok(Self::new(
            info,
            tokenizer,
            template,
            special_tokens,
            stop_ids,
            weights,
        ))
    }

    /// A model from its loaded parts.
    pub fn new(
        info: ModelInfo,
        tokenizer: Tokenizer,
        template: Option<ChatTemplate>,
        special_tokens: Vec<(String, String)>,
        stop_ids: Vec<u32>,
        weights: Weights,
    ) -> Self {
        Self {
            info,
            tokenizer,
            template,
            special_tokens,
            stop_ids,
            weights: Mutex::new(weights),
        }
    }

    fn weights(&self) -> std::sync::MutexGuard<'_, Weights> {
        // A panic inside candle cannot leave a usable-looking cache behind: every call
        // starts its sequence at position 0, which replaces the cache.
        self.weights.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Generates after `prompt` (not empty; prompt + `job.max_tokens` within the context).
    pub fn generate(
        &self,
        prompt: &[u32],
        job: &Job,
        cancel: &AtomicBool,
    ) -> Result<Generation, Failure> {
        let mut weights = self.weights();
        let result = self.run(&mut weights, prompt, job, cancel);
        weights.reset();
        result
    }

    fn run(
        &self,
        weights: &mut Weights,
        prompt: &[u32],
        job: &Job,
        cancel: &AtomicBool,
    ) -> Result<Generation, Failure> {
        let started = Instant::now();
        let mut logits = prefill(weights, prompt, cancel)?;
        let prompt_time = started.elapsed();
        let started = Instant::now();
        let mut sampler = Sampler::new(job.sampling);
        let mut tokens = Vec::new();
        let mut logprobs = Vec::new();
        let mut text = String::new();
        let finish = loop {
            if tokens.len() >= job.max_tokens {
                break Finish::Length;
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(Failure::Cancelled);
            }
            let (token, logprob) = sampler.pick(&logits).ok_or_else(|| {
                Failure::Model("the model produced logits that are not numbers".to_owned())
            })?;
            tokens.push(token);
            logprobs.push(logprob);
            if !job.ignore_eos && self.stop_ids.contains(&token) {
                text = self.decode(&tokens)?;
                break Finish::Stop;
            }
            if !job.stop.is_empty() {
                text = self.decode(&tokens)?;
                if let Some(end) = first_stop(&text, &job.stop) {
                    text.truncate(end);
                    break Finish::Stop;
                }
            }
            if tokens.len() >= job.max_tokens {
                break Finish::Length;
            }
            logits = weights
                .forward(&[token], prompt.len() + tokens.len() - 1)
                .map_err(|error| network_error(&error))?;
        };
        if finish == Finish::Length {
            text = self.decode(&tokens)?;
        }
        Ok(Generation {
            tokens,
            logprobs,
            text,
            finish,
            prompt_time,
            generation_time: started.elapsed(),
        })
    }

    fn decode(&self, tokens: &[u32]) -> Result<String, Failure> {
        self.tokenizer.decode(tokens, true).map_err(Failure::Model)
    }

    /// The model's logprob of each token of `continuation` after `prompt`, the tokens
    /// forced: the prompt is run as generation runs it, then each token in turn through the
    /// cache, and each token's logprob read from the logits before it.
    pub fn score(
        &self,
        prompt: &[u32],
        continuation: &[u32],
        cancel: &AtomicBool,
    ) -> Result<Vec<f64>, Failure> {
        let mut weights = self.weights();
        let result = score(&mut weights, prompt, continuation, cancel);
        weights.reset();
        result
    }
}

fn score(
    weights: &mut Weights,
    prompt: &[u32],
    continuation: &[u32],
    cancel: &AtomicBool,
) -> Result<Vec<f64>, Failure> {
    let mut logits = prefill(weights, prompt, cancel)?;
    let mut scores = Vec::with_capacity(continuation.len());
    for (index, &token) in continuation.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Failure::Cancelled);
        }
        let score = sampler::logprob(&logits, token as usize).ok_or_else(|| {
            Failure::Model(format!(
                "token {token} is outside the model's {} logits, or they are not numbers",
                logits.len()
            ))
        })?;
        scores.push(score);
        if index + 1 < continuation.len() {
            logits = weights
                .forward(&[token], prompt.len() + index)
                .map_err(|error| network_error(&error))?;
        }
    }
    Ok(scores)
}

/// Runs `prompt` from position 0 in chunks; the logits after its last token.
fn prefill(
    weights: &mut Weights,
    prompt: &[u32],
    cancel: &AtomicBool,
) -> Result<Vec<f32>, Failure> {
    let mut logits = Vec::new();
    for (index, chunk) in prompt.chunks(PREFILL_CHUNK).enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Failure::Cancelled);
        }
        logits = weights
            .forward(chunk, index * PREFILL_CHUNK)
            .map_err(|error| network_error(&error))?;
    }
    Ok(logits)
}

fn network_error(error: &candle_core::Error) -> Failure {
    Failure::Model(format!("the network failed: {error}"))
}

/// Where the earliest stop string starts in `text`.
fn first_stop(text: &str, stop: &[String]) -> Option<usize> {
    stop.iter()
        .filter(|stop| !stop.is_empty())
        .filter_map(|stop| text.find(stop.as_str()))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_stop_string_wins_and_empty_ones_are_ignored() {
        let stop = ["</x>".to_owned(), "b".to_owned(), String::new()];
        assert_eq!(first_stop("aab</x>b", &stop), Some(2));
        assert_eq!(first_stop("none here", &["".to_owned()]), None);
    }
}
