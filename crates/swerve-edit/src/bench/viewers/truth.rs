//! The ground truth of a viewer baseline: the lines of the original file that the change to
//! the target touches, from a line diff (swerve's port of `difflib`, [`crate::diff`]).
//! `replace` and `delete` opcodes count the original lines they cover; a pure `insert`
//! before original line `k` counts line `k`, and one after the last line counts the last
//! line (an insertion into an empty file counts nothing).

use std::collections::BTreeSet;

use crate::diff::{Tag, opcodes};
use crate::text::split_lines;

/// The 1-based numbers of the lines of `original` that the change to `target` touches (see
/// the module's documentation); empty when the two have the same lines.
pub fn changed_lines(original: &str, target: &str) -> BTreeSet<usize> {
    let (before, after) = (split_lines(original), split_lines(target));
    let mut lines = BTreeSet::new();
    for code in opcodes(&before, &after) {
        match code.tag {
            Tag::Equal => {}
            Tag::Replace | Tag::Delete => lines.extend(code.a.start + 1..=code.a.end),
            // Inserted before 0-based line `i`, i.e. before 1-based line `i + 1`; at the
            // end of the file (`i == len`), after 1-based line `i`.
            Tag::Insert => {
                let i = code.a.start;
                match i < before.len() {
                    true => lines.insert(i + 1),
                    false if i > 0 => lines.insert(i),
                    false => false,
                };
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(original: &str, target: &str) -> Vec<usize> {
        changed_lines(original, target).into_iter().collect()
    }

    #[test]
    fn replace_and_delete_count_the_original_lines() {
        let original = "a\nb\nc\nd\ne\n";
        assert_eq!(lines(original, "a\nB\nC\nd\ne\n"), [2, 3]);
        assert_eq!(lines(original, "a\nb\ne\n"), [3, 4]);
        assert_eq!(lines(original, "b\nc\nd\ne\n"), [1]);
        assert_eq!(lines(original, ""), [1, 2, 3, 4, 5]);
        // A replacement of one line by three counts the one original line.
        assert_eq!(lines(original, "a\nb\nx\ny\nz\nd\ne\n"), [3]);
    }

    #[test]
    fn an_insertion_counts_the_line_after_it_or_the_last_line() {
        let original = "a\nb\nc\n";
        assert_eq!(lines(original, "new\na\nb\nc\n"), [1]);
        assert_eq!(lines(original, "a\nnew\nnewer\nb\nc\n"), [2]);
        assert_eq!(lines(original, "a\nb\nc\nnew\n"), [3], "end of file");
        assert_eq!(lines("", "new\n"), Vec::<usize>::new(), "empty original");
        assert_eq!(
            lines("a\nb\nc\nd\n", "a\nx\nb\nc\nD\n"),
            [2, 4],
            "an insertion and a replacement"
        );
    }

    #[test]
    fn no_change_no_lines() {
        assert!(changed_lines("a\nb\n", "a\nb\n").is_empty());
        assert!(changed_lines("", "").is_empty());
        // A final newline added or removed changes no line as lines are split.
        assert!(changed_lines("a\nb", "a\nb\n").is_empty());
    }
}
