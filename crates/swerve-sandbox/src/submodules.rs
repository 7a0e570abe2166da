//! A base checkout's git submodules, checked out at the commits its tree records.
//!
//! SWE-bench's images hold their submodules' checkouts (astropy 1.3 to 3.1's `setup.py` runs
//! `git submodule update --init -- astropy_helpers`, which otherwise reaches for GitHub). For
//! each submodule the base's `.gitmodules` declares and its tree records (a gitlink), swerve
//! looks the repository up where it looks up task repositories (`--repos DIR/owner/name`,
//! the config's `[repos]`), by the `owner/name` of its URL; only when none is there, and the
//! caller allows the network (an environment build that may reach package registries), it
//! clones the URL. Each submodule is prepared as a base is ([`crate::base`]): verified, its
//! recorded commit checked out, its later history unreachable (no remote, no refs but the
//! tags of its past), so the agent gains no future through it. A submodule with its own
//! submodules gets them the same way. Then `git submodule update --init` finds the checkout
//! at the recorded commit and has nothing to fetch.
//!
//! Done once per base under the base's lock; `<commit>.submodules.ready` marks it.
//!
//! A dataset whose images hold no submodules (SWE-Gym's moto: SWE-bench's clone does not
//! recurse and `make init` initializes none) says so in its recipe (`submodules = false`):
//! its bases leave them uninitialized, as the images do ([`Submodules::Leave`]).

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use swerve_core::task::Task;

use crate::{BaseCheckout, Cache, RepoMap, RepoSource, SandboxError, git};

/// What a task's base checkout does with its repository's submodules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submodules {
    /// Check each out at the commit the tree records, from the repositories directories, or
    /// from its URL when `network` allows (as the images of SWE-bench's astropy hold them).
    CheckOut {
        /// Whether a submodule missing from the repositories may be cloned from its URL.
        network: bool,
    },
    /// Leave them uninitialized (empty directories), as a clone without
    /// `--recurse-submodules` does, for datasets whose images hold none.
    Leave,
}

impl Cache {
    /// The cached checkout of `task`'s base commit, its repository found through `repos`
    /// (see [`Cache::prepare_base`]), with its submodules as `submodules` says: checked out
    /// at the recorded commits from `repos`, or from their URLs when allowed
    /// ([`check_out`]), or left alone.
    pub fn prepare_task_base(
        &self,
        repos: &RepoMap,
        task: &Task,
        submodules: Submodules,
    ) -> Result<BaseCheckout, SandboxError> {
        let source = repos.resolve(task)?;
        let base = self.prepare_base(&task.repo, &source, &task.base_commit)?;
        if let Submodules::CheckOut { network } = submodules {
            check_out(&base, repos, network)?;
        }
        Ok(base)
    }
}

/// One submodule as `.gitmodules` and the tree declare it.
struct Submodule {
    /// Its path in the superproject.
    path: String,
    /// The URL `.gitmodules` gives.
    url: String,
    /// The commit the superproject's tree records for it.
    commit: String,
}

/// Checks out `base`'s submodules (see the module doc), unless already done.
pub(crate) fn check_out(
    base: &BaseCheckout,
    repos: &RepoMap,
    network: bool,
) -> Result<(), SandboxError> {
    if !base.path.join(".gitmodules").is_file() {
        return Ok(());
    }
    let parent = base.path.parent().unwrap_or(Path::new("/"));
    let ready = parent.join(format!("{}.submodules.ready", base.commit));
    if ready.exists() {
        return Ok(());
    }
    let lock_path = parent.join(format!("{}.lock", base.commit));
    let lock_file = File::create(&lock_path).map_err(SandboxError::io(format!(
        "creating {}",
        lock_path.display()
    )))?;
    let _lock = Flock::lock(lock_file, FlockArg::LockExclusive).map_err(|(_, errno)| {
        SandboxError::io(format!("locking {}", lock_path.display()))(errno.into())
    })?;
    if ready.exists() {
        return Ok(());
    }
    check_out_in(&base.path, repos, network)?;
    std::fs::write(&ready, &base.commit)
        .map_err(SandboxError::io(format!("writing {}", ready.display())))
}

/// Checks out the submodules of the checkout at `dir`, then theirs.
fn check_out_in(dir: &Path, repos: &RepoMap, network: bool) -> Result<(), SandboxError> {
    for submodule in declared(dir)? {
        let target = dir.join(&submodule.path);
        if target.join(".git").exists() {
            continue;
        }
        let source = source_of(dir, &submodule, repos, network)?;
        let staging = staging_path(&target);
        let _ = crate::tree::remove_tree(&staging);
        crate::base::build(&source, &submodule.commit, &staging).inspect_err(|_| {
            let _ = crate::tree::remove_tree(&staging);
        })?;
        // The superproject's checkout left an empty directory for the gitlink.
        let _ = std::fs::remove_dir(&target);
        std::fs::rename(&staging, &target).map_err(SandboxError::io(format!(
            "moving submodule {} into {}",
            submodule.path,
            target.display()
        )))?;
        check_out_in(&target, repos, network)?;
    }
    Ok(())
}

/// A staging directory beside `target` for its clone.
fn staging_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".staging-{name}-{}", std::process::id()))
}

/// The submodules `.gitmodules` declares that the checkout's tree records as gitlinks.
fn declared(dir: &Path) -> Result<Vec<Submodule>, SandboxError> {
    if !dir.join(".gitmodules").is_file() {
        return Ok(Vec::new());
    }
    let args = [
        "config",
        "--file",
        ".gitmodules",
        "--get-regexp",
        r"^submodule\..*\.(path|url)$",
    ];
    let mut command = git::command(dir);
    command.args(args);
    let config = command
        .output()
        .map_err(SandboxError::io("running git (is git installed?)"))?;
    // Exit status 1: nothing matched (an empty `.gitmodules`, as getmoto/moto's at some
    // commits): no submodules.
    if config.status.code() == Some(1) && config.stdout.is_empty() {
        return Ok(Vec::new());
    }
    let config = git::check(config, dir, &args.map(std::ffi::OsString::from))?;
    let mut paths: Vec<(String, String)> = Vec::new();
    let mut urls: Vec<(String, String)> = Vec::new();
    for line in String::from_utf8_lossy(&config.stdout).lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        if let Some(name) = key.strip_suffix(".path") {
            paths.push((name.to_owned(), value.to_owned()));
        } else if let Some(name) = key.strip_suffix(".url") {
            urls.push((name.to_owned(), value.to_owned()));
        }
    }
    let mut submodules = Vec::new();
    for (name, path) in paths {
        let Some(url) = urls
            .iter()
            .find(|(url_name, _)| *url_name == name)
            .map(|(_, url)| url.clone())
        else {
            continue;
        };
        let tree = git::run(dir, ["ls-tree", "HEAD", "--", &path])?;
        let tree = String::from_utf8_lossy(&tree.stdout);
        // `160000 commit <id>\t<path>`: a gitlink; anything else (a stale entry) is skipped.
        let mut fields = tree.split_whitespace();
        if let (Some("160000"), Some("commit"), Some(commit)) =
            (fields.next(), fields.next(), fields.next())
        {
            submodules.push(Submodule {
                path,
                url,
                commit: commit.to_owned(),
            });
        }
    }
    Ok(submodules)
}

/// Where a submodule's repository comes from: `repos`, by the `owner/name` its URL ends
/// with; else its URL when `network` allows.
fn source_of(
    dir: &Path,
    submodule: &Submodule,
    repos: &RepoMap,
    network: bool,
) -> Result<RepoSource, SandboxError> {
    let name = owner_and_name(&submodule.url);
    let looked = match &name {
        Some(name) => match repos.resolve_name(name) {
            Ok(source) => return Ok(source),
            Err(SandboxError::RepoNotFound { looked, .. }) => looked,
            Err(other) => return Err(other),
        },
        None => format!("its URL {} names no owner/name", submodule.url),
    };
    if network && submodule.url.contains("://") {
        return Ok(RepoSource::Url(submodule.url.clone()));
    }
    Err(SandboxError::SubmoduleNotFound {
        submodule: format!(
            "{} of {} ({} at {})",
            submodule.path,
            dir.display(),
            submodule.url,
            submodule.commit
        ),
        repo: name.unwrap_or_else(|| "owner/name".into()),
        looked,
    })
}

/// `owner/name` of a repository URL: `https://github.com/astropy/astropy-helpers.git` and
/// `git@github.com:astropy/astropy-helpers` give `astropy/astropy-helpers`.
fn owner_and_name(url: &str) -> Option<String> {
    let trimmed = url.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(".git").unwrap_or(trimmed);
    let mut parts = trimmed.rsplit(['/', ':']);
    let name = parts.next().filter(|part| !part.is_empty())?;
    let owner = parts
        .next()
        .filter(|part| !part.is_empty() && *part != "..")?;
    Some(format!("{owner}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::owner_and_name;

    #[test]
    fn urls_name_their_repository() {
        for url in [
            "https://github.com/astropy/astropy-helpers.git",
            "git://github.com/astropy/astropy-helpers",
            "git@github.com:astropy/astropy-helpers.git",
            "https://github.com/astropy/astropy-helpers/",
        ] {
            assert_eq!(
                owner_and_name(url).as_deref(),
                Some("astropy/astropy-helpers"),
                "{url}"
            );
        }
        assert_eq!(owner_and_name("../helpers.git"), None);
    }
}
