//! Initial analyses, generated once per task and kept on disk: the file is keyed by the
//! task id, the analysis model's name and a hash of the request, so reruns, other samples
//! and other commands reuse it while a changed task, model or prompt gets a fresh one.
//! Concurrent rollouts of one task wait for a single generation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use swerve_core::Task;
use swerve_core::atomic::write_json_atomically;
use swerve_eval::evaluate::sha256;
use swerve_llm::Model;
use tokio::sync::OnceCell;

use super::generate_analysis;
use crate::WorldConfig;
use crate::context::analysis_messages;
use crate::tokens::ApproxTokens;

/// One cached analysis, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedAnalysis {
    /// The task's id.
    pub instance_id: String,
    /// The analysis model's name.
    pub model: String,
    /// SHA-256 of the request's messages.
    pub prompt_sha256: String,
    /// The analysis.
    pub analysis: String,
}

/// The initial analyses of a run (or none, when no analysis model is configured).
pub struct Analyses {
    model: Option<Arc<dyn Model>>,
    config: WorldConfig,
    dir: PathBuf,
    cells: Mutex<HashMap<String, Arc<OnceCell<Option<String>>>>>,
}

impl Analyses {
    /// The analyses `model` (built from `config.analysis_model`; `None` when it is unset)
    /// writes, cached under `cache_root/world/analysis`.
    pub fn new(model: Option<Arc<dyn Model>>, config: &WorldConfig, cache_root: &Path) -> Self {
        Self {
            model,
            config: config.clone(),
            dir: cache_root.join("world").join("analysis"),
            cells: Mutex::default(),
        }
    }

    /// `task`'s analysis: the row's own `initial_analysis` when it has one (SWE-World's
    /// rows carry it, App. A.1), else from the cache, else generated and cached. `None` when no analysis
    /// model is configured, or when generation failed (logged; the world models then see
    /// no analysis, and the next rollout tries again).
    pub async fn get(&self, task: &Task) -> Option<String> {
        if let Some(own) = row_analysis(task) {
            return Some(own.to_owned());
        }
        let model = self.model.as_ref()?;
        let cell = self
            .cells
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(task.instance_id.clone())
            .or_default()
            .clone();
        let analysis = cell
            .get_or_init(|| self.load_or_generate(model.as_ref(), task))
            .await
            .clone();
        if analysis.is_none() {
            // Let a later call try again.
            self.cells
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .remove(&task.instance_id);
        }
        analysis
    }

    /// Where `task`'s analysis by `model` from `prompt_sha256` is kept.
    fn path(&self, task: &Task, model: &str, prompt_sha256: &str) -> PathBuf {
        let key = sha256(&format!("{}\0{model}\0{prompt_sha256}", task.instance_id));
        let safe: String = task
            .instance_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.dir.join(format!("{safe}-{}.json", &key[..16]))
    }

    async fn load_or_generate(&self, model: &dyn Model, task: &Task) -> Option<String> {
        let messages = analysis_messages(task, &self.config.context, &ApproxTokens);
        let prompt_sha256 = sha256(&serde_json::to_string(&messages).unwrap_or_default());
        let name = self.config.analysis_model.model.clone();
        let path = self.path(task, &name, &prompt_sha256);
        if let Ok(bytes) = std::fs::read(&path) {
            match serde_json::from_slice::<CachedAnalysis>(&bytes) {
                Ok(cached) => return Some(cached.analysis),
                Err(error) => tracing::warn!(
                    "{}: unreadable cached analysis ({error}); generating it again",
                    path.display()
                ),
            }
        }
        let analysis = match generate_analysis(
            model,
            task,
            &self.config.context,
            &self.config.analysis,
            &ApproxTokens,
        )
        .await
        {
            Ok(analysis) => analysis,
            Err(error) => {
                tracing::warn!("task {}: no initial analysis: {error}", task.instance_id);
                return None;
            }
        };
        let cached = CachedAnalysis {
            instance_id: task.instance_id.clone(),
            model: name,
            prompt_sha256,
            analysis: analysis.text,
        };
        let stored =
            std::fs::create_dir_all(&self.dir).and_then(|()| write_json_atomically(&path, &cached));
        if let Err(error) = stored {
            tracing::warn!("cannot cache the analysis at {}: {error}", path.display());
        }
        Some(cached.analysis)
    }
}

/// The task row's own `initial_analysis`, when it is a non-empty string.
pub fn row_analysis(task: &Task) -> Option<&str> {
    task.extra
        .get("initial_analysis")
        .and_then(|value| value.as_str())
        .filter(|text| !text.trim().is_empty())
}

#[cfg(test)]
mod row_tests {
    use super::*;

    /// SWE-World's rows carry their own `initial_analysis` (App. A.1): it is used as it is,
    /// without asking (or needing) an analysis model; an empty one counts as none.
    #[tokio::test]
    async fn a_rows_own_analysis_is_used() {
        let cache = tempfile::tempdir().unwrap();
        let analyses = Analyses::new(None, &WorldConfig::default(), cache.path());
        let mut task = Task::new("o__r-1", "o/r", "abc", "It breaks.");
        assert_eq!(analyses.get(&task).await, None);
        task.extra
            .insert("initial_analysis".into(), "- the row's analysis".into());
        assert_eq!(
            analyses.get(&task).await.as_deref(),
            Some("- the row's analysis")
        );
        task.extra.insert("initial_analysis".into(), "  ".into());
        assert_eq!(row_analysis(&task), None);
    }
}
