//! Scrubbing: a repository that holds its base commit's history and nothing later, whether a
//! base checkout prepared on the host or the repository inside a task's image.
//!
//! An agent that can read later history can read the fix: SWE-bench's images once kept every
//! later commit in their object store (SWE-bench#465, fixed by deleting the remote and newer
//! tags, `git reflog expire --expire=now --all` and `git gc --prune=now --aggressive`).
//! [`scrub`] does at least that, in this order:
//!
//! 1. every remote is removed, with its remote-tracking refs and its `branch.*` settings;
//! 2. every ref is deleted but the checked-out branch and the tags SWE-bench's images keep
//!    ([`tags_to_keep`]): other branches, newer tags, `refs/stash`, `refs/notes/*`,
//!    `refs/original/*`, anything else under `refs/`;
//! 3. the git directory loses its reflogs (`logs/`), `ORIG_HEAD`, `FETCH_HEAD` and every other
//!    `*_HEAD`, `lost-found/`, `rr-cache/`, linked `worktrees/` and the state of interrupted
//!    merges, rebases and bisections;
//! 4. the object store is replaced by a single pack written fresh (`git pack-objects --revs
//!    --all --indexed-objects`): only what the kept refs, `HEAD` and the index reach. Nothing
//!    else of the old store survives: no loose or unreachable object, no other pack (nor
//!    a hard link to a source's pack), no `objects/info/alternates`, commit-graph,
//!    multi-pack index or bitmap naming later commits. This is faster than `git gc
//!    --prune=now --aggressive` (which recomputes every delta) and, unlike `git repack -a -d`,
//!    also drops a partial clone's promisor packs and `.keep` packs;
//! 5. the commit's tree is checked complete.
//!
//! A task whose starting state is its image's code with a patch applied (a SWE-smith row: the
//! patch is the bug) starts from [`start_from_patch`]: the patched tree committed with no
//! parent, so the scrub that follows leaves one commit. The image's history holds the code
//! before the patch, which for such a task is the fix; none of it may survive.
//!
//! The same steps run wherever the repository is: [`RepoAt::Host`] for a base being prepared
//! (`base.rs`), [`RepoAt::Sandbox`] for an image's repository, with the image's own `git` and
//! `sh` run confined in a workspace of the image (a repository's configuration may name
//! programs to run). `image_workspace.rs` does that once per image and mount point and keeps
//! the result as a cached layer over the image's layers.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::{Sandbox, SandboxError, git};

/// Where a repository's commands run.
pub(crate) enum RepoAt<'a> {
    /// On the host, in this work tree (a base being prepared).
    Host(&'a Path),
    /// Inside this sandbox, in its repository (an image's).
    Sandbox(&'a Sandbox),
}

impl RepoAt<'_> {
    /// The repository's directory as the host sees it, for messages.
    fn dir(&self) -> &Path {
        match self {
            Self::Host(dir) => dir,
            Self::Sandbox(sandbox) => sandbox.host_root(),
        }
    }

    /// `program` (`git` or `sh`) ready to run in the repository.
    fn command(&self, program: &str) -> Result<Command, SandboxError> {
        let mut command = match self {
            Self::Host(dir) => {
                let mut command = Command::new(program);
                command.current_dir(dir);
                command
            }
            Self::Sandbox(sandbox) => sandbox
                .host_command(program)
                .map_err(SandboxError::io(format!("preparing {program}")))?,
        };
        if program == "git" {
            git::configure(&mut command);
        }
        Ok(command)
    }

    /// Runs `git ARGS` with `input` on its standard input; its output, or an error carrying
    /// its stderr.
    fn git(&self, args: &[&str], input: &[u8]) -> Result<Output, SandboxError> {
        let mut command = self.command("git")?;
        command.args(args);
        let args: Vec<OsString> = args.iter().map(Into::into).collect();
        git::output_with_input(command, self.dir(), &args, input)
    }

    /// `git ARGS`'s standard output as text, trimmed.
    pub(crate) fn git_text(&self, args: &[&str]) -> Result<String, SandboxError> {
        let output = self.git(args, b"")?;
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Runs the shell script `script` with `args` as its positional parameters; its standard
    /// output. `what` it does names it in an error.
    fn sh(&self, what: &str, script: &str, args: &[&str]) -> Result<String, SandboxError> {
        let mut command = self.command("sh")?;
        command
            .args(["-c", script, "sh"])
            .args(args)
            .stdin(Stdio::null());
        let output = command.output().map_err(SandboxError::io("running sh"))?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        Err(SandboxError::Io {
            context: format!("{what} in {}", self.dir().display()),
            source: std::io::Error::other(
                String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            ),
        })
    }
}

/// Leftovers of a git directory that name commits outside the kept history, removed with
/// the object store's replacement prepared beside it (`$1`: the git directory).
const TIDY: &str = r#"set -eu
cd "$1"
rm -rf logs lost-found rr-cache worktrees sequencer rebase-merge rebase-apply objects.scrubbed
rm -f ./*_HEAD AUTO_MERGE BISECT_LOG BISECT_TERMS BISECT_NAMES BISECT_START BISECT_EXPECTED_REV BISECT_ANCESTORS_OK
mkdir -p objects.scrubbed/pack objects.scrubbed/info
"#;

/// Puts the pack written into `objects.scrubbed` in place of the object store (`$1`: the git
/// directory). The new `objects` is made, not renamed: in an overlay, a directory made where
/// one was deleted hides every file of the lower layers' (it is opaque).
const SWAP: &str = r#"set -eu
cd "$1"
rm -rf objects
mkdir objects
mv objects.scrubbed/pack objects.scrubbed/info objects/
rmdir objects.scrubbed
"#;

/// Removes what outside git still holds the code before a starting patch (`$1`: the
/// repository's directory; then pairs of a patched file's blob before the patch and its path
/// in the repository): every byte-compiled cache in the work tree (`__pycache__`, `*.pyc`,
/// `*.pyo`: disassembled, they are the code before the patch), and every copy elsewhere in
/// the file system of a file as it was before the patch (a package installed by copying, not
/// editable), which gets the patched content (or is deleted with the file) and loses its
/// byte-compiled cache. Prints each such copy's path.
const STALE_COPIES: &str = r#"set -eu
repo=$1
shift
find "$repo" -path "$repo/.git" -prune -o -name __pycache__ -type d -prune -exec rm -rf {} + \
  -o -type f \( -name '*.pyc' -o -name '*.pyo' \) -exec rm -f {} +
while [ $# -ge 2 ]; do
  blob=$1 path=$2
  shift 2
  name=${path##*/}
  find / \( -path /proc -o -path /sys -o -path /dev -o -path "$repo" \) -prune \
    -o -type f -name "$name" -print |
  while IFS= read -r copy; do
    [ "$(git hash-object -- "$copy")" = "$blob" ] || continue
    if [ -f "$repo/$path" ]; then cat "$repo/$path" >"$copy"; else rm -f "$copy"; fi
    stem=${name%.py}
    rm -f "${copy%/*}/__pycache__/$stem".*.pyc "${copy%/*}/$stem.pyc" "${copy%/*}/$stem.pyo"
    echo "$copy"
  done
done
"#;

/// A task's starting state: its commit, and the files outside the repository that were
/// brought to it (copies of patched files, [`STALE_COPIES`]).
pub(crate) struct StartingState {
    pub(crate) commit: String,
    pub(crate) copies: Vec<PathBuf>,
}

/// Makes `HEAD`'s tree with `patch` applied the repository's only history: applies `patch`
/// (`git apply`; [`SandboxError::StartingPatch`] when it does not apply), removes what still
/// holds the code before it outside git ([`STALE_COPIES`]), commits the whole tree as a
/// commit with no parent (by `swerve`, dated as `HEAD` was, so the same image and patch give
/// the same commit) and points the checked-out branch, or a detached `HEAD`, at it. Returns
/// the commit; [`scrub`] with it then drops every older object.
pub(crate) fn start_from_patch(
    repo: &RepoAt,
    patch: &str,
    image: &str,
) -> Result<StartingState, SandboxError> {
    repo.git(&["apply", "--whitespace=nowarn", "-"], patch.as_bytes())
        .map_err(|error| SandboxError::StartingPatch {
            image: image.to_owned(),
            detail: match error {
                SandboxError::Git { stderr, .. } => stderr,
                other => other.to_string(),
            },
        })?;
    let copies = remove_stale_copies(repo)?;
    repo.git(&["add", "--all", "--", "."], b"")?;
    let tree = repo.git_text(&["write-tree"])?;
    let date = repo.git_text(&["log", "-1", "--format=%cI", "HEAD"])?;
    let mut command = repo.command("git")?;
    command
        .args(["commit-tree", &tree, "-m", "The task's starting state"])
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date);
    let args: Vec<OsString> = ["commit-tree", &tree].iter().map(Into::into).collect();
    let output = git::output_with_input(command, repo.dir(), &args, b"")?;
    let commit = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    repo.git(&["update-ref", "HEAD", &commit], b"")?;
    Ok(StartingState { commit, copies })
}

/// Runs [`STALE_COPIES`] for the files the starting patch changed (read from `git diff
/// --raw` against the index, which still holds `HEAD`); the copies it brought up to date.
fn remove_stale_copies(repo: &RepoAt) -> Result<Vec<PathBuf>, SandboxError> {
    let raw = repo.git_text(&["diff", "--raw", "--no-abbrev", "--no-renames", "-z"])?;
    let mut args = vec![repo.git_text(&["rev-parse", "--show-toplevel"])?];
    let mut fields = raw.split('\0').filter(|field| !field.is_empty());
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        // ":100644 100644 <blob before> <blob after> M"
        let Some(before) = status.split_whitespace().nth(2) else {
            continue;
        };
        if before.bytes().all(|byte| byte == b'0') {
            continue;
        }
        args.extend([before.to_owned(), path.to_owned()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let printed = repo.sh(
        "removing copies of the code before the patch",
        STALE_COPIES,
        &args,
    )?;
    Ok(printed.lines().map(PathBuf::from).collect())
}

/// Leaves in `repo` only `commit`'s history, `branch` (a full ref name, the checked-out
/// branch) and the tags [`tags_to_keep`] names; see the module doc.
pub(crate) fn scrub(repo: &RepoAt, commit: &str, branch: Option<&str>) -> Result<(), SandboxError> {
    for remote in repo.git_text(&["remote"])?.lines() {
        repo.git(&["remote", "remove", remote], b"")?;
    }
    let mut keep = tags_to_keep(repo, commit)?;
    keep.extend(branch.map(str::to_owned));
    let refs = repo.git_text(&["for-each-ref", "--format=%(refname)"])?;
    let deletions: String = refs
        .lines()
        .filter(|name| !keep.contains(*name))
        .map(|name| format!("delete {name}\n"))
        .collect();
    if !deletions.is_empty() {
        repo.git(
            &["update-ref", "--no-deref", "--stdin"],
            deletions.as_bytes(),
        )?;
    }
    remove_other_branch_settings(repo, branch)?;
    let git_dir = repo.git_text(&["rev-parse", "--absolute-git-dir"])?;
    repo.sh("tidying the git directory", TIDY, &[&git_dir])?;
    let pack = format!("{git_dir}/objects.scrubbed/pack/pack");
    repo.git(
        &[
            "pack-objects",
            "-q",
            "--revs",
            "--all",
            "--indexed-objects",
            "--missing=allow-any",
            "--delta-base-offset",
            &pack,
        ],
        b"",
    )?;
    repo.sh("replacing the object store", SWAP, &[&git_dir])?;
    let missing = repo.git_text(&[
        "rev-list",
        "--objects",
        "--no-walk",
        "--missing=print",
        commit,
    ])?;
    if let Some(object) = missing.lines().find_map(|line| line.strip_prefix('?')) {
        return Err(SandboxError::ObjectsMissing {
            commit: commit.to_owned(),
            repository: repo.dir().display().to_string(),
            detail: format!("{object} is missing after scrubbing"),
        });
    }
    Ok(())
}

/// Removes the `branch.<name>.*` settings of every branch but `branch` (upstreams, merge
/// targets, descriptions of branches that are gone).
fn remove_other_branch_settings(repo: &RepoAt, branch: Option<&str>) -> Result<(), SandboxError> {
    // Exits 1 when nothing matches.
    let names = repo
        .git(
            &["config", "--name-only", "--get-regexp", r"^branch\."],
            b"",
        )
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default();
    let kept = branch.and_then(|name| name.strip_prefix("refs/heads/"));
    let sections: HashSet<&str> = names
        .lines()
        .filter_map(|name| name.rsplit_once('.').map(|(section, _)| section))
        .filter(|section| Some(&section["branch.".len()..]) != kept)
        .collect();
    for section in sections {
        repo.git(&["config", "--remove-section", section], b"")?;
    }
    Ok(())
}

/// The tags (full ref names) kept with `commit`: those naming `commit` or one of its
/// ancestors whose committer time is not later than `commit`'s.
///
/// The time condition is SWE-bench's rule: it deletes every tag whose commit has a later
/// committer time (`%ct`, seconds since the epoch, since SWE-bench 5.0, PR #533; 4.1 compared
/// `%ci` strings, which goes wrong across time zones). The ancestry condition is swerve's:
/// SWE-bench also keeps older tags its clone fetched outside the base's history (e.g. on a
/// branch merged later), which would make commits outside that history reachable. `git
/// describe` only considers ancestors, so it answers the same. Annotated tags keep their tag
/// objects, so `git describe` and versions computed from tags are those of the images.
fn tags_to_keep(repo: &RepoAt, commit: &str) -> Result<HashSet<String>, SandboxError> {
    let merged = repo.git_text(&[
        "for-each-ref",
        &format!("--merged={commit}"),
        "--format=%(refname)",
        "refs/tags",
    ])?;
    let names: Vec<String> = merged.lines().map(str::to_owned).collect();
    if names.is_empty() {
        return Ok(HashSet::new());
    }
    // The commit each tag names, through any chain of annotated tags, in the same order.
    let peel: String = names
        .iter()
        .map(|name| format!("{name}^{{commit}}\n"))
        .collect();
    let peeled = repo.git(
        &["cat-file", "--batch-check=%(objectname)"],
        peel.as_bytes(),
    )?;
    let peeled: Vec<String> = String::from_utf8_lossy(&peeled.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let invalid = |stderr: String| SandboxError::Git {
        args: "cat-file --batch-check".into(),
        dir: repo.dir().to_path_buf(),
        stderr,
    };
    if peeled.len() != names.len() || peeled.iter().any(|line| line.contains(' ')) {
        return Err(invalid(format!(
            "expected the commit of each of {} tags, got: {}",
            names.len(),
            peeled.join("; ")
        )));
    }
    let mut wanted: Vec<&str> = vec![commit];
    wanted.extend(peeled.iter().map(String::as_str));
    let stdin: String = wanted.iter().map(|id| format!("{id}\n")).collect();
    let log = repo.git(
        &["log", "--no-walk=unsorted", "--stdin", "--format=%H %ct"],
        stdin.as_bytes(),
    )?;
    let times: HashMap<String, i64> = String::from_utf8_lossy(&log.stdout)
        .lines()
        .filter_map(|line| {
            let (id, time) = line.split_once(' ')?;
            Some((id.to_owned(), time.parse().ok()?))
        })
        .collect();
    let time_of = |id: &str| {
        times
            .get(id)
            .copied()
            .ok_or_else(|| invalid(format!("no committer time for commit {id}")))
    };
    let base_time = time_of(commit)?;
    let mut keep = HashSet::new();
    for (name, id) in names.into_iter().zip(&peeled) {
        if time_of(id)? <= base_time {
            keep.insert(name);
        }
    }
    Ok(keep)
}
