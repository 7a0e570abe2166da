//! Mining PR-Edit instances from a git history. By commit ([`MineUnit::Commit`]): each
//! non-merge commit that changes exactly one source file (no additions, deletions or
//! renames), within size limits, becomes an instance whose original and target are the file
//! before and after the commit and whose instruction is the commit message. By pull request
//! ([`MineUnit::Pr`], as SWE-Edit mines PR-Edit, §4.3.1): each merge commit on the
//! first-parent history, and each `refs/pull/N/head` ref not merged there, is a PR whose
//! change is its base to its head; every source file it modifies within the limits becomes
//! an instance, with the PR's message as the instruction and the PR recorded, so that
//! [`crate::bench::split`] keeps a PR's files in one split. Runs the real `git`, isolated
//! from the user's configuration.

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
    /// What one change is: a commit, or a pull request.
    pub unit: MineUnit,
}

/// What [`mine`] takes one change to be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MineUnit {
    /// A non-merge commit changing one file.
    #[default]
    Commit,
    /// A pull request: a merge commit, or a `refs/pull/N/head` ref.
    Pr,
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
            unit: MineUnit::Commit,
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
    if options.unit == MineUnit::Pr {
        return mine_prs(repo, options);
    }
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

/// One pull request: its change is `base` to `head`.
struct Pr {
    /// The PR number, or the merge commit's short hash when the message names none.
    id: String,
    base: String,
    head: String,
    date: String,
    message: String,
    /// `merge` or `ref`.
    source: &'static str,
}

/// The repository's `owner/name` from its `origin` remote, when it has one.
fn origin(repo: &Path) -> Option<String> {
    let url = git(repo, &["remote", "get-url", "origin"]).ok()?;
    let url = String::from_utf8_lossy(&url).trim().to_owned();
    let path = url.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.rsplit(['/', ':']);
    let name = parts.next()?;
    let owner = parts.next()?;
    (!name.is_empty() && !owner.is_empty()).then(|| format!("{owner}/{name}"))
}

/// The number in GitHub's `Merge pull request #N from …` subject.
fn pr_number(subject: &str) -> Option<&str> {
    let rest = subject.strip_prefix("Merge pull request #")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The PR's message: for GitHub's merge commits the body (the PR's title and text), else
/// the whole message.
fn pr_message(message: &str) -> String {
    let message = message.trim();
    match message.split_once('\n') {
        Some((subject, body)) if pr_number(subject).is_some() && !body.trim().is_empty() => {
            body.trim().to_owned()
        }
        _ => message.to_owned(),
    }
}

/// The PRs of `repo`: merges on the first-parent history of `rev`, then PR head refs whose
/// number no merge names.
fn pull_requests(repo: &Path, rev: &str) -> Result<Vec<Pr>, BenchError> {
    let log = git(
        repo,
        &[
            "log",
            "--merges",
            "--first-parent",
            "--format=%x1e%H %P%x1f%aI%x1f%B",
            rev,
            "--",
        ],
    )?;
    let log = String::from_utf8_lossy(&log);
    let mut prs = Vec::new();
    for record in log.split('\x1e') {
        let mut parts = record.splitn(3, '\x1f');
        let (Some(head), Some(date), Some(message)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let ids: Vec<&str> = head.split(' ').filter(|id| !id.is_empty()).collect();
        let [merge, base, ..] = ids[..] else {
            continue;
        };
        let subject = message.trim().lines().next().unwrap_or("");
        prs.push(Pr {
            id: pr_number(subject)
                .map_or_else(|| merge[..12.min(merge.len())].to_owned(), str::to_owned),
            base: base.to_owned(),
            head: merge.to_owned(),
            date: date.to_owned(),
            message: pr_message(message),
            source: "merge",
        });
    }
    let refs = git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/pull/",
        ],
    )?;
    for line in String::from_utf8_lossy(&refs).lines() {
        let Some((name, object)) = line.split_once(' ') else {
            continue;
        };
        let Some(number) = name
            .strip_prefix("refs/pull/")
            .and_then(|rest| rest.strip_suffix("/head"))
        else {
            continue;
        };
        if prs.iter().any(|pr| pr.id == number) {
            continue;
        }
        let Ok(base) = git(repo, &["merge-base", rev, object]) else {
            continue;
        };
        let base = String::from_utf8_lossy(&base).trim().to_owned();
        if base.is_empty() || base == object {
            continue;
        }
        let info = git(repo, &["log", "-1", "--format=%aI%x1f%B", object])?;
        let info = String::from_utf8_lossy(&info);
        let (date, message) = info.split_once('\x1f').unwrap_or(("", &info));
        prs.push(Pr {
            id: number.to_owned(),
            base,
            head: object.to_owned(),
            date: date.trim().to_owned(),
            message: message.trim().to_owned(),
            source: "ref",
        });
    }
    Ok(prs)
}

/// Mines by pull request (see the module docs).
fn mine_prs(repo: &Path, options: &MineOptions) -> Result<Vec<EditInstance>, BenchError> {
    let name = repo
        .canonicalize()
        .ok()
        .and_then(|path| Some(path.file_name()?.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repo".to_owned());
    let origin = origin(repo);
    let mut instances = Vec::new();
    let mut blobs = Blobs::start(repo)?;
    for pr in pull_requests(repo, &options.rev)? {
        if pr.message.is_empty() {
            continue;
        }
        let numstat = git(
            repo,
            &[
                "diff",
                "--numstat",
                "--no-renames",
                &pr.base,
                &pr.head,
                "--",
            ],
        )?;
        let numstat = String::from_utf8_lossy(&numstat);
        let files: Vec<(Option<usize>, Option<usize>, &str)> = numstat
            .lines()
            .filter_map(|line| {
                let mut fields = line.splitn(3, '\t');
                let (added, deleted, path) = (fields.next()?, fields.next()?, fields.next()?);
                Some((added.parse().ok(), deleted.parse().ok(), path))
            })
            .collect();
        for &(added, deleted, path) in &files {
            if instances.len() >= options.max_instances {
                return Ok(instances);
            }
            let (Some(added), Some(deleted)) = (added, deleted) else {
                continue;
            };
            let extension = path
                .rsplit_once('.')
                .map(|(_, extension)| extension.to_ascii_lowercase());
            let changed = added + deleted;
            if path.starts_with('"')
                || changed == 0
                || changed > options.max_changed_lines
                || !extension.is_some_and(|extension| options.extensions.contains(&extension))
            {
                continue;
            }
            let (Some(original), Some(target)) = (
                text_at(&mut blobs, &pr.base, path, options)?,
                text_at(&mut blobs, &pr.head, path, options)?,
            ) else {
                continue;
            };
            let mut metadata = Map::new();
            metadata.insert("repo".into(), Value::from(name.as_str()));
            if let Some(origin) = &origin {
                metadata.insert("origin".into(), Value::from(origin.as_str()));
            }
            for (key, value) in [
                ("pr", Value::from(pr.id.as_str())),
                ("pr_source", Value::from(pr.source)),
                ("base", Value::from(pr.base.as_str())),
                ("head", Value::from(pr.head.as_str())),
                ("date", Value::from(pr.date.as_str())),
                (
                    "subject",
                    Value::from(pr.message.lines().next().unwrap_or("")),
                ),
                ("lines_added", Value::from(added)),
                ("lines_deleted", Value::from(deleted)),
                ("files_in_pr", Value::from(files.len())),
                ("instruction_source", Value::from("pr_message")),
            ] {
                metadata.insert(key.into(), value);
            }
            instances.push(EditInstance {
                instance_id: format!("{name}#{}:{path}", pr.id),
                path: path.to_owned(),
                original,
                target,
                instruction: pr.message.clone(),
                metadata,
            });
        }
    }
    Ok(instances)
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
