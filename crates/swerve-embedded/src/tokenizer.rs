//! The model's tokenizer: a `tokenizer.json` beside the GGUF file when there is one, else a
//! byte-level BPE tokenizer built from the file's `tokenizer.ggml.*` metadata (GPT-2-style
//! vocabularies: SmolLM, Llama 3). The built tokenizer is described as a Hugging Face
//! `tokenizer.json` document and loaded by the same `tokenizers` crate swerve-chat uses, so
//! it encodes exactly as Hugging Face's would with the same vocabulary, merges and
//! pre-tokenizer.

use std::path::Path;

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::gguf::Gguf;

/// GGUF token types that are special tokens: control (3) and user-defined (4).
const SPECIAL_TOKEN_TYPES: [i64; 2] = [3, 4];

/// Llama 3's split pattern (`tokenizer.ggml.pre = "llama-bpe"`), as in its `tokenizer.json`.
const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A loaded tokenizer.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Where it came from, for errors: the GGUF file or the `tokenizer.json`.
    origin: String,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

/// What a byte-level BPE tokenizer is made of, as GGUF metadata (or a `tokenizer.json`)
/// lists it.
pub struct BpeParts<'a> {
    /// Token texts, by id (byte-level: `Ġ` for a space).
    pub tokens: &'a [&'a str],
    /// Merges, as `"left right"`, by rank.
    pub merges: &'a [&'a str],
    /// Ids of the special tokens (matched whole in any text, skipped when decoding).
    pub special: &'a [u32],
    /// The pre-tokenizer's name, as `tokenizer.ggml.pre` gives it.
    pub pre: &'a str,
    /// A token added in front when encoding with special tokens (Llama 3's BOS).
    pub bos: Option<u32>,
}

impl Tokenizer {
    /// The tokenizer for the model in `gguf`: `tokenizer.json` beside the file if present,
    /// else one built from the metadata.
    pub(crate) fn for_model(gguf: &Gguf) -> Result<Self> {
        let beside = gguf.path.with_file_name("tokenizer.json");
        if beside.is_file() {
            return Self::from_file(&beside);
        }
        Self::from_metadata(gguf)
    }

    /// Loads a Hugging Face `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let error = |message: String| Error::Tokenizer {
            path: path.to_path_buf(),
            message,
        };
        let inner =
            tokenizers::Tokenizer::from_bytes(&bytes).map_err(|err| error(err.to_string()))?;
        Self::ready(inner, path.display().to_string()).map_err(error)
    }

    /// A byte-level BPE tokenizer from its parts. `origin` names it in errors.
    pub fn from_bpe(parts: &BpeParts<'_>, origin: &str) -> Result<Self, String> {
        let document = bpe_document(parts)?;
        let inner = tokenizers::Tokenizer::from_bytes(document.to_string().as_bytes())
            .map_err(|err| err.to_string())?;
        Self::ready(inner, origin.to_owned())
    }

    fn from_metadata(gguf: &Gguf) -> Result<Self> {
        let model = gguf.string("tokenizer.ggml.model")?;
        if model != "gpt2" {
            return Err(Error::Unsupported {
                path: gguf.path.clone(),
                what: format!(
                    "tokenizer.ggml.model is `{model}`; only byte-level BPE (`gpt2`) tokenizers \
                     are built from GGUF metadata. Put the model's tokenizer.json beside the \
                     file to use it instead"
                ),
            });
        }
        let tokens = gguf.strings("tokenizer.ggml.tokens")?;
        let merges = gguf.strings("tokenizer.ggml.merges")?;
        let types = gguf
            .opt_ints("tokenizer.ggml.token_type")?
            .unwrap_or_default();
        if !types.is_empty() && types.len() != tokens.len() {
            return Err(gguf.error(
                "tokenizer.ggml.token_type",
                format!("has {} entries for {} tokens", types.len(), tokens.len()),
            ));
        }
        let special: Vec<u32> = types
            .iter()
            .enumerate()
            .filter(|(_, kind)| SPECIAL_TOKEN_TYPES.contains(kind))
            .filter_map(|(id, _)| u32::try_from(id).ok())
            .collect();
        let pre = gguf.opt_string("tokenizer.ggml.pre")?.unwrap_or("default");
        let add_bos = gguf
            .opt_bool("tokenizer.ggml.add_bos_token")?
            .unwrap_or(false);
        let bos = match gguf.opt_u64("tokenizer.ggml.bos_token_id")? {
            Some(id) if add_bos => Some(token_id(
                gguf,
                "tokenizer.ggml.bos_token_id",
                id,
                tokens.len(),
            )?),
            _ => None,
        };
        let parts = BpeParts {
            tokens: &tokens,
            merges: &merges,
            special: &special,
            pre,
            bos,
        };
        Self::from_bpe(&parts, &gguf.path.display().to_string()).map_err(|message| {
            Error::Tokenizer {
                path: gguf.path.clone(),
                message,
            }
        })
    }

    fn ready(mut inner: tokenizers::Tokenizer, origin: String) -> Result<Self, String> {
        inner.with_truncation(None).map_err(|err| err.to_string())?;
        inner.with_padding(None);
        Ok(Self { inner, origin })
    }

    /// The token ids of `text`; with `add_special_tokens`, the post-processor's tokens too
    /// (a BOS for models that want one). Special tokens written in the text are recognised.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>, String> {
        self.inner
            .encode_fast(text, add_special_tokens)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|err| format!("{}: cannot encode: {err}", self.origin))
    }

    /// The text of `ids`, without special tokens when `skip_special_tokens`.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String, String> {
        self.inner
            .decode(ids, skip_special_tokens)
            .map_err(|err| format!("{}: cannot decode: {err}", self.origin))
    }

    /// The token text (as stored in the vocabulary) of `id`.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The id of a token text.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// Writes the tokenizer as a Hugging Face `tokenizer.json` at `path`: a GGUF model's
    /// tokenizer (built from its metadata) for a model directory of the same model.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.inner
            .save(path, false)
            .map_err(|err| Error::Tokenizer {
                path: path.to_path_buf(),
                message: format!("cannot write it: {err}"),
            })
    }

    /// The Hugging Face tokenizer inside.
    pub(crate) fn into_inner(self) -> tokenizers::Tokenizer {
        self.inner
    }

    /// Tokens in the vocabulary, special ones included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }
}

/// The id `value` of `key`, checked against the vocabulary.
pub(crate) fn token_id(gguf: &Gguf, key: &str, value: u64, vocab: usize) -> Result<u32> {
    u32::try_from(value)
        .ok()
        .filter(|&id| (id as usize) < vocab)
        .ok_or_else(|| {
            gguf.error(
                key,
                format!("is {value}, outside the vocabulary of {vocab} tokens"),
            )
        })
}

/// The `tokenizer.json` document of a byte-level BPE tokenizer.
fn bpe_document(parts: &BpeParts<'_>) -> Result<Value, String> {
    let byte_level = |use_regex: bool| json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex});
    // The pre-tokenizers llama.cpp names in `tokenizer.ggml.pre`, written as the models' own
    // tokenizer.json files write them.
    let (pre_tokenizer, ignore_merges) = match parts.pre {
        "default" | "gpt-2" | "gpt2" => (byte_level(true), false),
        "smollm" => (
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "Digits", "individual_digits": true},
                byte_level(true),
            ]}),
            false,
        ),
        "llama-bpe" | "llama3" => (
            json!({"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated", "invert": false},
                byte_level(false),
            ]}),
            true,
        ),
        other => {
            return Err(format!(
                "tokenizer.ggml.pre `{other}` is not one this backend can build (it knows \
                 default, gpt-2, smollm and llama-bpe); put the model's tokenizer.json beside \
                 the file to use it instead"
            ));
        }
    };
    let mut vocab = serde_json::Map::with_capacity(parts.tokens.len());
    for (id, token) in parts.tokens.iter().enumerate() {
        vocab.insert((*token).to_owned(), json!(id));
    }
    if vocab.len() != parts.tokens.len() {
        return Err(format!(
            "the vocabulary lists {} tokens but only {} distinct texts",
            parts.tokens.len(),
            vocab.len()
        ));
    }
    let token_text = |id: u32| {
        parts
            .tokens
            .get(id as usize)
            .copied()
            .ok_or_else(|| format!("token id {id} is outside the vocabulary"))
    };
    let mut added = Vec::with_capacity(parts.special.len());
    for &id in parts.special {
        added.push(json!({
            "id": id, "content": token_text(id)?, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true,
        }));
    }
    let post_processor = match parts.bos {
        None => Value::Null,
        Some(id) => {
            let bos = token_text(id)?;
            json!({
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": bos, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {bos: {"id": bos, "ids": [id], "tokens": [bos]}},
            })
        }
    };
    Ok(json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
            "ignore_merges": ignore_merges, "vocab": vocab, "merges": parts.merges,
        },
    }))
}
