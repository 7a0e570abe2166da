//! Datasets as users have them.
//!
//! `--tasks` names a [`TaskSource`]: a task file (JSON array, JSON lines or a single object,
//! read by [`swerve_core::task`]), a Parquet file (each row a task, read by [`parquet`]), or a
//! Hugging Face hub dataset `hf://org/name[@revision]` with a split and an optional subset
//! (the hub's name for a configuration), resolved through the local Hugging Face cache first
//! and then the hub's HTTP API ([`hub`]). A [`Selection`] then picks tasks the way
//! mini-swe-agent's `--filter`, `--shuffle` and `--slice` do.
//!
//! ```no_run
//! use swerve_datasets::{HubSettings, Selection, TaskSource};
//!
//! let source = TaskSource::parse("hf://princeton-nlp/SWE-bench_Verified", Some("test"), None)?;
//! let tasks = source.load(&HubSettings::from_env())?;
//! let first_five = Selection::new(None, None, Some("0:5"))?.apply(tasks);
//! # Ok::<(), swerve_datasets::DatasetError>(())
//! ```

#![deny(missing_docs)]

mod error;
pub mod hub;
pub mod parquet;
mod select;

use std::fmt;
use std::path::{Path, PathBuf};

use swerve_core::Task;
use swerve_core::task::load_tasks;

pub use error::DatasetError;
pub use hub::{HubDataset, HubSettings};
pub use select::{Selection, Slice};

/// Where tasks come from: a file, or a hub dataset with its split and subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskSource {
    /// A task file or a Parquet file, by its extension.
    File(PathBuf),
    /// A dataset on the Hugging Face hub.
    Hub {
        /// The dataset and revision.
        dataset: HubDataset,
        /// The split, e.g. `test`.
        split: String,
        /// The subset (configuration), when the dataset has several.
        subset: Option<String>,
    },
}

impl TaskSource {
    /// The source `text` names: `hf://org/name[@revision]` is a hub dataset, which needs
    /// `split`; anything else is a file path, for which `split` and `subset` must be absent.
    pub fn parse(
        text: &str,
        split: Option<&str>,
        subset: Option<&str>,
    ) -> Result<Self, DatasetError> {
        match text.strip_prefix(hub::SCHEME) {
            Some(name) => {
                let dataset = HubDataset::parse(name)?;
                let split = split.ok_or_else(|| DatasetError::NoSplit {
                    dataset: dataset.to_string(),
                })?;
                Ok(Self::Hub {
                    dataset,
                    split: split.to_owned(),
                    subset: subset.map(str::to_owned),
                })
            }
            None => {
                if let Some(option) = [("--split", split), ("--subset", subset)]
                    .into_iter()
                    .find_map(|(option, value)| value.map(|_| option))
                {
                    return Err(DatasetError::OptionForFile {
                        option,
                        file: text.to_owned(),
                    });
                }
                Ok(Self::File(PathBuf::from(text)))
            }
        }
    }

    /// The tasks of this source, in the source's order. A hub dataset is read from the
    /// cache `settings` names, downloading into it what is missing.
    pub fn load(&self, settings: &HubSettings) -> Result<Vec<Task>, DatasetError> {
        match self {
            Self::File(path) => load_file(path),
            Self::Hub {
                dataset,
                split,
                subset,
            } => {
                let files = hub::resolve(dataset, split, subset.as_deref(), settings)?;
                let mut tasks = Vec::new();
                for file in files {
                    tasks.extend(load_file(&file)?);
                }
                Ok(tasks)
            }
        }
    }

    /// The local file, for a [`TaskSource::File`].
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::File(path) => Some(path),
            Self::Hub { .. } => None,
        }
    }
}

impl fmt::Display for TaskSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Hub {
                dataset,
                split,
                subset,
            } => {
                write!(f, "{}{dataset} split {split}", hub::SCHEME)?;
                match subset {
                    Some(subset) => write!(f, " subset {subset}"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The tasks of the file at `path`: Parquet for a `.parquet` name (any case), otherwise a
/// task file (JSON array, JSON lines or one object). Errors name the file, the record or
/// row, the task and the field.
pub fn load_file(path: &Path) -> Result<Vec<Task>, DatasetError> {
    if is_parquet(path) {
        parquet::load_tasks(path)
    } else {
        load_tasks(path).map_err(DatasetError::from)
    }
}

/// Whether `path` names a Parquet file (by its extension).
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| ext.eq_ignore_ascii_case("parquet"))
}
