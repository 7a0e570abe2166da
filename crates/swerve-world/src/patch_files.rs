//! The files a unified diff (git or plain) touches, read from its file headers while
//! skipping hunk bodies by their line counts, so a hunk line such as `+++ x` is never
//! mistaken for a header.

/// The repository-relative paths `patch` touches, in order, without duplicates: the new
/// path of each file, or the old one when the file is deleted.
pub fn patch_paths(patch: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut add = |path: Option<String>| {
        if let Some(path) = path.filter(|path| !path.is_empty())
            && !paths.contains(&path)
        {
            paths.push(path);
        }
    };
    let mut old_path: Option<String> = None;
    let mut git_path: Option<String> = None;
    let mut lines = patch.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            add(git_path.take());
            git_path = git_header_path(rest);
        } else if let Some(rest) = line.strip_prefix("--- ") {
            old_path = header_path(rest);
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            git_path = None;
            add(header_path(rest).or_else(|| old_path.take()));
        } else if let Some(rest) = line.strip_prefix("@@ ") {
            let (mut old, mut new) = hunk_counts(rest);
            while old > 0 || new > 0 {
                let Some(body) = lines.next() else { break };
                match body.chars().next() {
                    Some('-') => old = old.saturating_sub(1),
                    Some('+') => new = new.saturating_sub(1),
                    Some('\\') => {}
                    _ => {
                        old = old.saturating_sub(1);
                        new = new.saturating_sub(1);
                    }
                }
            }
        }
    }
    add(git_path);
    paths
}

/// The line counts of a hunk header's old and new ranges (`-a,b +c,d @@`; a missing
/// count is 1).
fn hunk_counts(header: &str) -> (usize, usize) {
    let mut counts = header
        .split_whitespace()
        .take(2)
        .map(|range| match range.split_once(',') {
            Some((_, count)) => count.parse().unwrap_or(0),
            None => 1,
        });
    let old = counts.next().unwrap_or(0);
    (old, counts.next().unwrap_or(0))
}

/// The path of a `---`/`+++` header: without its tab-separated timestamp and `a/`/`b/`
/// prefix; `None` for `/dev/null`.
fn header_path(rest: &str) -> Option<String> {
    let raw = rest.split('\t').next().unwrap_or(rest).trim_end();
    let path = unquote(raw);
    if path == "/dev/null" {
        return None;
    }
    Some(strip_side(&path).to_owned())
}

/// The new path of `diff --git a/X b/Y` (used when a file has no `---`/`+++` headers:
/// renames, mode changes, binary files).
fn git_header_path(rest: &str) -> Option<String> {
    if rest.starts_with('"') {
        let (_, new) = split_quoted(rest)?;
        return Some(strip_side(&new).to_owned());
    }
    let (_, new) = rest.rsplit_once(" b/")?;
    Some(new.to_owned())
}

/// Splits `"a/x" "b/y"` (either side may be unquoted) into its two paths.
fn split_quoted(rest: &str) -> Option<(String, String)> {
    let end = closing_quote(rest)?;
    let old = unquote(&rest[..=end]);
    let new = unquote(rest[end + 1..].trim_start());
    Some((old, new))
}

/// The byte index of the quote closing the C-style string that starts `text`.
fn closing_quote(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(at),
            _ => {}
        }
    }
    None
}

fn strip_side(path: &str) -> &str {
    path.strip_prefix("a/")
        .or_else(|| path.strip_prefix("b/"))
        .unwrap_or(path)
}

/// Git's C-style quoting undone (`"a\tb"`, octal UTF-8 bytes); other text unchanged.
fn unquote(text: &str) -> String {
    let Some(inner) = text
        .strip_prefix('"')
        .and_then(|text| text.strip_suffix('"'))
    else {
        return text.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some(digit @ '0'..='7') => {
                let mut value = digit.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    if let Some(next) = chars.peek().and_then(|c| c.to_digit(8)) {
                        value = value * 8 + next;
                        chars.next();
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => {
                let mut buffer = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buffer).as_bytes());
            }
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_git_and_plain_diffs() {
        let patch = "\
diff --git a/src/a.py b/src/a.py
index 1..2 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,3 +1,3 @@
 x
--- not a header
+++ not a header either
 y
diff --git a/old.py b/old.py
deleted file mode 100644
--- a/old.py
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/x y.py b/z.py
similarity index 100%
rename from x y.py
rename to z.py
diff --git \"a/t\\303\\251st.py\" \"b/t\\303\\251st.py\"
--- \"a/t\\303\\251st.py\"
+++ \"b/t\\303\\251st.py\"
@@ -1 +1 @@
-a
+b
";
        assert_eq!(
            patch_paths(patch),
            ["src/a.py", "old.py", "z.py", "tést.py"]
        );
        let plain = "--- lib.py\t2024-01-01\n+++ lib.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(patch_paths(plain), ["lib.py"]);
        assert!(patch_paths("").is_empty());
    }
}
