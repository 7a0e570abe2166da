//! The file trees a build reads: a stage's root (its unpacked layers merged as overlayfs
//! shows them: whiteouts hide, opaque directories cut off the layers below) and the build
//! context (one directory, less what `.dockerignore` excludes); and the path patterns of
//! `.dockerignore` and of `COPY`'s sources (Go's `filepath.Match`, plus `**` for any number
//! of directories in `.dockerignore`, as Docker's pattern matcher has it).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A tree of files read by a build.
pub struct Tree {
    /// Directories merged, topmost first (one for the context).
    layers: Vec<PathBuf>,
    /// `.dockerignore`'s rules (the context only).
    ignore: Vec<Rule>,
}

/// One `.dockerignore` line.
struct Rule {
    segments: Vec<String>,
    exclude: bool,
}

/// What one layer holds at a path.
enum InLayer {
    /// Nothing, and the layers below decide.
    Absent,
    /// A whiteout, or a parent that is not a directory: nothing, whatever the layers below.
    Hidden,
    /// An entry; `opaque` when a directory on the way (or it) cuts the layers below off.
    Present(PathBuf, bool),
}

impl Tree {
    /// The merged root of unpacked `layers`, topmost first.
    pub fn layers(layers: Vec<PathBuf>) -> Self {
        Self {
            layers,
            ignore: Vec::new(),
        }
    }

    /// The build context at `dir`, with its `.dockerignore` applied.
    pub fn context(dir: &Path) -> std::io::Result<Self> {
        let ignore = match std::fs::read_to_string(dir.join(".dockerignore")) {
            Ok(text) => parse_ignore(&text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(error),
        };
        Ok(Self {
            layers: vec![dir.to_path_buf()],
            ignore,
        })
    }

    fn ignored(&self, relative: &str) -> bool {
        if self.ignore.is_empty() || relative.is_empty() {
            return false;
        }
        let path: Vec<&str> = relative.split('/').collect();
        let mut ignored = false;
        for rule in &self.ignore {
            // A rule matching a parent directory matches everything under it.
            if (1..=path.len()).any(|n| match_segments(&rule.segments, &path[..n])) {
                ignored = rule.exclude;
            }
        }
        ignored
    }

    fn in_layer(layer: &Path, relative: &str) -> InLayer {
        let mut current = layer.to_path_buf();
        let mut opaque = false;
        let parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
        if parts.is_empty() {
            return InLayer::Present(current.clone(), is_opaque(&current));
        }
        for (index, part) in parts.iter().enumerate() {
            current.push(part);
            let Ok(meta) = std::fs::symlink_metadata(&current) else {
                return if opaque {
                    InLayer::Hidden
                } else {
                    InLayer::Absent
                };
            };
            if is_whiteout(&meta) {
                return InLayer::Hidden;
            }
            let last = index + 1 == parts.len();
            if !last && !meta.is_dir() {
                return InLayer::Hidden;
            }
            if meta.is_dir() && is_opaque(&current) {
                opaque = true;
            }
        }
        InLayer::Present(current, opaque)
    }

    /// The host path of the entry at `relative` (no leading `/`), if the tree has one.
    pub fn get(&self, relative: &str) -> Option<PathBuf> {
        if self.ignored(relative) {
            return None;
        }
        for layer in &self.layers {
            match Self::in_layer(layer, relative) {
                InLayer::Absent => continue,
                InLayer::Hidden => return None,
                InLayer::Present(path, _) => return Some(path),
            }
        }
        None
    }

    /// The entries of the directory at `relative`: name → host path, merged.
    pub fn list(&self, relative: &str) -> BTreeMap<String, PathBuf> {
        let mut entries = BTreeMap::new();
        let mut hidden = std::collections::BTreeSet::new();
        for layer in &self.layers {
            let (dir, opaque) = match Self::in_layer(layer, relative) {
                InLayer::Absent => continue,
                InLayer::Hidden => break,
                InLayer::Present(path, opaque) => (path, opaque),
            };
            if !dir.is_dir() || dir.is_symlink() {
                break;
            }
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if entries.contains_key(&name) || hidden.contains(&name) {
                    continue;
                }
                let child = join(relative, &name);
                let meta = entry.metadata();
                if meta.as_ref().is_ok_and(is_whiteout) || self.ignored(&child) {
                    hidden.insert(name);
                } else {
                    entries.insert(name, entry.path());
                }
            }
            if opaque {
                break;
            }
        }
        entries
    }

    /// Every path of the tree matching `pattern` (relative, `/`-separated; `*`, `?`, `[…]`
    /// within one path segment, as Go's `filepath.Match`), sorted.
    pub fn glob(&self, pattern: &str) -> Vec<String> {
        let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
        let mut found = vec![String::new()];
        for segment in segments {
            let mut next = Vec::new();
            for dir in &found {
                if has_magic(segment) {
                    for name in self.list(dir).keys() {
                        if match_segment(segment, name) {
                            next.push(join(dir, name));
                        }
                    }
                } else {
                    let child = join(dir, &unescape(segment));
                    if self.get(&child).is_some() {
                        next.push(child);
                    }
                }
            }
            found = next;
        }
        found.sort();
        found
    }
}

/// `dir/name`, or `name` at the root.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// Whether `meta` is an overlayfs whiteout (a 0:0 character device).
pub fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// Whether the directory `path` is marked opaque (overlayfs' `user.` or `trusted.` xattr).
pub fn is_opaque(path: &Path) -> bool {
    ["user.overlay.opaque", "trusted.overlay.opaque"]
        .iter()
        .any(|name| xattr_is_y(path, name))
}

fn xattr_is_y(path: &Path, name: &str) -> bool {
    let (Ok(c_path), Ok(c_name)) = (
        std::ffi::CString::new(path.as_os_str().as_bytes()),
        std::ffi::CString::new(name),
    ) else {
        return false;
    };
    let mut value = [0u8; 4];
    // SAFETY: valid NUL-terminated strings and a live buffer of the given length.
    let n = unsafe {
        libc::lgetxattr(
            c_path.as_ptr(),
            c_name.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    n == 1 && value[0] == b'y'
}

/// Whether `pattern` has glob characters.
pub fn has_magic(pattern: &str) -> bool {
    pattern.contains(['*', '?', '['])
}

fn unescape(segment: &str) -> String {
    let mut out = String::new();
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `.dockerignore` rules: one pattern a line, `#` comments, `!` re-includes, cleaned as
/// Docker cleans them (leading `/`, `./` and trailing `/` dropped).
fn parse_ignore(text: &str) -> Vec<Rule> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let (exclude, pattern) = match line.strip_prefix('!') {
                Some(rest) => (false, rest.trim()),
                None => (true, line),
            };
            let segments: Vec<String> = pattern
                .split('/')
                .filter(|s| !s.is_empty() && *s != ".")
                .map(str::to_owned)
                .collect();
            (!segments.is_empty()).then_some(Rule { segments, exclude })
        })
        .collect()
}

/// Whether pattern `segments` (with `**` for any number of segments) match `path`'s.
fn match_segments(segments: &[String], path: &[&str]) -> bool {
    match segments.split_first() {
        None => path.is_empty(),
        Some((first, rest)) if first == "**" => {
            (0..=path.len()).any(|skip| match_segments(rest, &path[skip..]))
        }
        Some((first, rest)) => match path.split_first() {
            Some((name, tail)) => match_segment(first, name) && match_segments(rest, tail),
            None => false,
        },
    }
}

/// Go's `filepath.Match` for one segment: `*`, `?`, `[…]` (`[^…]` negated, ranges), `\`
/// escapes. A malformed class matches nothing.
pub fn match_segment(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    matches(&p, &n)
}

fn matches(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|skip| matches(&p[1..], &n[skip..])),
        Some('?') => !n.is_empty() && matches(&p[1..], &n[1..]),
        Some('[') => {
            let Some(c) = n.first() else { return false };
            match class(&p[1..], *c) {
                Some((true, rest)) => matches(rest, &n[1..]),
                _ => false,
            }
        }
        Some('\\') if p.len() > 1 => n.first() == Some(&p[1]) && matches(&p[2..], &n[1..]),
        Some(c) => n.first() == Some(c) && matches(&p[1..], &n[1..]),
    }
}

/// Matches `c` against the class starting after `[`; (matched, the pattern after `]`).
fn class(p: &[char], c: char) -> Option<(bool, &[char])> {
    let (negated, mut i) = match p.first() {
        Some('^') | Some('!') => (true, 1),
        _ => (false, 0),
    };
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negated, &p[i + 1..]));
        }
        first = false;
        let mut low = p[i];
        if low == '\\' {
            i += 1;
            low = *p.get(i)?;
        }
        let mut high = low;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|c| *c != ']') {
            high = p[i + 2];
            if high == '\\' {
                high = *p.get(i + 3)?;
                i += 1;
            }
            i += 2;
        }
        if low <= c && c <= high {
            matched = true;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn go_filepath_match() {
        assert!(match_segment("*.txt", "a.txt"));
        assert!(!match_segment("*.txt", "a.txt.bak"));
        assert!(match_segment("a?c", "abc"));
        assert!(match_segment("[a-c]x", "bx"));
        assert!(!match_segment("[^a-c]x", "bx"));
        assert!(match_segment("\\*", "*"));
        assert!(!match_segment("[", "["));
    }

    #[test]
    fn dockerignore_rules() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in [
            "a/b/c.md",
            "a/keep.md",
            "x.md",
            "README.md",
            "deep/1/2/t.tmp",
            "src/m.rs",
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), "").unwrap();
        }
        // The documented example: `*.md`, `!README*.md`; and `**/*.tmp`, a directory.
        std::fs::write(
            root.join(".dockerignore"),
            "# comment\n*.md\n!README*.md\n**/*.tmp\n/src/\na/**/*.md\n!a/keep.md\n",
        )
        .unwrap();
        let tree = Tree::context(root).unwrap();
        assert!(tree.get("x.md").is_none());
        assert!(tree.get("README.md").is_some());
        assert!(tree.get("deep/1/2/t.tmp").is_none());
        assert!(tree.get("src/m.rs").is_none());
        assert!(tree.get("a/b/c.md").is_none());
        assert!(tree.get("a/keep.md").is_some());
        assert!(!tree.list("").contains_key("src"));
        assert_eq!(tree.glob("*.md"), ["README.md"]);
        assert_eq!(tree.glob("a/*"), ["a/b", "a/keep.md"]);
    }

    #[test]
    fn merged_layers_honour_whiteouts_and_opaque_directories() {
        let dir = tempfile::tempdir().unwrap();
        let (upper, lower) = (dir.path().join("upper"), dir.path().join("lower"));
        for path in ["d/old", "d/kept", "gone/f", "o/below"] {
            std::fs::create_dir_all(lower.join(path).parent().unwrap()).unwrap();
            std::fs::write(lower.join(path), "").unwrap();
        }
        std::fs::create_dir_all(upper.join("d")).unwrap();
        std::fs::create_dir_all(upper.join("o")).unwrap();
        std::fs::write(upper.join("o/above"), "").unwrap();
        let whiteout = |path: &Path| {
            nix::sys::stat::mknod(
                path,
                nix::sys::stat::SFlag::S_IFCHR,
                nix::sys::stat::Mode::empty(),
                0,
            )
        };
        if whiteout(&upper.join("d/old")).is_err() {
            return; // mknod needs privileges this run lacks
        }
        whiteout(&upper.join("gone")).unwrap();
        let opaque = std::ffi::CString::new(upper.join("o").as_os_str().as_bytes()).unwrap();
        // SAFETY: valid strings and buffer.
        unsafe {
            libc::lsetxattr(
                opaque.as_ptr(),
                c"user.overlay.opaque".as_ptr(),
                b"y".as_ptr().cast(),
                1,
                0,
            )
        };
        let tree = Tree::layers(vec![upper, lower]);
        assert_eq!(tree.list("d").keys().collect::<Vec<_>>(), ["kept"]);
        assert!(tree.get("gone/f").is_none());
        assert!(tree.get("d/old").is_none());
        assert_eq!(tree.list("o").keys().collect::<Vec<_>>(), ["above"]);
        assert!(tree.get("o/below").is_none());
        assert_eq!(tree.list("").keys().collect::<Vec<_>>(), ["d", "o"]);
    }

    proptest! {
        #[test]
        fn matching_never_panics(pattern in "[a-c*?\\[\\]^!\\\\-]{0,12}", name in "[a-c*?\\[\\]-]{0,8}") {
            let _ = match_segment(&pattern, &name);
        }

        #[test]
        fn literal_patterns_match_themselves(name in "[a-zA-Z0-9._-]{1,12}") {
            prop_assert!(match_segment(&name, &name));
        }
    }
}
