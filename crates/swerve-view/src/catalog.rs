//! What is being viewed: run directories and loose trajectory files, named by the keys the
//! pages use, read from disk on every request (so a run still writing shows its new steps)
//! through a cache that re-reads a file only when its size or modification time changed.
//!
//! Keys are opaque strings the server hands out and takes back: `r<run>:<stem>` for the
//! trajectory `trajectories/<stem>.jsonl` of run `<run>`, `f<file>:<n>` for the `n`-th
//! trajectory of a loose file (an R2E-Gym or OpenHands file holds many). A key is only ever
//! compared with the names of listed files, never joined to a path, so no request can name a
//! file outside what was given on the command line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use swerve_core::trajectory::import::detect_and_import;
use swerve_core::trajectory::{Trajectory, read_trajectory};

/// The runs and files given to `swerve view`.
#[derive(Debug)]
pub struct Catalog {
    /// Run directories (`swerve run --out`), in the order given.
    pub runs: Vec<PathBuf>,
    /// Trajectory files in any format `swerve traj convert` reads.
    pub files: Vec<PathBuf>,
    cache: Mutex<HashMap<PathBuf, Cached>>,
}

/// A file's trajectories as last read, and the size and time they were read at.
#[derive(Debug, Clone)]
struct Cached {
    stamp: Stamp,
    read: Arc<Result<Vec<Trajectory>, String>>,
}

/// A file's length and modification time: when either changes, the file is read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

/// Where a key points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// The trajectory file `stem` (without `.jsonl`) of run `run`.
    Run {
        /// The run's position in [`Catalog::runs`].
        run: usize,
        /// The file name without `.jsonl`.
        stem: String,
    },
    /// The `n`-th trajectory of loose file `file`.
    File {
        /// The file's position in [`Catalog::files`].
        file: usize,
        /// The trajectory's position in the file.
        n: usize,
    },
}

impl Key {
    /// Parses a key the pages send back; `None` for anything else.
    pub fn parse(key: &str) -> Option<Key> {
        let (source, rest) = key.split_once(':')?;
        let index: usize = source.get(1..)?.parse().ok()?;
        match source.as_bytes().first()? {
            b'r' if !rest.is_empty() => Some(Key::Run {
                run: index,
                stem: rest.to_owned(),
            }),
            b'f' => Some(Key::File {
                file: index,
                n: rest.parse().ok()?,
            }),
            _ => None,
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Run { run, stem } => write!(f, "r{run}:{stem}"),
            Key::File { file, n } => write!(f, "f{file}:{n}"),
        }
    }
}

impl Catalog {
    /// Sorts `paths` into runs and files: a directory with `trajectories/` inside is a run,
    /// a directory without one whose subdirectories have it is a folder of runs (each one
    /// viewed), any other existing file is a trajectory file. Errors name the path and say
    /// what to give instead.
    pub fn new(paths: &[PathBuf]) -> Result<Catalog> {
        let mut runs = Vec::new();
        let mut files = Vec::new();
        for path in paths {
            let metadata = std::fs::metadata(path).with_context(|| {
                format!(
                    "cannot read {}: give run directories (`swerve run --out`) or trajectory files",
                    path.display()
                )
            })?;
            if !metadata.is_dir() {
                files.push(path.clone());
            } else if path.join("trajectories").is_dir() {
                runs.push(path.clone());
            } else {
                let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                    .with_context(|| format!("cannot read {}", path.display()))?
                    .filter_map(|entry| Some(entry.ok()?.path()))
                    .filter(|dir| dir.join("trajectories").is_dir())
                    .collect();
                if inside.is_empty() {
                    bail!(
                        "{}: not a run directory (no trajectories/ inside, nor in its \
                         subdirectories)\nhint: give the --out directory of `swerve run`, a \
                         folder of them, or trajectory files",
                        path.display()
                    );
                }
                inside.sort();
                runs.extend(inside);
            }
        }
        if runs.is_empty() && files.is_empty() {
            bail!("nothing to view\nhint: give run directories or trajectory files");
        }
        Ok(Catalog {
            runs,
            files,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The trajectory files of run `run` as `(stem, path)`, sorted by name; an empty list
    /// while the run has not written any.
    pub fn run_files(&self, run: usize) -> Vec<(String, PathBuf)> {
        let Some(dir) = self.runs.get(run) else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir.join("trajectories")) else {
            return Vec::new();
        };
        let mut files: Vec<(String, PathBuf)> = entries
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                let stem = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".jsonl")?
                    .to_owned();
                Some((stem, path))
            })
            .collect();
        files.sort();
        files
    }

    /// The trajectory of a run's file (swerve's format: errors name the line and field),
    /// read again only when the file changed.
    pub fn read_run_file(&self, path: &Path) -> Arc<Result<Vec<Trajectory>, String>> {
        self.read(path, |path| {
            read_trajectory(path)
                .map(|read| vec![read.trajectory])
                .map_err(|error| error.to_string())
        })
    }

    /// The trajectories of a loose file in any format `swerve traj convert` reads, read
    /// again only when the file changed.
    pub fn read_file(&self, path: &Path) -> Arc<Result<Vec<Trajectory>, String>> {
        self.read(path, |path| {
            detect_and_import(path).map_err(|error| error.to_string())
        })
    }

    /// What `parse` makes of `path`, cached by the file's size and modification time.
    fn read(
        &self,
        path: &Path,
        parse: impl FnOnce(&Path) -> Result<Vec<Trajectory>, String>,
    ) -> Arc<Result<Vec<Trajectory>, String>> {
        let stamp = std::fs::metadata(path).ok().map(|metadata| Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
        });
        if let Some(stamp) = stamp
            && let Some(cached) = self.lock().get(path).filter(|c| c.stamp == stamp)
        {
            return cached.read.clone();
        }
        let read = Arc::new(parse(path));
        if let Some(stamp) = stamp {
            self.lock().insert(
                path.to_owned(),
                Cached {
                    stamp,
                    read: read.clone(),
                },
            );
        }
        read
    }

    /// The trajectory `key` names, or a message saying why there is none.
    pub fn trajectory(&self, key: &Key) -> Result<Trajectory, String> {
        let (read, n) = match key {
            Key::Run { run, stem } => {
                let path = self
                    .run_files(*run)
                    .into_iter()
                    .find(|(name, _)| name == stem)
                    .map(|(_, path)| path)
                    .ok_or_else(|| format!("no trajectory {key}"))?;
                (self.read_run_file(&path), 0)
            }
            Key::File { file, n } => {
                let path = self
                    .files
                    .get(*file)
                    .ok_or_else(|| format!("no trajectory {key}"))?;
                (self.read_file(path), *n)
            }
        };
        match read.as_ref() {
            Ok(trajectories) => trajectories
                .get(n)
                .cloned()
                .ok_or_else(|| format!("no trajectory {key}")),
            Err(error) => Err(error.clone()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Cached>> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_round_trip() {
        for key in [
            Key::Run {
                run: 3,
                stem: "django__django-1__0".into(),
            },
            Key::File { file: 0, n: 12 },
        ] {
            assert_eq!(Key::parse(&key.to_string()), Some(key));
        }
        for bad in ["", "r:x", "x1:2", "f1:", "f1:-2", "r1:", "1:2"] {
            assert_eq!(Key::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_directory_without_runs_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let error = Catalog::new(&[dir.path().to_owned()]).unwrap_err();
        assert!(format!("{error:#}").contains("not a run directory"));
        let missing = dir.path().join("missing");
        let error = Catalog::new(std::slice::from_ref(&missing)).unwrap_err();
        assert!(format!("{error:#}").contains(&missing.display().to_string()));
    }

    #[test]
    fn a_folder_of_runs_views_each_run_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for run in ["b", "a", "not-a-run"] {
            std::fs::create_dir_all(dir.path().join(run)).unwrap();
        }
        for run in ["b", "a"] {
            std::fs::create_dir_all(dir.path().join(run).join("trajectories")).unwrap();
        }
        let catalog = Catalog::new(&[dir.path().to_owned()]).unwrap();
        assert_eq!(catalog.runs, [dir.path().join("a"), dir.path().join("b")]);
        assert!(catalog.files.is_empty());
    }

    #[test]
    fn a_stem_names_only_a_listed_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("run/trajectories")).unwrap();
        std::fs::write(dir.path().join("secret.jsonl"), "{}").unwrap();
        let catalog = Catalog::new(&[dir.path().join("run")]).unwrap();
        let key = Key::Run {
            run: 0,
            stem: "../../secret".into(),
        };
        assert_eq!(
            catalog.trajectory(&key).unwrap_err(),
            "no trajectory r0:../../secret"
        );
    }

    proptest! {
        #[test]
        fn any_key_text_parses_or_is_refused(text in ".{0,40}") {
            if let Some(key) = Key::parse(&text) {
                prop_assert_eq!(Key::parse(&key.to_string()), Some(key));
            }
        }
    }
}
