//! The world models (transition, reward, analysis) built from their configuration sections,
//! each configured as `[model]` is: a served model over HTTP, or `embedded`.

use std::sync::Arc;

use anyhow::Result;
use swerve_llm::{HttpModelConfig, Model};

use crate::embedded::{self, EMBEDDED};

/// The model `server` (the section `section`, e.g. `world.reward_model`) describes, or
/// `None` when its name is unset. A name without a base URL is an error saying what to set.
pub fn load(server: &HttpModelConfig, section: &str) -> Result<Option<Arc<dyn Model>>> {
    if server.model.is_empty() {
        return Ok(None);
    }
    if server.model == EMBEDDED {
        return embedded::load(server, section).map(Some);
    }
    if server.base_url.is_empty() {
        anyhow::bail!(
            "{section}.name is `{}` but {section}.base_url is unset: give the base URL of its \
             OpenAI-compatible server (vLLM, SGLang, …), e.g. http://localhost:8000/v1, or name \
             `{EMBEDDED}` to run the embedded model",
            server.model
        );
    }
    Ok(Some(Arc::new(swerve_llm::HttpModel::new(server.clone())?)))
}

/// Like [`load`], for a model that `purpose` needs: an error naming the settings when unset.
pub fn require(server: &HttpModelConfig, section: &str, purpose: &str) -> Result<Arc<dyn Model>> {
    load(server, section)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{purpose} needs {section}: set {section}.name and {section}.base_url (an \
             OpenAI-compatible server), or name `{EMBEDDED}` to run the embedded model"
        )
    })
}
