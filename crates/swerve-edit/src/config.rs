//! [`EditConfig`]: the `[edit]` section of swerve's configuration. The viewer and editor
//! subagents have models of their own (endpoint, name, sampling, timeouts, retries),
//! independent of the main agent's `[model]`; so do edit-bench's judge, instruction
//! writer and embedder (the embedding viewer baseline). Unset models are not used.
//! `commands` offers `llm_editor` to `swerve run`'s agent with those commands (none by
//! default: the tool is not offered).
//!
//! ```toml
//! [edit]
//! commands = ["view", "create", "edit"]
//!
//! [edit.editor]
//! base_url = "http://127.0.0.1:8001/v1"
//! name = "Qwen/Qwen3-8B"
//! [edit.editor.sampling]
//! max_tokens = 16384        # SWE-Edit's limit for the editor (4096 for the viewer)
//!
//! [edit.matching]
//! whitespace_fallback = true
//! did_you_mean = true
//! ```

use serde::{Deserialize, Serialize};
use swerve_llm::HttpModelConfig;

use crate::blocks::MatchOptions;
use crate::tool::LlmEditorCommand;

/// The `[edit]` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EditConfig {
    /// The `llm_editor` commands `swerve run` offers its agent; empty (the default): the
    /// tool is not offered.
    pub commands: Vec<LlmEditorCommand>,
    /// The viewer subagent's model (`llm_editor view`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewer: Option<HttpModelConfig>,
    /// The editor subagent's model (`llm_editor edit`, `swerve edit-bench run --editor`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor: Option<HttpModelConfig>,
    /// edit-bench's equivalence judge (`swerve edit-bench run --judge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<HttpModelConfig>,
    /// The model that writes edit-bench instructions from commits
    /// (`swerve edit-bench build --writer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writer: Option<HttpModelConfig>,
    /// The embedding model of edit-bench's embedding viewer baseline
    /// (`swerve edit-bench viewers --embedder`), served behind `{base_url}/embeddings`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedder: Option<HttpModelConfig>,
    /// The matching aids beyond SWE-Edit (both off by default).
    pub matching: MatchOptions,
    /// The editor's format policy: `adaptive` (SWE-Edit), `find-replace` or `rewrite`
    /// (the fixed formats of its ablation, Table 5). Saved only when not adaptive.
    #[serde(skip_serializing_if = "crate::format::EditFormat::is_adaptive")]
    pub format: crate::format::EditFormat,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_section_parses_and_unset_models_stay_unset() {
        let text = DOC;
        let config: EditConfig = toml::from_str(text).unwrap();
        let editor = config.editor.unwrap();
        assert_eq!(editor.model, "Qwen/Qwen3-8B");
        assert_eq!(editor.sampling.max_tokens, Some(16384));
        assert_eq!(
            editor.max_retries, 5,
            "unset fields take the model defaults"
        );
        assert!(config.viewer.is_none() && config.judge.is_none());
        assert_eq!(config.commands, LlmEditorCommand::ALL);
        assert!(toml::from_str::<EditConfig>("commands = [\"delete\"]\n").is_err());
        assert!(config.matching.whitespace_fallback && config.matching.did_you_mean);
        assert!(toml::from_str::<EditConfig>("[matching]\nfuzzy = true\n").is_err());
        assert_eq!(
            toml::to_string(&EditConfig::default()).unwrap(),
            "commands = []\n\n[matching]\nwhitespace_fallback = false\ndid_you_mean = false\n"
        );
    }

    const DOC: &str = "commands = [\"view\", \"create\", \"edit\"]\n[editor]\nbase_url = \"http://127.0.0.1:8001/v1\"\nname = \"Qwen/Qwen3-8B\"\n[editor.sampling]\nmax_tokens = 16384\n[matching]\nwhitespace_fallback = true\ndid_you_mean = true\n";
}
