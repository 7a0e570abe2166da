//! Who a sandbox's users are on the host: its user namespace's id maps, and the ownership of
//! the trees it writes.
//!
//! Every namespaced sandbox has its own user namespace, whether swerve runs as root or not:
//!
//! - **as root**, the sandbox's ids `0..count` map to a range of unprivileged host ids (the
//!   `root` entry of `/etc/subuid` / `/etc/subgid`, a configured range, or
//!   [`IdRange::DEFAULT`]); host root, and every host user, is unmapped inside;
//! - **otherwise**, the sandbox's root is the invoking user (one id), as with `unshare -r`.
//!
//! Either way a sandboxed process holds capabilities only over what its own namespaces own,
//! never over a host resource. A user namespace's maps can only be written from outside it,
//! so the host process writes them ([`IdMap::apply`]) while the init waits.
//!
//! Files a sandbox must change have to belong to an id it maps: its layers and `HOME` are
//! created for the sandbox's root, and shared cached trees (bases, environments) are handed
//! over once ([`hand_over`]). Files owned by unmapped ids (host root's system files) appear
//! as `nobody` inside and can be read, not changed.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::config::IdRange;

/// The id maps of one sandbox's user namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdMap {
    /// The sandbox's id 0 on the host, for users and for groups.
    pub root_uid: u32,
    pub root_gid: u32,
    /// How many ids are mapped.
    pub count: u32,
    /// `setgroups(2)` must be denied (a one-id map written without privilege).
    deny_setgroups: bool,
}

impl IdMap {
    /// The maps for a sandbox started by this process: a subordinate range as root (the
    /// configured one, else `/etc/subuid`'s entry for `root`, else [`IdRange::DEFAULT`]),
    /// the invoking user otherwise.
    pub fn for_this_process(configured: Option<IdRange>) -> Result<Self, String> {
        if !nix::unistd::Uid::effective().is_root() {
            return Ok(Self::current());
        }
        let (users, groups) = match configured {
            Some(range) => (range, range),
            None => *SYSTEM_RANGES.get_or_init(|| {
                (
                    subordinate_range("/etc/subuid").unwrap_or(IdRange::DEFAULT),
                    subordinate_range("/etc/subgid").unwrap_or(IdRange::DEFAULT),
                )
            }),
        };
        for (range, what) in [(users, "user"), (groups, "group")] {
            if range.start == 0
                || range.count == 0
                || range.start.checked_add(range.count).is_none()
            {
                return Err(format!(
                    "the subordinate {what} id range {}:{} is not usable: it must start above 0, \
                     hold at least one id and end below 2^32; set sandbox.subordinate_ids",
                    range.start, range.count
                ));
            }
        }
        Ok(Self {
            root_uid: users.start,
            root_gid: groups.start,
            count: users.count.min(groups.count),
            deny_setgroups: false,
        })
    }

    /// This process's own ids as the sandbox's root (one id): the map of an unprivileged
    /// sandbox, and the owner of a plain subprocess's files.
    pub fn current() -> Self {
        Self {
            root_uid: nix::unistd::geteuid().as_raw(),
            root_gid: nix::unistd::getegid().as_raw(),
            count: 1,
            deny_setgroups: true,
        }
    }

    /// Writes the maps of the user namespace `pid` has just created.
    pub fn apply(&self, pid: u32) -> std::io::Result<()> {
        let write = |file: &str, text: String| {
            std::fs::write(format!("/proc/{pid}/{file}"), text).map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!("cannot write /proc/{pid}/{file}: {error}"),
                )
            })
        };
        if self.deny_setgroups {
            write("setgroups", "deny".into())?;
        }
        write("uid_map", format!("0 {} {}", self.root_uid, self.count))?;
        write("gid_map", format!("0 {} {}", self.root_gid, self.count))
    }

    /// The host owner of files the sandbox's root creates.
    pub fn root_owner(&self) -> (u32, u32) {
        (self.root_uid, self.root_gid)
    }

    /// `uid_map` as `/proc/PID/uid_map` shows it, for `swerve doctor`.
    pub fn describe(&self) -> String {
        format!(
            "sandbox root = host uid {} gid {} ({} id{} mapped)",
            self.root_uid,
            self.root_gid,
            self.count,
            if self.count == 1 { "" } else { "s" }
        )
    }
}

/// The host ids of the sandboxes `config` starts: `(root uid, root gid, count)`. Image
/// layers are unpacked with their owners mapped through this (see `swerve-image`).
pub fn sandbox_ids(config: &crate::SandboxConfig) -> Result<(u32, u32, u32), crate::SandboxError> {
    let map = if config.isolation == crate::Isolation::None {
        IdMap::current()
    } else {
        IdMap::for_this_process(config.subordinate_ids).map_err(crate::SandboxError::Setup)?
    };
    Ok((map.root_uid, map.root_gid, map.count))
}

/// The first range of `root` (by name or as uid 0) in a subordinate-id file.
/// root's subordinate user and group ranges from `/etc/subuid` and `/etc/subgid`, read once
/// per process (every workspace of a run needs them).
static SYSTEM_RANGES: std::sync::OnceLock<(IdRange, IdRange)> = std::sync::OnceLock::new();

fn subordinate_range(file: &str) -> Option<IdRange> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .filter_map(|line| {
            let mut fields = line.trim().split(':');
            let (owner, start, count) = (fields.next()?, fields.next()?, fields.next()?);
            ((owner == "root" || owner == "0") && fields.next().is_none()).then_some(())?;
            Some(IdRange {
                start: start.trim().parse().ok()?,
                count: count.trim().parse().ok()?,
            })
        })
        .find(|range| range.start > 0 && range.count > 0)
}

/// Makes `owner` own `dir` and everything below it, unless `dir` already belongs to it.
///
/// The top directory is changed last, so an interrupted hand-over is redone by the next
/// call. Only root can give files away: without it this does nothing (an unprivileged
/// sandbox's root is the invoking user, who owns what it created).
pub(crate) fn hand_over(dir: &Path, owner: (u32, u32)) -> Result<(), crate::SandboxError> {
    chown_tree(dir, owner).map_err(crate::SandboxError::io(format!(
        "giving {} to the sandbox's root",
        dir.display()
    )))
}

fn chown_tree(dir: &Path, owner: (u32, u32)) -> std::io::Result<()> {
    if !nix::unistd::Uid::effective().is_root() {
        return Ok(());
    }
    let metadata = std::fs::symlink_metadata(dir)?;
    if (metadata.uid(), metadata.gid()) == owner {
        return Ok(());
    }
    let mut pending = vec![dir.to_path_buf()];
    let mut directories = Vec::new();
    while let Some(path) = pending.pop() {
        for entry in std::fs::read_dir(&path)? {
            let entry = entry?;
            let entry_path = entry.path();
            if entry.file_type()?.is_dir() {
                pending.push(entry_path.clone());
                directories.push(entry_path);
            } else {
                std::os::unix::fs::lchown(&entry_path, Some(owner.0), Some(owner.1))?;
            }
        }
    }
    for directory in directories.iter().rev() {
        std::os::unix::fs::lchown(directory, Some(owner.0), Some(owner.1))?;
    }
    std::os::unix::fs::lchown(dir, Some(owner.0), Some(owner.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_entry_of_a_subordinate_id_file_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("subuid");
        std::fs::write(&file, "alice:100000:65536\nroot:231072:65536\n0:1:1\n").unwrap();
        assert_eq!(
            subordinate_range(file.to_str().unwrap()),
            Some(IdRange {
                start: 231072,
                count: 65536
            })
        );
        std::fs::write(&file, "alice:100000:65536\nroot:x:1\n").unwrap();
        assert_eq!(subordinate_range(file.to_str().unwrap()), None);
    }

    #[test]
    fn an_unusable_configured_range_is_refused_with_the_setting_named() {
        if !nix::unistd::Uid::effective().is_root() {
            return;
        }
        let error = IdMap::for_this_process(Some(IdRange {
            start: u32::MAX - 10,
            count: 65536,
        }))
        .unwrap_err();
        assert!(error.contains("sandbox.subordinate_ids"), "{error}");
    }
}
