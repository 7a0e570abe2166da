//! [`remove_tree`]: removing the directory trees workspaces, bases and the cache leave
//! behind. Its own module so that those three can share it without importing each other.
//!
//! A tree may still have file systems mounted in it: debootstrap mounts `/proc` and `/sys`
//! in the root it builds (and, in containers, binds the host's `/dev`), and a build killed
//! in between leaves them. Removing through such a mount would delete the host's files, so
//! [`remove_tree`] first detaches every mount at or under the tree.

use std::cmp::Reverse;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Removes a directory tree, making unreadable directories (overlay's work dir) removable
/// first, after detaching every file system mounted in it (never removing through a mount).
pub(crate) fn remove_tree(path: &Path) -> std::io::Result<()> {
    detach_mounts_under(path)?;
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            let _ = Command::new("chmod")
                .arg("-R")
                .arg("u+rwx")
                .arg(path)
                .output();
            std::fs::remove_dir_all(path)
        }
    }
}

/// Detaches (`umount2(MNT_DETACH)`) every mount at or under `path`, deepest first, as this
/// process's mount table (`/proc/self/mountinfo`) lists them. An error when one cannot be
/// detached (no privilege): the tree must then not be removed.
fn detach_mounts_under(path: &Path) -> std::io::Result<()> {
    let Ok(path) = path.canonicalize() else {
        return Ok(()); // gone, or unreachable: nothing of it is mounted through this path
    };
    let table = match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(table) => table,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error),
    };
    let mut points = mount_points_under(&table, &path);
    points.sort_by_key(|point| Reverse(point.components().count()));
    for point in points {
        nix::mount::umount2(&point, nix::mount::MntFlags::MNT_DETACH).map_err(|errno| {
            std::io::Error::other(format!(
                "{} is mounted inside {} and cannot be detached ({errno}); unmount it before \
                 removing the tree",
                point.display(),
                path.display()
            ))
        })?;
    }
    Ok(())
}

/// The mount points in `mountinfo` (the format of `/proc/self/mountinfo`: the fifth field,
/// with spaces, tabs, newlines and backslashes as octal escapes) at or under `root`.
fn mount_points_under(mountinfo: &str, root: &Path) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape_octal(field)))
        .filter(|point| point.starts_with(root))
        .collect()
}

/// `field` with mountinfo's `\NNN` octal escapes decoded.
fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escape = bytes.get(index + 1..index + 4).filter(|digits| {
            bytes[index] == b'\\' && digits.iter().all(|digit| (b'0'..=b'7').contains(digit))
        });
        match escape {
            Some(digits) => {
                let value = digits
                    .iter()
                    .fold(0u32, |value, digit| value * 8 + u32::from(digit - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                index += 4;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_decoded_and_matched_by_component() {
        let table = "\
22 1 8:1 / / rw - ext4 /dev/vda rw
40 22 0:5 / /var/cache/u/.staging-ab/proc rw - proc proc rw
41 22 0:6 / /var/cache/u/.staging-ab/my\\040dir rw - tmpfs tmpfs rw
42 22 0:7 / /var/cache/u/.staging-abc/proc rw - proc proc rw
";
        assert_eq!(
            mount_points_under(table, Path::new("/var/cache/u/.staging-ab")),
            vec![
                PathBuf::from("/var/cache/u/.staging-ab/proc"),
                PathBuf::from("/var/cache/u/.staging-ab/my dir"),
            ]
        );
        assert_eq!(unescape_octal("a\\011b\\134c\\9"), "a\tb\\c\\9");
    }

    /// As root: a tree with a directory bind-mounted inside is removed, and the mounted
    /// directory's files (the host's, for debootstrap's `/dev`) survive.
    #[test]
    fn removing_a_tree_never_removes_through_a_mount() {
        if !nix::unistd::Uid::effective().is_root() {
            return; // mounting needs root; CI runs the suite as root
        }
        let scratch = tempfile::tempdir().unwrap();
        let host = scratch.path().join("host-dev");
        std::fs::create_dir(&host).unwrap();
        std::fs::write(host.join("keep"), "the host's").unwrap();
        let tree = scratch.path().join("staging");
        let inner = tree.join("dev");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(tree.join("file"), "staging").unwrap();
        nix::mount::mount(
            Some(&host),
            &inner,
            None::<&str>,
            nix::mount::MsFlags::MS_BIND,
            None::<&str>,
        )
        .unwrap();
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        assert_eq!(
            std::fs::read_to_string(host.join("keep")).unwrap(),
            "the host's"
        );
    }
}
