//! [`DatasetError`]: why tasks could not be loaded, named so the user knows what to do.

use swerve_core::task::TaskFileError;

/// An error loading or selecting tasks. Messages name the file, dataset, row or option at
/// fault and what to do; none contains a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DatasetError {
    /// A task file (JSON) that does not load, or a Parquet row that is not a task.
    #[error(transparent)]
    TaskFile(#[from] TaskFileError),
    /// A Parquet file that cannot be read.
    #[error("{file}: cannot read it as Parquet: {message}")]
    Parquet {
        /// The file, as given.
        file: String,
        /// What the Parquet or Arrow reader said.
        message: String,
    },
    /// A hub dataset name that is not `org/name[@revision]`.
    #[error("hf://{given}: {problem}; write hf://ORG/NAME or hf://ORG/NAME@REVISION")]
    BadDatasetName {
        /// The name after `hf://`.
        given: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A hub dataset without `--split`.
    #[error("hf://{dataset}: which split? give --split (e.g. --split test)")]
    NoSplit {
        /// The dataset.
        dataset: String,
    },
    /// `--split` or `--subset` given for a local file.
    #[error(
        "{option} applies to hf:// datasets, not to the file {file}; drop it, or name a hub dataset as hf://ORG/NAME"
    )]
    OptionForFile {
        /// The option.
        option: &'static str,
        /// The file given.
        file: String,
    },
    /// A `--slice` that is not `START:STOP[:STEP]`.
    #[error(
        "--slice {given:?}: {problem}; write START:STOP or START:STOP:STEP (Python's slice, e.g. 0:5 or -10:)"
    )]
    BadSlice {
        /// The value given.
        given: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A `--filter` that is not a regular expression.
    #[error("--filter {given:?}: not a regular expression: {message}")]
    BadFilter {
        /// The value given.
        given: String,
        /// The regex parser's message.
        message: String,
    },
    /// The dataset has no data files for the split (and subset) asked for.
    #[error("hf://{dataset}: no data files for {wanted}; the dataset has: {available}")]
    NoDataFiles {
        /// The dataset.
        dataset: String,
        /// The split (and subset) asked for.
        wanted: String,
        /// The data files it has, or a note that it has none.
        available: String,
    },
    /// The dataset is not in the cache and the hub may not be asked.
    #[error(
        "hf://{dataset}: {wanted} is not in the Hugging Face cache {cache} and HF_HUB_OFFLINE is set; unset it to download, or fill the cache (huggingface-cli download --repo-type dataset {repo})"
    )]
    Offline {
        /// The dataset.
        dataset: String,
        /// The split (and subset) asked for.
        wanted: String,
        /// The cache directory searched.
        cache: String,
        /// `org/name`.
        repo: String,
    },
    /// The hub answered with an error status.
    #[error("hf://{dataset}: the hub answered {status} to {what}{hint}")]
    Hub {
        /// The dataset.
        dataset: String,
        /// What was asked, e.g. "the revision's file list".
        what: String,
        /// The HTTP status.
        status: u16,
        /// What to do about it, starting with "; ".
        hint: &'static str,
    },
    /// The hub could not be reached, or its answer was not what its API returns.
    #[error("hf://{dataset}: {what}: {message}")]
    Network {
        /// The dataset.
        dataset: String,
        /// What was being done.
        what: String,
        /// The cause (never the token).
        message: String,
    },
    /// The cache directory could not be read or written.
    #[error("Hugging Face cache {path}: {message}")]
    Cache {
        /// The path at fault.
        path: String,
        /// The I/O error.
        message: String,
    },
}
