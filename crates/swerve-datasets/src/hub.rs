//! Hugging Face hub datasets: `hf://org/name[@revision]`, a split and a subset, resolved to
//! local data files.
//!
//! The local Hugging Face cache comes first, in the layout `huggingface_hub` writes
//! ([`cache`]): `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`, holding
//! `datasets--ORG--NAME/{refs/REVISION, snapshots/COMMIT/PATH, blobs/ETAG}`. When the
//! revision's snapshot there holds every data file of the split, nothing is asked of the
//! network. Otherwise the hub's HTTP API is asked ([`http`]) at `$HF_ENDPOINT` (default
//! `https://huggingface.co`), with `Authorization: Bearer $HF_TOKEN` (else the token file
//! `huggingface-cli login` writes) when there is one: the revision's file list
//! (`/api/datasets/ORG/NAME/revision/REVISION`), then each data file from
//! `/datasets/ORG/NAME/resolve/COMMIT/PATH`, following redirects (the token only goes to the
//! endpoint's own host), written into the cache as `huggingface_hub` would, so the next load
//! and Python's `datasets` both find it. A dataset kept in a format the hub converts, with
//! no data file of its own for the split, is read from the hub's Parquet conversion
//! (`/api/datasets/ORG/NAME/parquet/SUBSET/SPLIT`). `HF_HUB_OFFLINE=1` forbids the network.
//!
//! Which files hold a split is decided by [`files`], after the `datasets` library's default
//! data-file patterns.

pub mod cache;
pub mod files;
pub mod http;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::DatasetError;

/// The prefix naming a hub dataset in `--tasks`.
pub const SCHEME: &str = "hf://";

/// The hub's public endpoint.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// A dataset repository on the hub and a revision (branch, tag or commit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubDataset {
    /// `org/name`.
    pub repo: String,
    /// The revision; `None` is the default branch, `main`.
    pub revision: Option<String>,
}

impl HubDataset {
    /// Parses `org/name[@revision]` (the text after `hf://`; a leading `datasets/`, as in
    /// `huggingface_hub`'s `hf://datasets/org/name` paths, is accepted).
    pub fn parse(given: &str) -> Result<Self, DatasetError> {
        let bad = |problem| DatasetError::BadDatasetName {
            given: given.to_owned(),
            problem,
        };
        let name = given.strip_prefix("datasets/").unwrap_or(given);
        let (repo, revision) = match name.split_once('@') {
            Some((_, "")) => return Err(bad("the revision after @ is empty")),
            Some((repo, revision)) => (repo, Some(revision.to_owned())),
            None => (name, None),
        };
        let parts: Vec<&str> = repo.split('/').collect();
        let valid_part = |part: &&str| {
            !part.is_empty()
                && !part.starts_with('.')
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        match parts.as_slice() {
            [org, name] if valid_part(org) && valid_part(name) => Ok(Self {
                repo: repo.to_owned(),
                revision,
            }),
            [_, _] => Err(bad(
                "an organization or name is empty or holds characters other than letters, digits, -, _ and .",
            )),
            _ => Err(bad("a dataset is named ORG/NAME")),
        }
    }

    /// The revision asked for, `main` by default.
    pub fn revision(&self) -> &str {
        self.revision.as_deref().unwrap_or("main")
    }
}

impl fmt::Display for HubDataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repo)?;
        match &self.revision {
            Some(revision) => write!(f, "@{revision}"),
            None => Ok(()),
        }
    }
}

/// Where the hub and its cache are, and the token, as `huggingface_hub` reads them from
/// the environment. `Debug` never shows the token.
#[derive(Clone)]
pub struct HubSettings {
    /// The hub's base URL, without a trailing slash.
    pub endpoint: String,
    /// The access token, sent only to the endpoint's host.
    pub token: Option<String>,
    /// The cache directory (the one holding `datasets--ORG--NAME`).
    pub cache: PathBuf,
    /// Never ask the network (`HF_HUB_OFFLINE`).
    pub offline: bool,
}

impl HubSettings {
    /// The settings of this process's environment: `HF_ENDPOINT`, `HF_TOKEN` (else the file
    /// `$HF_TOKEN_PATH` or `$HF_HOME/token`), `HF_HUB_CACHE` or `HF_HOME`, `HF_HUB_OFFLINE`.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The settings `lookup` (an environment) gives.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let given = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let home = given("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
            given("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| dirs::home_dir().map(|home| home.join(".cache")))
                .unwrap_or_else(|| PathBuf::from(".cache"))
                .join("huggingface")
        });
        let token = given("HF_TOKEN").or_else(|| {
            let path = given("HF_TOKEN_PATH")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join("token"));
            std::fs::read_to_string(path)
                .ok()
                .map(|token| token.trim().to_owned())
                .filter(|token| !token.is_empty())
        });
        let truthy = |name: &str| {
            given(name).is_some_and(|value| {
                ["1", "on", "yes", "true"].contains(&value.trim().to_ascii_lowercase().as_str())
            })
        };
        Self {
            endpoint: given("HF_ENDPOINT")
                .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            token,
            cache: given("HF_HUB_CACHE")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join("hub")),
            offline: truthy("HF_HUB_OFFLINE"),
        }
    }
}

impl fmt::Debug for HubSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HubSettings")
            .field("endpoint", &self.endpoint)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("cache", &self.cache)
            .field("offline", &self.offline)
            .finish()
    }
}

/// The local data files of `split` (and `subset`) of `dataset`: from the cache when it
/// holds them all, else downloaded into it.
pub fn resolve(
    dataset: &HubDataset,
    split: &str,
    subset: Option<&str>,
    settings: &HubSettings,
) -> Result<Vec<PathBuf>, DatasetError> {
    let wanted = files::Wanted { split, subset };
    if let Some(files) = cache::find(&settings.cache, dataset, &wanted)? {
        tracing::debug!(dataset = %dataset, "read from the Hugging Face cache");
        return Ok(files);
    }
    if settings.offline {
        return Err(DatasetError::Offline {
            dataset: dataset.to_string(),
            wanted: wanted.to_string(),
            cache: settings.cache.display().to_string(),
            repo: dataset.repo.clone(),
        });
    }
    http::download(dataset, &wanted, settings)
}

/// The cache directory of `repo` under `cache` (`datasets--ORG--NAME`).
pub fn repo_dir(cache: &Path, repo: &str) -> PathBuf {
    cache.join(format!("datasets--{}", repo.replace('/', "--")))
}
