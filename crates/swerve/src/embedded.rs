//! The embedded model (`name = "embedded"` in a model section): a small GGUF model run in
//! swerve's own process on the CPU by `swerve-embedded`, when swerve is built with the
//! `embedded` feature (on by default). See `docs/embedded.md`. [`model`] builds what a
//! model section other than the agent's own names (SWE-Edit's subagents, edit-bench's
//! editor, judge and writer): the embedded model or a served one.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use swerve_llm::{ApiMode, HttpModel, HttpModelConfig, Model, PriceTable};

/// The model name that selects the embedded model.
pub const EMBEDDED: &str = "embedded";

/// The model the section `section` (e.g. `edit.viewer`) describes: the embedded model when
/// it is named `embedded`, else the served model at its base URL, priced by `prices`. Such
/// models are sent chat messages, so a served one must be in chat mode.
pub fn model(
    config: &HttpModelConfig,
    section: &str,
    prices: PriceTable,
) -> Result<Arc<dyn Model>> {
    if config.model == EMBEDDED {
        return load(config, section);
    }
    if config.model.is_empty() {
        bail!(
            "{section}.name is not set: give the served model's name (and {section}.base_url), \
             or `{EMBEDDED}` to run the embedded model"
        );
    }
    if config.base_url.is_empty() {
        bail!(
            "{section}.name is {} but {section}.base_url is not set: give the base URL of its \
             OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1), or name `{EMBEDDED}` to \
             run the embedded model",
            config.model
        );
    }
    if config.mode != ApiMode::Chat {
        bail!("{section} is sent chat messages: set {section}.mode = \"chat\"");
    }
    let http = HttpModel::new(config.clone())
        .with_context(|| section.to_owned())?
        .with_prices(prices);
    Ok(Arc::new(http))
}

/// Loads the embedded model a model section (`section`, e.g. `model`) describes: the GGUF
/// file at `path`, else the default model in the models directory, sampling by its
/// `[sampling]` defaults.
#[cfg(feature = "embedded")]
pub fn load(config: &HttpModelConfig, section: &str) -> Result<Arc<dyn Model>> {
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
    bail!(
        "{section}.name is `{EMBEDDED}`, but this swerve was built without the `embedded` \
         feature; rebuild it with the default features (cargo build --release), or give a \
         served model's name and base URL"
    )
}
