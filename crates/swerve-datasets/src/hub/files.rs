//! Which files of a dataset repository hold a split, after the `datasets` library's default
//! data-file patterns (`datasets/data_files.py`): a data file (`.parquet`, `.jsonl`,
//! `.ndjson`, `.json`) belongs to a split when a word of its path, words being separated by
//! `-`, `_`, `.`, space, digits or `/`, is one of the split's keywords (`train`/`training`;
//! `validation`/`valid`/`dev`/`val`; `test`/`testing`/`eval`/`evaluation`; any other split
//! by its own name). A repository none of whose files names a split holds one split,
//! `train`. A subset keeps the files with a directory of its name (`SUBSET/…`, as in the
//! hub's Parquet conversion, `SUBSET/SPLIT/0000.parquet`).

use std::collections::BTreeMap;
use std::fmt;

/// The split and subset asked for.
#[derive(Debug, Clone, Copy)]
pub struct Wanted<'a> {
    /// The split.
    pub split: &'a str,
    /// The subset (configuration), if one was named.
    pub subset: Option<&'a str>,
}

impl fmt::Display for Wanted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "split {:?}", self.split)?;
        match self.subset {
            Some(subset) => write!(f, " of subset {subset:?}"),
            None => Ok(()),
        }
    }
}

const DATA_EXTENSIONS: [&str; 4] = [".parquet", ".jsonl", ".ndjson", ".json"];

const SPLIT_KEYWORDS: [(&str, &[&str]); 3] = [
    ("train", &["train", "training"]),
    ("validation", &["validation", "valid", "dev", "val"]),
    ("test", &["test", "testing", "eval", "evaluation"]),
];

/// Whether `path` (a repository path with `/`) is a data file.
pub fn is_data_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    DATA_EXTENSIONS.iter().any(|ext| lower.ends_with(ext))
        && !path
            .split('/')
            .any(|part| part.starts_with('.') || part.starts_with("__"))
}

/// The data files among `paths` that hold `wanted`, sorted.
pub fn select<'a>(paths: impl IntoIterator<Item = &'a str>, wanted: &Wanted) -> Vec<String> {
    let mut data: Vec<&str> = paths
        .into_iter()
        .filter(|path| is_data_file(path))
        .collect();
    data.sort_unstable();
    data.dedup();
    let in_dir = |path: &str, dir: &str| {
        let mut parts: Vec<&str> = path.split('/').collect();
        parts.pop();
        parts.contains(&dir)
    };
    match wanted.subset {
        Some(subset) => data.retain(|path| in_dir(path, subset)),
        None if data.iter().any(|path| path.starts_with("default/")) => {
            data.retain(|path| path.starts_with("default/"));
        }
        None => {}
    }
    let names_a_split = |path: &str| {
        words(path).any(|word| {
            SPLIT_KEYWORDS
                .iter()
                .any(|(_, keywords)| keywords.contains(&word.as_str()))
        })
    };
    let split = wanted.split.to_ascii_lowercase();
    if !data.iter().any(|path| names_a_split(path))
        && !data
            .iter()
            .any(|path| words(path).any(|word| word == split))
    {
        return if split == "train" {
            data.into_iter().map(str::to_owned).collect()
        } else {
            Vec::new()
        };
    }
    let keywords: Vec<&str> = SPLIT_KEYWORDS
        .iter()
        .find(|(name, _)| *name == split)
        .map_or_else(|| vec![split.as_str()], |(_, keywords)| keywords.to_vec());
    data.into_iter()
        .filter(|path| words(path).any(|word| keywords.contains(&word.as_str())))
        .map(str::to_owned)
        .collect()
}

/// Whether every shard of the sharded files among `files` (`NAME-00001-of-00003.parquet`,
/// as `datasets` names them) is there.
pub fn shards_complete(files: &[String]) -> bool {
    let mut shards: BTreeMap<(String, usize), Vec<usize>> = BTreeMap::new();
    for file in files {
        if let Some((prefix, index, count)) = shard(file) {
            shards.entry((prefix, count)).or_default().push(index);
        }
    }
    shards.into_iter().all(|((_, count), mut indices)| {
        indices.sort_unstable();
        indices.dedup();
        indices == (0..count).collect::<Vec<_>>()
    })
}

/// `(prefix, index, count)` of a shard name `PREFIX-IIIII-of-NNNNN.EXT`.
fn shard(file: &str) -> Option<(String, usize, usize)> {
    let stem = &file[..file.rfind('.')?];
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (prefix, index) = rest.rsplit_once('-')?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    (digits(index) && digits(count))
        .then(|| Some((prefix.to_owned(), index.parse().ok()?, count.parse().ok()?)))
        .flatten()
}

/// The words of `path`, lower-cased.
fn words(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split(|c: char| "-_. /".contains(c) || c.is_ascii_digit())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::{Wanted, select, shards_complete};

    fn wanted<'a>(split: &'a str, subset: Option<&'a str>) -> Wanted<'a> {
        Wanted { split, subset }
    }

    /// File lists of real hub datasets (their `siblings`), as of 2025.
    #[test]
    fn splits_of_the_usual_datasets() {
        let verified = [
            ".gitattributes",
            "README.md",
            "data/test-00000-of-00001.parquet",
        ];
        assert_eq!(
            select(verified, &wanted("test", None)),
            ["data/test-00000-of-00001.parquet"]
        );
        assert!(select(verified, &wanted("train", None)).is_empty());
        let lite = [
            "README.md",
            "data/dev-00000-of-00001.parquet",
            "data/test-00000-of-00001.parquet",
        ];
        assert_eq!(
            select(lite, &wanted("dev", None)),
            ["data/dev-00000-of-00001.parquet"]
        );
        let gym = [
            "data/train-00000-of-00002.parquet",
            "data/train-00001-of-00002.parquet",
        ];
        assert_eq!(select(gym, &wanted("train", None)).len(), 2);
        assert!(!shards_complete(&[
            "data/train-00001-of-00002.parquet".to_owned()
        ]));
        assert!(shards_complete(&select(gym, &wanted("train", None))));
    }

    #[test]
    fn a_subset_is_a_directory_and_unnamed_files_are_train() {
        let converted = [
            "default/test/0000.parquet",
            "lite/test/0000.parquet",
            "lite/dev/0000.parquet",
        ];
        assert_eq!(
            select(converted, &wanted("test", Some("lite"))),
            ["lite/test/0000.parquet"]
        );
        assert_eq!(
            select(converted, &wanted("test", None)),
            ["default/test/0000.parquet"]
        );
        assert_eq!(
            select(["tasks.jsonl"], &wanted("train", None)),
            ["tasks.jsonl"]
        );
        assert!(select(["tasks.jsonl"], &wanted("test", None)).is_empty());
    }
}
