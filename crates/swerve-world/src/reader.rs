//! The files a context is built from, behind a small trait: [`SourceReader`] answers what
//! is at a sandbox path, reads text and lists directories. [`WorkspaceFs`] implements it
//! (the agent's workspace, or the base checkout for original contents); walking
//! directories and matching globs are built on top here.

use std::fs;

use swerve_tools::{EntryKind, WorkspaceFs};

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Nothing usable (missing, outside the workspace, a device, …).
    Missing,
}

/// Read access to files by absolute sandbox path (`/testbed/src/a.py`).
pub trait SourceReader {
    /// What is at `path`.
    fn kind(&self, path: &str) -> SourceKind;
    /// The text of the file at `path`, or why it cannot be read (too large, binary, …).
    fn read(&self, path: &str, max_bytes: u64) -> Result<String, String>;
    /// The names of the entries of directory `path` (any order; empty when unreadable).
    fn list(&self, path: &str) -> Vec<String>;
}

impl SourceReader for WorkspaceFs {
    fn kind(&self, path: &str) -> SourceKind {
        match self.resolve(path).map(|resolved| resolved.kind) {
            Ok(EntryKind::File) => SourceKind::File,
            Ok(EntryKind::Dir) => SourceKind::Dir,
            Ok(EntryKind::Missing | EntryKind::Other) | Err(_) => SourceKind::Missing,
        }
    }

    fn read(&self, path: &str, max_bytes: u64) -> Result<String, String> {
        let resolved = self.resolve(path).map_err(|err| err.to_string())?;
        self.read_text(&resolved, max_bytes)
            .map_err(|err| err.to_string())
    }

    fn list(&self, path: &str) -> Vec<String> {
        let Ok(resolved) = self.resolve(path) else {
            return Vec::new();
        };
        let Ok(entries) = fs::read_dir(&resolved.host) else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .collect()
    }
}

/// Directory names a walk never enters.
const SKIPPED_DIRS: [&str; 3] = ["__pycache__", "node_modules", "site-packages"];

/// Entries a walk looks at before giving up (bounds the work on huge trees).
const MAX_VISITED: usize = 20_000;

/// Up to `limit` files under `dir` (sorted, depth first, hidden entries and caches
/// skipped) for which `keep` holds.
pub(crate) fn walk(
    reader: &dyn SourceReader,
    dir: &str,
    keep: &dyn Fn(&str) -> bool,
    limit: usize,
) -> Vec<String> {
    let mut found = Vec::new();
    let mut visited = 0;
    let mut stack = vec![dir.trim_end_matches('/').to_owned()];
    while let Some(current) = stack.pop() {
        let mut names = reader.list(&current);
        names.sort();
        let mut subdirs = Vec::new();
        for name in names {
            visited += 1;
            if found.len() >= limit || visited > MAX_VISITED {
                return found;
            }
            if name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_str()) {
                continue;
            }
            let path = format!("{current}/{name}");
            match reader.kind(&path) {
                SourceKind::File if keep(&name) => found.push(path),
                SourceKind::Dir => subdirs.push(path),
                SourceKind::File | SourceKind::Missing => {}
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    found
}

/// The files matching `pattern`, whose last component may hold `*`, `?` and `[…]`
/// (sorted, at most `limit`).
pub(crate) fn glob(reader: &dyn SourceReader, pattern: &str, limit: usize) -> Vec<String> {
    let (dir, name) = pattern.rsplit_once('/').unwrap_or(("", pattern));
    let dir = if dir.is_empty() { "/" } else { dir };
    let mut names: Vec<String> = reader
        .list(dir)
        .into_iter()
        .filter(|entry| !entry.starts_with('.') && glob_match(name, entry))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|entry| format!("{}/{entry}", dir.trim_end_matches('/')))
        .filter(|path| reader.kind(path) == SourceKind::File)
        .take(limit)
        .collect()
}

/// Shell pattern matching of one path component: `*`, `?`, `[abc]`, `[a-z]`, `[!x]`.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative matching with one backtrack point for the last `*`.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some('?') => Some(p + 1),
            Some('[') => match class_match(&pattern, p, name[n]) {
                Some((true, end)) => Some(end),
                Some((false, _)) => None,
                None => (name[n] == '[').then_some(p + 1),
            },
            Some(&c) => (c == name[n]).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(next), _) => {
                p = next;
                n += 1;
            }
            (None, Some((star_p, star_n))) => {
                p = star_p + 1;
                n = star_n + 1;
                star = Some((star_p, star_n + 1));
            }
            (None, None) => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// Whether `c` matches the bracket class starting at `pattern[start]`, and where the class
/// ends; `None` when the bracket never closes (then it is a literal `[`).
fn class_match(pattern: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = matches!(pattern.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while let Some(&item) = pattern.get(i) {
        if item == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|&end| end != ']') {
            let end = pattern[i + 2];
            matched |= item <= c && c <= end;
            i += 3;
        } else {
            matched |= item == c;
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_shell_patterns() {
        assert!(glob_match("test_*.py", "test_a.py"));
        assert!(!glob_match("test_*.py", "test_a.pyc"));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("[ab]x", "bx"));
        assert!(!glob_match("[!ab]x", "bx"));
        assert!(glob_match("[a-c]*", "cat"));
        assert!(glob_match("*_test.py", "x_y_test.py"));
        assert!(glob_match("[x", "[x"));
        assert!(glob_match("[]]", "]"));
        assert!(!glob_match("", "a"));
        assert!(glob_match("**", ""));
    }
}
