//! The embedded model (`name = "embedded"` in a model section): a small GGUF model run in
//! swerve's own process on the CPU by `swerve-embedded`, when swerve is built with the
//! `embedded` feature (on by default). See `docs/embedded.md`.

use std::sync::Arc;

use anyhow::Result;
use swerve_llm::{HttpModelConfig, Model};

/// The model name that selects the embedded model.
pub const EMBEDDED: &str = "embedded";

/// Loads the embedded model a model section (`section`, e.g. `model`) describes: the GGUF
/// file at `path`, else the default model in the models directory, sampling by its
/// `[sampling]` defaults.
#[cfg(feature = "embedded")]
pub fn load(config: &HttpModelConfig, section: &str) -> Result<Arc<dyn Model>> {
    use anyhow::{Context, bail};
    use swerve_embedded::EmbeddedModel;

    if !config.base_url.is_empty() {
        bail!(
            "{section}.base_url is set ({}) but the model is `{EMBEDDED}`, which runs in this \
             process; unset the base URL, or give the served model's name instead of \
             `{EMBEDDED}` to use the server",
            config.base_url
        );
    }
    if !config.extra_body.is_empty() {
        bail!(
            "{section}.extra_body is set, but it is sent to servers and the embedded model \
             reads none of it; remove it, or use [{section}.sampling] (temperature, top_p, \
             max_tokens, stop, seed)"
        );
    }
    let path = swerve_embedded::resolve(config.path.as_deref())
        .with_context(|| format!("the embedded model ({section}.path)"))?;
    let model = EmbeddedModel::load(&path)
        .with_context(|| format!("the embedded model ({section}.path)"))?
        .with_name(EMBEDDED)
        .with_sampling(config.sampling.clone());
    let info = model.info();
    eprintln!(
        "embedded model: {} ({}, {:.0} MB, {}-token context, tokenizer from {})",
        info.name,
        info.path.display(),
        info.file_bytes as f64 / 1e6,
        info.context_length,
        info.tokenizer
    );
    Ok(Arc::new(model))
}

/// Without the `embedded` feature there is no embedded model: says how to get one.
#[cfg(not(feature = "embedded"))]
pub fn load(_config: &HttpModelConfig, section: &str) -> Result<Arc<dyn Model>> {
    anyhow::bail!(
        "{section}.name is `{EMBEDDED}`, but this swerve was built without the `embedded` \
         feature; rebuild it with the default features (cargo build --release), or give a \
         served model's name and base URL"
    )
}
