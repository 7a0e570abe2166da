//! [`remove_tree`]: removing the directory trees workspaces, bases and the cache leave
//! behind. Its own module so that those three can share it without importing each other.

use std::path::Path;
use std::process::Command;

/// Removes a directory tree, making unreadable directories (overlay's work dir) removable first.
pub(crate) fn remove_tree(path: &Path) -> std::io::Result<()> {
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
