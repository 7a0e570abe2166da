//! The regions an edit changed, as SWE-Edit shows them after a successful edit: the lines
//! of the new file that differ from the old one (by `difflib` opcodes), with 2 lines of
//! context, regions within 10 lines of each other merged, numbered, and separated by
//! `[... N lines omitted ...]`.

use std::ops::Range;

use crate::diff::{Tag, opcodes};
use crate::text::{numbered, split_lines};

/// Lines of context around each change.
const CONTEXT: usize = 2;
/// Regions this close (in lines) are shown as one.
const MERGE_WITHIN: usize = 10;

/// The changed regions of `new` against `old`, numbered; empty when the lines are equal.
pub fn changed_regions(old: &str, new: &str) -> String {
    let (old_lines, new_lines) = (split_lines(old), split_lines(new));
    let mut regions: Vec<Range<usize>> = Vec::new();
    for code in opcodes(&old_lines, &new_lines) {
        if code.tag == Tag::Equal {
            continue;
        }
        let region =
            code.b.start.saturating_sub(CONTEXT)..(code.b.end + CONTEXT).min(new_lines.len());
        match regions.last_mut() {
            Some(last) if region.start <= last.end + MERGE_WITHIN => {
                last.end = last.end.max(region.end);
            }
            _ => regions.push(region),
        }
    }
    let mut out = String::new();
    for (index, region) in regions.iter().enumerate() {
        if index > 0 {
            let omitted = region.start - regions[index - 1].end;
            out.push_str(&format!("\n\n[... {omitted} lines omitted ...]\n\n"));
        }
        out.push_str(&numbered(
            region.start + 1,
            new_lines[region.clone()].iter().copied(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: std::ops::RangeInclusive<usize>) -> Vec<String> {
        lines.map(|n| format!("line {n}")).collect()
    }

    #[test]
    fn one_change_shows_two_lines_of_context() {
        let old = file(1..=10).join("\n");
        let mut new = file(1..=10);
        new[4] = "changed".into();
        assert_eq!(
            changed_regions(&old, &new.join("\n")),
            "     3\tline 3\n     4\tline 4\n     5\tchanged\n     6\tline 6\n     7\tline 7"
        );
    }

    #[test]
    fn distant_changes_are_separated_and_close_ones_merged() {
        let old = file(1..=60).join("\n");
        let mut new = file(1..=60);
        new[1] = "two".into();
        new[14] = "fifteen".into();
        new[49] = "fifty".into();
        let regions = changed_regions(&old, &new.join("\n"));
        // Lines 1-4 and 13-17 are 9 lines apart: one region 1-17; 48-52 is far.
        assert!(
            regions.starts_with("     1\tline 1\n     2\ttwo\n"),
            "{regions}"
        );
        assert!(
            regions.contains("    17\tline 17\n\n[... 30 lines omitted ...]\n\n    48\tline 48\n"),
            "{regions}"
        );
        assert!(regions.ends_with("    52\tline 52"), "{regions}");
        assert_eq!(changed_regions(&old, &old), "");
    }
}
