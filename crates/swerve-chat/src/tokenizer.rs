//! [`Tokenizer`]: a Hugging Face `tokenizer.json`, encoding as the Python `tokenizers` library
//! does (the same Rust crate, with the same Oniguruma regex engine).
//!
//! Truncation and padding settings stored in the file are switched off, as transformers
//! does when asked for neither: counts are of the whole text.

use std::path::{Path, PathBuf};

use swerve_core::tokens::{ApproxTokens, TokenCounter};

use crate::error::{Error, Result};

/// A loaded `tokenizer.json`.
pub struct Tokenizer {
    path: PathBuf,
    inner: tokenizers::Tokenizer,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Exact counts for budgets (no special tokens added). A text the tokenizer cannot encode
/// (rare: a broken vocabulary) is counted as [`ApproxTokens`] counts it, so that a budget
/// still holds.
impl TokenCounter for Tokenizer {
    fn count(&self, text: &str) -> usize {
        Tokenizer::count(self, text, false).unwrap_or_else(|_| ApproxTokens.count(text))
    }
}

impl Tokenizer {
    /// Loads a `tokenizer.json`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let bytes = std::fs::read(&path).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        let load_error = |message: String| Error::Tokenizer {
            path: path.clone(),
            message,
        };
        let mut inner =
            tokenizers::Tokenizer::from_bytes(&bytes).map_err(|err| load_error(err.to_string()))?;
        inner
            .with_truncation(None)
            .map_err(|err| load_error(err.to_string()))?;
        inner.with_padding(None);
        Ok(Self { path, inner })
    }

    /// A tokenizer built elsewhere (from a GGUF file's metadata); `path` names it.
    pub fn from_tokenizer(
        path: impl Into<PathBuf>,
        mut inner: tokenizers::Tokenizer,
    ) -> Result<Self> {
        let path = path.into();
        inner
            .with_truncation(None)
            .map_err(|err| Error::Tokenizer {
                path: path.clone(),
                message: err.to_string(),
            })?;
        inner.with_padding(None);
        Ok(Self { path, inner })
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The token ids of `text`. With `add_special_tokens`, the tokenizer's post-processor adds
    /// its tokens (Llama 3's `<|begin_of_text|>`; nothing for Qwen); special tokens written in
    /// the text are always recognised.
    pub fn encode(&self, text: &str, add_special_tokens: bool) -> Result<Vec<u32>> {
        self.inner
            .encode_fast(text, add_special_tokens)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|err| self.tokenize_error("encode", &*err))
    }

    /// How many tokens [`Tokenizer::encode`] gives.
    pub fn count(&self, text: &str, add_special_tokens: bool) -> Result<usize> {
        self.encode(text, add_special_tokens).map(|ids| ids.len())
    }

    /// The text of `ids`; with `skip_special_tokens`, special tokens are left out. Ids the
    /// vocabulary does not have are skipped.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        self.inner
            .decode(ids, skip_special_tokens)
            .map_err(|err| self.tokenize_error("decode", &*err))
    }

    /// The id of a token (a special token such as `<|im_end|>`, or a vocabulary entry).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    fn tokenize_error(&self, action: &'static str, err: &dyn std::error::Error) -> Error {
        Error::Tokenize {
            path: self.path.clone(),
            action,
            message: err.to_string(),
        }
    }
}
