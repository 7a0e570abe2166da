//! [`chat_model`]: a GGUF file's tokenizer and chat template as a `swerve_chat::ChatModel`,
//! read from its metadata alone (no weights), so that token counts of conversations (the
//! compression rate of SWE-AGILE's reward, context statistics, token exports) are those of
//! the model the file holds, as for a model directory with `tokenizer.json` (which
//! swerve-chat reads itself, and [`chat_model`] hands to it).

use std::path::Path;

use swerve_chat::ChatModel;

use crate::engine::{chat_template, special_tokens};
use crate::error::{Error, Result};
use crate::gguf::Gguf;
use crate::tokenizer::Tokenizer;

/// The tokenizer (`tokenizer.json` beside the file, else the one built from the metadata)
/// and chat template of the GGUF file `path`, or of the Hugging Face model directory `path`.
/// A model without a chat template is an error.
pub fn chat_model(path: &Path) -> Result<ChatModel> {
    if path.is_dir() {
        return ChatModel::from_dir(path).map_err(|source| Error::Template {
            path: path.to_path_buf(),
            source,
        });
    }
    let gguf = Gguf::open(path)?;
    let tokenizer = Tokenizer::for_model(&gguf)?;
    let special = special_tokens(&gguf, &tokenizer)?;
    let Some(template) = chat_template(&gguf, special)? else {
        return Err(gguf.error(
            "tokenizer.chat_template",
            "is missing: token counts of conversations need the model's chat template",
        ));
    };
    let tokenizer =
        swerve_chat::Tokenizer::from_tokenizer(path, tokenizer.into_inner()).map_err(|source| {
            Error::Template {
                path: path.to_path_buf(),
                source,
            }
        })?;
    Ok(ChatModel::from_parts(path, tokenizer, template))
}
