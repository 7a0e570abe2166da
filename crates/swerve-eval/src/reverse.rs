//! Reversing a patch in git's unified-diff format: the text `git apply` applies as
//! `git apply --reverse` applies the original. SWE-smith's gold solution is the reverse of
//! its `patch` (the bug), which its harness applies with `--reverse`; swerve hands the
//! reversed text to every grader, so a gold prediction is an ordinary patch.
//!
//! Per file: the `diff --git a/X b/Y` paths, `---`/`+++` paths, `new`/`deleted file mode`,
//! `rename from`/`to`, `copy` is refused, the `index A..B` ids and modes, `old`/`new mode`
//! are swapped; per hunk, the `-a,b +c,d` ranges are swapped and each `-` line becomes `+`
//! and each `+` line `-` (context and `\ No newline at end of file` stay where they are: git
//! builds a hunk's old and new sides separately, so the order of `-` and `+` lines within a
//! hunk does not matter). Binary patches (`GIT binary patch`) are refused.

/// Why a patch could not be reversed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot reverse the patch: {0}")]
pub struct ReverseError(String);

/// The reverse of `patch`.
pub fn reverse_patch(patch: &str) -> Result<String, ReverseError> {
    let mut out = String::with_capacity(patch.len());
    let mut lines = patch.split_inclusive('\n');
    // Lines left on each side of the current hunk (from its header); headers otherwise.
    let (mut old_left, mut new_left) = (0usize, 0usize);
    while let Some(line) = lines.next() {
        let (text, end) = split_end(line);
        if old_left > 0 || new_left > 0 {
            let flipped = match text.as_bytes().first() {
                Some(b'+') => {
                    new_left = new_left.saturating_sub(1);
                    Some('-')
                }
                Some(b'-') => {
                    old_left = old_left.saturating_sub(1);
                    Some('+')
                }
                Some(b' ') | None => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                    None
                }
                Some(b'\\') => None,
                _ => return Err(ReverseError(format!("a hunk ends early, at {text:?}"))),
            };
            match flipped {
                Some(sign) => {
                    out.push(sign);
                    out.push_str(&text[1..]);
                    out.push_str(end);
                }
                None => out.push_str(line),
            }
            continue;
        }
        if text.starts_with("GIT binary patch") {
            return Err(ReverseError("it holds a binary patch".into()));
        }
        if text.starts_with("copy from ") || text.starts_with("copy to ") {
            return Err(ReverseError("it copies a file".into()));
        }
        let reversed = if let Some(paths) = text.strip_prefix("diff --git ") {
            format!("diff --git {}", swap_git_paths(paths)?)
        } else if text.starts_with("@@ ") {
            let (reversed, old_count, new_count) = swap_hunk_ranges(text)?;
            (old_left, new_left) = (old_count, new_count);
            reversed
        } else if let Some(path) = text.strip_prefix("--- ") {
            // The `+++` line that follows names the new side, which becomes the old one.
            let Some(next) = lines.next() else {
                return Err(ReverseError("a --- line without its +++ line".into()));
            };
            let (next_text, next_end) = split_end(next);
            let Some(new_path) = next_text.strip_prefix("+++ ") else {
                return Err(ReverseError("a --- line without its +++ line".into()));
            };
            out.push_str(&format!("--- {}{end}", swap_prefix(new_path)));
            out.push_str(&format!("+++ {}{next_end}", swap_prefix(path)));
            continue;
        } else if let Some(mode) = text.strip_prefix("new file mode ") {
            format!("deleted file mode {mode}")
        } else if let Some(mode) = text.strip_prefix("deleted file mode ") {
            format!("new file mode {mode}")
        } else if let Some(mode) = text.strip_prefix("old mode ") {
            format!("new mode {mode}")
        } else if let Some(mode) = text.strip_prefix("new mode ") {
            format!("old mode {mode}")
        } else if let Some(path) = text.strip_prefix("rename from ") {
            format!("rename to {path}")
        } else if let Some(path) = text.strip_prefix("rename to ") {
            format!("rename from {path}")
        } else if let Some(rest) = text.strip_prefix("index ") {
            let (ids, mode) = rest
                .split_once(' ')
                .map_or((rest, None), |(ids, mode)| (ids, Some(mode)));
            let (old, new) = ids
                .split_once("..")
                .ok_or_else(|| ReverseError(format!("an index line without ..: {text:?}")))?;
            match mode {
                Some(mode) => format!("index {new}..{old} {mode}"),
                None => format!("index {new}..{old}"),
            }
        } else {
            text.to_owned()
        };
        out.push_str(&reversed);
        out.push_str(end);
    }
    Ok(out)
}

/// A line without its line ending, and the ending.
fn split_end(line: &str) -> (&str, &str) {
    match line.strip_suffix("\r\n") {
        Some(text) => (text, "\r\n"),
        None => match line.strip_suffix('\n') {
            Some(text) => (text, "\n"),
            None => (line, ""),
        },
    }
}

/// `a/X b/Y` as `a/Y b/X`. Paths with spaces are split where `" b/"` is.
fn swap_git_paths(paths: &str) -> Result<String, ReverseError> {
    let (old, new) = paths
        .split_once(" b/")
        .map(|(old, new)| (old.strip_prefix("a/").unwrap_or(old), new))
        .ok_or_else(|| {
            ReverseError(format!(
                "a diff --git line without a/ and b/ paths: {paths:?}"
            ))
        })?;
    Ok(format!("a/{new} b/{old}"))
}

/// A `---`/`+++` path with its `a/`/`b/` side swapped (`/dev/null` kept).
fn swap_prefix(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("a/") {
        format!("b/{rest}")
    } else if let Some(rest) = path.strip_prefix("b/") {
        format!("a/{rest}")
    } else {
        path.to_owned()
    }
}

/// `@@ -a,b +c,d @@ tail` as `@@ -c,d +a,b @@ tail`, with the line counts `b` and `d`
/// (1 when left out).
fn swap_hunk_ranges(line: &str) -> Result<(String, usize, usize), ReverseError> {
    let bad = || {
        ReverseError(format!(
            "a hunk header that is not @@ -a,b +c,d @@: {line:?}"
        ))
    };
    let rest = line.strip_prefix("@@ -").ok_or_else(bad)?;
    let (old, rest) = rest.split_once(" +").ok_or_else(bad)?;
    let (new, tail) = rest.split_once(" @@").ok_or_else(bad)?;
    let count = |range: &str| match range.split_once(',') {
        Some((_, count)) => count.parse::<usize>().map_err(|_| bad()),
        None => Ok(1),
    };
    Ok((
        format!("@@ -{new} +{old} @@{tail}"),
        count(old)?,
        count(new)?,
    ))
}
