//! Where model files are: swerve's models directory (`$SWERVE_MODELS_DIR`, else
//! `~/.cache/swerve/models`), the default model's file name in it, and how a configured path
//! or the default is turned into a model that exists (a GGUF file or a Hugging Face model
//! directory), with an error saying how to get it.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The environment variable that overrides the models directory.
pub const MODELS_DIR_ENV: &str = "SWERVE_MODELS_DIR";

/// The default model: SmolLM2-135M-Instruct quantized to Q4_1 (Apache-2.0), as
/// `scripts/fetch-model.sh` puts it in the models directory.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// swerve's models directory: `$SWERVE_MODELS_DIR` when set and not empty, else
/// `swerve/models` in the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`).
pub fn models_dir() -> PathBuf {
    match std::env::var_os(MODELS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::cache_dir()
            .unwrap_or_else(|| PathBuf::from(".cache"))
            .join("swerve")
            .join("models"),
    }
}

/// Where the default model's file belongs (it may not be there yet).
pub fn default_model_path() -> PathBuf {
    models_dir().join(DEFAULT_MODEL_FILE)
}

/// The model to load: `configured` when given (a GGUF file, a Hugging Face model directory,
/// which has a `config.json`, or a directory holding exactly one `.gguf` file), else the
/// default model in the models directory.
pub fn resolve(configured: Option<&Path>) -> Result<PathBuf> {
    let Some(configured) = configured else {
        let path = default_model_path();
        if path.is_file() {
            return Ok(path);
        }
        return Err(Error::NotFound {
            path,
            why: None,
            hint: format!(
                "run scripts/fetch-model.sh to download the default model (SmolLM2-135M-Instruct, \
                 about 93 MB) into the models directory (${MODELS_DIR_ENV}, default \
                 ~/.cache/swerve/models), or set model.path to a GGUF file"
            ),
        });
    };
    if configured.is_file() {
        return Ok(configured.to_path_buf());
    }
    if configured.is_dir() {
        if crate::hf::is_model_dir(configured) {
            return Ok(configured.to_path_buf());
        }
        return single_gguf(configured);
    }
    Err(Error::NotFound {
        path: configured.to_path_buf(),
        why: Some("model.path names no file or directory".to_owned()),
        hint: "give a GGUF file or a Hugging Face model directory, or unset model.path to use \
               the default model (scripts/fetch-model.sh fetches it)"
            .to_owned(),
    })
}

/// The one `.gguf` file in `dir`.
fn single_gguf(dir: &Path) -> Result<PathBuf> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "gguf") && path.is_file())
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(Error::NotFound {
            path: dir.to_path_buf(),
            why: Some(
                "the directory holds no .gguf file, and no config.json of a Hugging Face model"
                    .to_owned(),
            ),
            hint: "set model.path to a GGUF file or a Hugging Face model directory \
                   (config.json, tokenizer.json, *.safetensors)"
                .to_owned(),
        }),
        _ => Err(Error::NotFound {
            path: dir.to_path_buf(),
            why: Some(format!(
                "the directory holds {} .gguf files ({})",
                found.len(),
                found
                    .iter()
                    .filter_map(|path| path.file_name())
                    .map(|name| name.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            hint: "set model.path to one of them".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_says_how_to_get_one() {
        let error = resolve(Some(Path::new("/nonexistent/model.gguf"))).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("/nonexistent/model.gguf"), "{text}");
        assert!(text.contains("model.path"), "{text}");
    }

    #[test]
    fn a_directory_must_hold_exactly_one_gguf_file() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let text = resolve(Some(dir)).unwrap_err().to_string();
        assert!(text.contains("no .gguf file"), "{text}");
        std::fs::write(dir.join("a.gguf"), b"").unwrap();
        assert_eq!(resolve(Some(dir)).unwrap(), dir.join("a.gguf"));
        std::fs::write(dir.join("b.gguf"), b"").unwrap();
        let text = resolve(Some(dir)).unwrap_err().to_string();
        assert!(text.contains("a.gguf, b.gguf"), "{text}");
    }

    #[test]
    fn a_directory_with_a_config_is_a_hugging_face_model() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::write(temp.path().join("a.gguf"), b"").unwrap();
        std::fs::write(temp.path().join("config.json"), b"{}").unwrap();
        assert_eq!(resolve(Some(temp.path())).unwrap(), temp.path());
    }
}
