//! Mining PR-Edit instances from a git history: each non-merge commit that changes exactly
//! one source file (no additions, deletions or renames), within size limits, becomes an
//! instance whose original and target are the file before and after the commit and whose
//! instruction is the commit message. Runs the real `git`, isolated from the user's
//! configuration.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Map, Value};

use super::instance::{BenchError, EditInstance};

/// Which commits become instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MineOptions {
    /// Where the history starts (newest commit first).
    pub rev: String,
    /// Stop after this many instances.
    pub max_instances: usize,
    /// Skip files longer than this many lines (before or after the commit).
    pub max_file_lines: usize,
    /// Skip commits changing more lines than this (added plus deleted).
    pub max_changed_lines: usize,
    /// File extensions that count as source files (without the dot, lower case).
    pub extensions: Vec<String>,
}

impl Default for MineOptions {
    fn default() -> Self {
        Self {
            rev: "HEAD".to_owned(),
            max_instances: 500,
            max_file_lines: 2000,
            max_changed_lines: 200,
            extensions: [
                "py", "rs", "go", "js", "jsx", "ts", "tsx", "java", "kt", "c", "h", "cc", "cpp",
                "hpp", "cs", "rb", "php", "swift", "scala", "sh", "lua",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// One commit of the log.
struct Commit<'a> {
    hash: &'a str,
    parents: Vec<&'a str>,
    date: &'a str,
    message: &'a str,
    /// `(added, deleted, path)`; `None` counts for binary files.
    files: Vec<(Option<usize>, Option<usize>, &'a str)>,
}

/// Mines the history of the repository at `repo` (see the module docs), newest first.
pub fn mine(repo: &Path, options: &MineOptions) -> Result<Vec<EditInstance>, BenchError> {
    let log = git(
        repo,
        &[
            "log",
            "--no-merges",
            "--no-renames",
            "--numstat",
            "--format=%x1e%H %P%x1f%aI%x1f%B%x1f",
            &options.rev,
            "--",
        ],
    )?;
    let log = String::from_utf8_lossy(&log);
    let name = repo
        .canonicalize()
        .ok()
        .and_then(|path| Some(path.file_name()?.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repo".to_owned());
    let mut instances = Vec::new();
    let mut blobs = Blobs::start(repo)?;
    for commit in log.split('\x1e').filter_map(parse_commit) {
        if instances.len() >= options.max_instances {
            break;
        }
        if let Some(instance) = instance_of(&mut blobs, &name, &commit, options)? {
            instances.push(instance);
        }
    }
    Ok(instances)
}

fn parse_commit(record: &str) -> Option<Commit<'_>> {
    let mut parts = record.splitn(4, '\x1f');
    let (head, date, message, numstat) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let mut ids = head.split(' ').filter(|id| !id.is_empty());
    let hash = ids.next()?;
    let files = numstat
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let (added, deleted, path) = (fields.next()?, fields.next()?, fields.next()?);
            Some((added.parse().ok(), deleted.parse().ok(), path))
        })
        .collect();
    Some(Commit {
        hash,
        parents: ids.collect(),
        date,
        message: message.trim(),
        files,
    })
}

/// The instance a commit makes, if it qualifies.
fn instance_of(
    blobs: &mut Blobs,
    name: &str,
    commit: &Commit,
    options: &MineOptions,
) -> Result<Option<EditInstance>, BenchError> {
    let ([parent], [(Some(added), Some(deleted), path)]) = (&commit.parents[..], &commit.files[..])
    else {
        return Ok(None);
    };
    let extension = path
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase());
    let changed = added + deleted;
    if commit.message.is_empty()
        || path.starts_with('"')
        || changed == 0
        || changed > options.max_changed_lines
        || !extension.is_some_and(|extension| options.extensions.contains(&extension))
    {
        return Ok(None);
    }
    let (Some(original), Some(target)) = (
        text_at(blobs, parent, path, options)?,
        text_at(blobs, commit.hash, path, options)?,
    ) else {
        return Ok(None);
    };
    let metadata = Map::from_iter(
        [
            ("repo", Value::from(name)),
            ("commit", Value::from(commit.hash)),
            ("parent", Value::from(*parent)),
            ("date", Value::from(commit.date)),
            (
                "subject",
                Value::from(commit.message.lines().next().unwrap_or("")),
            ),
            ("lines_added", Value::from(*added)),
            ("lines_deleted", Value::from(*deleted)),
            ("instruction_source", Value::from("commit_message")),
        ]
        .map(|(key, value)| (key.to_owned(), value)),
    );
    Ok(Some(EditInstance {
        instance_id: format!("{name}@{}", &commit.hash[..commit.hash.len().min(12)]),
        path: (*path).to_owned(),
        original,
        target,
        instruction: commit.message.to_owned(),
        metadata,
    }))
}

/// The file `path` at `revision` as text, or `None` when it does not exist there, is not
/// UTF-8 text or is longer than the limit.
fn text_at(
    blobs: &mut Blobs,
    revision: &str,
    path: &str,
    options: &MineOptions,
) -> Result<Option<String>, BenchError> {
    let bytes = blobs.read(&format!("{revision}:{path}"))?;
    Ok(bytes
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|text| {
            !text.contains('\0') && crate::text::split_lines(text).len() <= options.max_file_lines
        }))
}

/// Blobs read through one `git cat-file --batch` process.
struct Blobs {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    repo: std::path::PathBuf,
}

impl Blobs {
    fn start(repo: &Path) -> Result<Self, BenchError> {
        let mut child = git_command(repo, &["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| batch_error(repo, &error))?;
        let (input, output) = (child.stdin.take(), child.stdout.take());
        let output = output
            .map(BufReader::new)
            .ok_or_else(|| batch_error(repo, &std::io::Error::other("no standard output")))?;
        Ok(Self {
            child,
            input,
            output,
            repo: repo.to_owned(),
        })
    }

    /// The contents of `object` (`revision:path`), or `None` when it is missing or not a
    /// blob.
    fn read(&mut self, object: &str) -> Result<Option<Vec<u8>>, BenchError> {
        self.exchange(object)
            .map_err(|error| batch_error(&self.repo, &error))
    }

    fn exchange(&mut self, object: &str) -> std::io::Result<Option<Vec<u8>>> {
        let input = self
            .input
            .as_mut()
            .ok_or_else(|| std::io::Error::other("closed"))?;
        writeln!(input, "{object}")?;
        input.flush()?;
        let mut header = String::new();
        if self.output.read_line(&mut header)? == 0 {
            return Err(std::io::Error::other("git cat-file ended early"));
        }
        // `<oid> <type> <size>`, or `<object> missing` (or `ambiguous`).
        let fields: Vec<&str> = header.trim_end().rsplitn(3, ' ').collect();
        let (Some(size), Some(kind)) = (fields.first(), fields.get(1)) else {
            return Ok(None);
        };
        let Ok(size) = size.parse::<usize>() else {
            return Ok(None);
        };
        let mut body = vec![0; size + 1];
        self.output.read_exact(&mut body)?;
        body.pop();
        Ok((*kind == "blob").then_some(body))
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        // Closing its input ends `git cat-file`.
        drop(self.input.take());
        let _ = self.child.wait();
    }
}

fn batch_error(repo: &Path, error: &std::io::Error) -> BenchError {
    BenchError::Git {
        repo: repo.to_owned(),
        args: "cat-file --batch".to_owned(),
        detail: error.to_string(),
    }
}

/// A `git` command in `repo` without the user's or the system's configuration.
fn git_command(repo: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(repo)
        .args(["-c", "safe.directory=*", "-c", "core.quotePath=false"])
        .args(args)
        .envs([
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_TERMINAL_PROMPT", "0"),
        ])
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    command
}

/// Runs `git ARGS` in `repo` (see [`git_command`]); its standard output.
fn git(repo: &Path, args: &[&str]) -> Result<Vec<u8>, BenchError> {
    let failure = |detail: String| BenchError::Git {
        repo: repo.to_owned(),
        args: args.join(" "),
        detail,
    };
    let output = git_command(repo, args)
        .output()
        .map_err(|error| failure(format!("could not run git ({error}); is git installed?")))?;
    if !output.status.success() {
        return Err(failure(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    Ok(output.stdout)
}
