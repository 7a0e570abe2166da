//! Finding the patch in a model's text answer, for the OpenRLHF reward endpoint, where a
//! sample is plain text: the last fenced block that holds a unified diff, else the diff
//! that starts at the last `diff --git` line (up to a closing fence).

/// The unified diff in `text`, if it holds one.
pub fn patch_in(text: &str) -> Option<String> {
    let text = text.replace("\r\n", "\n");
    last_fenced_diff(&text).or_else(|| bare_diff(&text))
}

/// Whether `body` reads as the start of a unified diff.
fn is_diff(body: &str) -> bool {
    let first = body.lines().find(|line| !line.trim().is_empty());
    first.is_some_and(|line| line.starts_with("diff --git ") || line.starts_with("--- "))
}

/// The body of the last complete fenced block (```…```) that holds a diff.
fn last_fenced_diff(text: &str) -> Option<String> {
    let mut found = None;
    let mut open: Option<Vec<&str>> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => open = Some(Vec::new()),
            (Some(_), true) => {
                let body = open.take().unwrap_or_default();
                let joined = with_newline(&body.join("\n"));
                if is_diff(&joined) {
                    found = Some(joined);
                }
            }
            (Some(body), false) => body.push(line),
            (None, false) => {}
        }
    }
    found
}

/// The diff around the last `diff --git` line: from the first such line after the fence
/// before it (or from the first one at all) to the next fence or the end.
fn bare_diff(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let starts_file = |line: &&str| line.starts_with("diff --git ");
    let is_fence = |line: &&str| line.trim_start().starts_with("```");
    let last = lines.iter().rposition(starts_file)?;
    let after_fence = lines[..last]
        .iter()
        .rposition(is_fence)
        .map_or(0, |i| i + 1);
    let start = after_fence + lines[after_fence..].iter().position(starts_file)?;
    let end = lines[start..]
        .iter()
        .position(is_fence)
        .map_or(lines.len(), |offset| start + offset);
    Some(with_newline(&lines[start..end].join("\n")))
}

fn with_newline(text: &str) -> String {
    format!("{}\n", text.trim_end_matches('\n'))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const DIFF: &str = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn fenced_bare_and_absent_diffs() {
        let fenced = format!("I fixed it.\n```diff\n{DIFF}```\nDone.");
        assert_eq!(patch_in(&fenced).as_deref(), Some(DIFF));
        let bare = format!("Here:\n{DIFF}");
        assert_eq!(patch_in(&bare).as_deref(), Some(DIFF));
        let crlf = format!("```\n{DIFF}```").replace('\n', "\r\n");
        assert_eq!(patch_in(&crlf).as_deref(), Some(DIFF));
        let two = format!("```diff\n--- a/old\n+++ b/old\n```\nthen\n```patch\n{DIFF}```\n");
        assert_eq!(patch_in(&two).as_deref(), Some(DIFF));
        assert_eq!(patch_in("no patch here\n```python\nprint(1)\n```"), None);
        assert_eq!(patch_in(""), None);
    }

    proptest! {
        /// Any text gives a diff or none, never a panic.
        #[test]
        fn any_text_is_read(text in ".{0,300}") {
            let _ = patch_in(&text);
        }

        /// A fenced diff is found exactly, whatever prose (without fences) surrounds it.
        #[test]
        fn a_fenced_diff_is_found(before in "[^`]{0,80}", after in "[^`]{0,80}") {
            let text = format!("{before}\n```diff\n{DIFF}```\n{after}");
            let found = patch_in(&text);
            prop_assert_eq!(found.as_deref(), Some(DIFF));
        }
    }
}
