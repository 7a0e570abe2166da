//! The `swerve.toml` configuration file and the command-line options that override it.
//!
//! Lookup: `--config FILE`, else `./swerve.toml` if present, else defaults. Every section is
//! optional; unknown keys are errors (a typo must not silently do nothing). See
//! `docs/configuration.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;
use swerve_sandbox::{Cache, PatchOptions, RepoMap, SandboxConfig, Strategy, WorkspaceOptions};
use swerve_tools::ToolConfig;

/// The whole configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Cache directory (bases, workspace layers).
    pub cache_dir: Option<PathBuf>,
    /// Directory holding repositories as `owner/name` (same as `--repos`).
    pub repos_dir: Option<PathBuf>,
    /// Explicit `owner/name` → local path or URL.
    pub repos: BTreeMap<String, String>,
    /// Sandbox settings.
    pub sandbox: SandboxConfig,
    /// Workspace settings.
    pub workspace: WorkspaceSection,
    /// Patch settings.
    pub patch: PatchOptions,
    /// Native tool settings.
    pub tools: ToolConfig,
}

/// The `[workspace]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceSection {
    /// Layer strategy: auto, overlay, reflink or copy.
    pub strategy: Strategy,
}

impl Config {
    /// Loads `path`, or `./swerve.toml` when `path` is `None` and that file exists.
    pub fn load(path: Option<&Path>) -> Result<Self> {
        let path = match path {
            Some(path) => path.to_path_buf(),
            None if Path::new("swerve.toml").exists() => PathBuf::from("swerve.toml"),
            None => return Ok(Self::default()),
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let config: Self = toml::from_str(&text).map_err(|error| {
            anyhow::anyhow!("{}: {}", path.display(), error.to_string().trim_end())
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Ok(config.relative_to(base))
    }

    /// Paths in a config file are relative to the file's directory.
    fn relative_to(mut self, base: &Path) -> Self {
        let resolve = |path: PathBuf| {
            if path.is_relative() {
                base.join(path)
            } else {
                path
            }
        };
        self.cache_dir = self.cache_dir.map(resolve);
        self.repos_dir = self.repos_dir.map(resolve);
        self
    }

    /// Opens the cache directory.
    pub fn cache(&self) -> Result<Cache> {
        let dir = self.cache_dir.clone().unwrap_or_else(Cache::default_dir);
        Cache::open(&dir).with_context(|| format!("cannot open the cache at {}", dir.display()))
    }

    /// How repository names map to sources for tasks loaded from `task_file`: the configured
    /// directory first, then a `repos/` directory beside the task file or its parent (the
    /// layout of the bundled examples).
    pub fn repo_map(&self, task_file: &Path) -> RepoMap {
        let task_dir = task_file.parent().unwrap_or(Path::new("."));
        let beside = [task_dir.join("repos"), task_dir.join("..").join("repos")];
        RepoMap {
            repos_dirs: self
                .repos_dir
                .iter()
                .cloned()
                .chain(beside.into_iter().filter(|dir| dir.is_dir()))
                .collect(),
            explicit: self.repos.clone(),
        }
    }

    /// Options for new workspaces.
    pub fn workspace_options(&self) -> WorkspaceOptions {
        WorkspaceOptions {
            strategy: self.workspace.strategy,
            sandbox: self.sandbox.clone(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every TOML block of `docs/configuration.md`, joined, is a valid configuration.
    #[test]
    fn the_documented_configuration_parses() {
        let doc = include_str!("../../../docs/configuration.md");
        let blocks: Vec<&str> = doc
            .split("```toml")
            .skip(1)
            .map(|block| block.split("```").next().unwrap())
            .collect();
        assert!(blocks.len() >= 2);
        let config: Config = toml::from_str(&blocks.join("\n")).unwrap();
        assert_eq!(config.repos.len(), 2);
        assert_eq!(config.sandbox.limits.memory_bytes, Some(4 << 30));
        assert!(!config.tools.python_only);
    }

    #[test]
    fn an_unknown_key_is_rejected() {
        assert!(toml::from_str::<Config>("[tools]\npython_onyl = true\n").is_err());
        assert!(toml::from_str::<Config>("[sandbox.limits]\nmemory = 1\n").is_err());
    }
}
