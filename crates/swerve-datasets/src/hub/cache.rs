//! The local Hugging Face cache, in the layout `huggingface_hub` writes
//! (`file_download.py`): under the cache directory, `datasets--ORG--NAME/` holds
//! `refs/REVISION` (a file holding the commit a branch or tag pointed to),
//! `snapshots/COMMIT/PATH` (each a relative symbolic link to `blobs/ETAG`) and `blobs/ETAG`
//! (the content, named by the hub's ETag: the SHA-256 of a large file, the git blob id of a
//! small one).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::files::{self, Wanted};
use super::{HubDataset, repo_dir};
use crate::DatasetError;

/// The revision the hub converts datasets to Parquet on.
pub const PARQUET_CONVERSION: &str = "refs/convert/parquet";

/// The cached data files of `wanted` in `dataset`, if the cache holds them all: in the
/// revision asked for, or (for the default revision) in the hub's Parquet conversion.
pub fn find(
    cache: &Path,
    dataset: &HubDataset,
    wanted: &Wanted,
) -> Result<Option<Vec<PathBuf>>, DatasetError> {
    let repo = repo_dir(cache, &dataset.repo);
    if !repo.is_dir() {
        return Ok(None);
    }
    let mut revisions = vec![dataset.revision()];
    if dataset.revision.is_none() {
        revisions.push(PARQUET_CONVERSION);
    }
    for revision in revisions {
        let Some(commit) = commit_of(&repo, revision) else {
            continue;
        };
        let snapshot = repo.join("snapshots").join(&commit);
        let mut paths = Vec::new();
        list_files(&snapshot, "", &mut paths).map_err(|error| cache_error(&snapshot, &error))?;
        let selected = files::select(paths.iter().map(String::as_str), wanted);
        if !selected.is_empty() && files::shards_complete(&selected) {
            return Ok(Some(
                selected.iter().map(|path| snapshot.join(path)).collect(),
            ));
        }
    }
    Ok(None)
}

/// The commit `revision` resolves to in the cached `repo`: itself when it is a commit with
/// a snapshot, else what `refs/REVISION` holds.
pub fn commit_of(repo: &Path, revision: &str) -> Option<String> {
    let is_commit = revision.len() == 40 && revision.bytes().all(|b| b.is_ascii_hexdigit());
    if is_commit && repo.join("snapshots").join(revision).is_dir() {
        return Some(revision.to_owned());
    }
    let commit = fs::read_to_string(repo.join("refs").join(revision)).ok()?;
    let commit = commit.trim();
    (!commit.is_empty() && !commit.contains(['/', '.'])).then(|| commit.to_owned())
}

/// Records that `revision` of `repo` is `commit` (nothing for a commit itself).
pub fn set_ref(repo: &Path, revision: &str, commit: &str) -> Result<(), DatasetError> {
    if revision == commit {
        return Ok(());
    }
    let path = repo.join("refs").join(revision);
    write_new(&path, commit.as_bytes())
}

/// Stores a downloaded file: the content already in `partial` (a file under `repo`'s
/// `blobs/`) becomes `blobs/ETAG`, and `snapshots/COMMIT/PATH` links to it. The path of
/// the snapshot file.
pub fn store(
    repo: &Path,
    commit: &str,
    path: &str,
    etag: &str,
    partial: &Path,
) -> Result<PathBuf, DatasetError> {
    let blob = repo.join("blobs").join(etag);
    fs::rename(partial, &blob).map_err(|error| cache_error(&blob, &error))?;
    let pointer = repo.join("snapshots").join(commit).join(path);
    let parent = pointer.parent().unwrap_or(repo);
    fs::create_dir_all(parent).map_err(|error| cache_error(parent, &error))?;
    let _ = fs::remove_file(&pointer);
    let depth = path.split('/').count() + 1;
    let target = Path::new(&"../".repeat(depth)).join("blobs").join(etag);
    if std::os::unix::fs::symlink(&target, &pointer).is_err() {
        fs::copy(&blob, &pointer).map_err(|error| cache_error(&pointer, &error))?;
    }
    Ok(pointer)
}

/// A new file under `repo`'s `blobs/` to download into (`*.incomplete`, as
/// `huggingface_hub` names its partial downloads).
pub fn partial_blob(repo: &Path, etag: &str) -> Result<PathBuf, DatasetError> {
    let blobs = repo.join("blobs");
    fs::create_dir_all(&blobs).map_err(|error| cache_error(&blobs, &error))?;
    Ok(blobs.join(format!("{etag}.incomplete")))
}

/// Writes `bytes` to `path` through a temporary file renamed into place.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), DatasetError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|error| cache_error(parent, &error))?;
    swerve_core::atomic::write_atomically(path, |out| io::Write::write_all(out, bytes))
        .map_err(|error| cache_error(path, &error))
}

/// Every file under `dir`, as `/`-separated paths relative to it, following links; a
/// link whose blob is missing (an interrupted download) is left out.
fn list_files(dir: &Path, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = format!("{prefix}{name}");
        let path = entry.path();
        if path.is_dir() {
            list_files(&path, &format!("{relative}/"), out)?;
        } else if path.is_file() {
            out.push(relative);
        }
    }
    Ok(())
}

pub(crate) fn cache_error(path: &Path, error: &io::Error) -> DatasetError {
    DatasetError::Cache {
        path: path.display().to_string(),
        message: error.to_string(),
    }
}
