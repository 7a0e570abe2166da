//! Python's `difflib.SequenceMatcher` over lines (no junk function, `autojunk` on), as far as
//! swerve needs it: opcodes, from which SWE-Edit reports the regions an edit changed, and
//! `unified_diff`, which the PR-Edit judge and the instruction writer read. The matching
//! blocks are those Python finds, so the regions are the ones SWE-Edit shows.

use std::collections::HashMap;
use std::fmt::Write;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

/// FxHash (rustc's hasher): the matcher hashes every line once and looks positions up
/// millions of times on large files, where SipHash's resistance to attacks only costs time.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// What an [`Opcode`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// `a[a_range] == b[b_range]`.
    Equal,
    /// `a[a_range]` becomes `b[b_range]`.
    Replace,
    /// `a[a_range]` is removed.
    Delete,
    /// `b[b_range]` is inserted.
    Insert,
}

/// One step from `a` to `b`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opcode {
    /// What the step does.
    pub tag: Tag,
    /// The lines of `a` it covers.
    pub a: Range<usize>,
    /// The lines of `b` it covers.
    pub b: Range<usize>,
}

/// The opcodes turning `a` into `b`, as `SequenceMatcher(None, a, b).get_opcodes()`.
pub fn opcodes(a: &[&str], b: &[&str]) -> Vec<Opcode> {
    let mut codes = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (ai, bj, size) in Matcher::new(a, b).matching_blocks() {
        let tag = match (i < ai, j < bj) {
            (true, true) => Some(Tag::Replace),
            (true, false) => Some(Tag::Delete),
            (false, true) => Some(Tag::Insert),
            (false, false) => None,
        };
        if let Some(tag) = tag {
            codes.push(Opcode {
                tag,
                a: i..ai,
                b: j..bj,
            });
        }
        (i, j) = (ai + size, bj + size);
        if size > 0 {
            codes.push(Opcode {
                tag: Tag::Equal,
                a: ai..i,
                b: bj..j,
            });
        }
    }
    codes
}

/// A unified diff of two texts with three lines of context: the lines of Python's
/// `difflib.unified_diff(a.splitlines(), b.splitlines(), from_name, to_name, lineterm="")`,
/// each ending in a newline (lines split on `\n`); empty when the texts have the same lines.
pub fn unified_diff(a: &str, b: &str, from_name: &str, to_name: &str) -> String {
    let (a, b) = (crate::text::split_lines(a), crate::text::split_lines(b));
    let mut out = String::new();
    for group in grouped(opcodes(&a, &b), 3) {
        if out.is_empty() {
            let _ = write!(out, "--- {from_name}\n+++ {to_name}\n");
        }
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            unified_range(first.a.start, last.a.end),
            unified_range(first.b.start, last.b.end)
        );
        for code in &group {
            let mut lines = |prefix: char, lines: &[&str]| {
                for line in lines {
                    let _ = writeln!(out, "{prefix}{line}");
                }
            };
            match code.tag {
                Tag::Equal => lines(' ', &a[code.a.clone()]),
                _ => {
                    lines('-', &a[code.a.clone()]);
                    lines('+', &b[code.b.clone()]);
                }
            }
        }
    }
    out
}

/// Python's `_format_range_unified`.
fn unified_range(start: usize, stop: usize) -> String {
    match stop - start {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        length => format!("{},{length}", start + 1),
    }
}

/// Python's `get_grouped_opcodes(n)`: hunks with `n` lines of context.
fn grouped(mut codes: Vec<Opcode>, n: usize) -> Vec<Vec<Opcode>> {
    if codes.is_empty() {
        return Vec::new();
    }
    if let Some(first) = codes.first_mut().filter(|code| code.tag == Tag::Equal) {
        first.a.start = first.a.start.max(first.a.end.saturating_sub(n));
        first.b.start = first.b.start.max(first.b.end.saturating_sub(n));
    }
    if let Some(last) = codes.last_mut().filter(|code| code.tag == Tag::Equal) {
        last.a.end = last.a.end.min(last.a.start + n);
        last.b.end = last.b.end.min(last.b.start + n);
    }
    let mut groups = Vec::new();
    let mut group = Vec::new();
    for mut code in codes {
        if code.tag == Tag::Equal && code.a.len() > 2 * n {
            group.push(Opcode {
                tag: Tag::Equal,
                a: code.a.start..code.a.end.min(code.a.start + n),
                b: code.b.start..code.b.end.min(code.b.start + n),
            });
            groups.push(std::mem::take(&mut group));
            code.a.start = code.a.start.max(code.a.end - n);
            code.b.start = code.b.start.max(code.b.end - n);
        }
        group.push(code);
    }
    if !(group.len() == 1 && group[0].tag == Tag::Equal) {
        groups.push(group);
    }
    groups
}

/// Ratcliff/Obershelp matching of two line sequences. Lines are numbered once (equal lines,
/// equal numbers) so the search compares and looks up integers.
struct Matcher {
    a: Vec<usize>,
    b: Vec<usize>,
    /// Where each line of `b` occurs, by line number, minus lines too common to index
    /// (autojunk); empty for lines `b` does not have.
    b2j: Vec<Vec<usize>>,
}

impl Matcher {
    fn new(a: &[&str], b: &[&str]) -> Self {
        let mut numbers: FxMap<&str, usize> = FxMap::default();
        let mut number = |line| {
            let next = numbers.len();
            *numbers.entry(line).or_insert(next)
        };
        let b: Vec<usize> = b.iter().map(|line| number(line)).collect();
        let a: Vec<usize> = a.iter().map(|line| number(line)).collect();
        let mut b2j: Vec<Vec<usize>> = vec![Vec::new(); numbers.len()];
        for (j, &line) in b.iter().enumerate() {
            b2j[line].push(j);
        }
        if b.len() >= 200 {
            let limit = b.len() / 100 + 1;
            for positions in &mut b2j {
                if positions.len() > limit {
                    positions.clear();
                }
            }
        }
        Self { a, b, b2j }
    }

    /// Python's `find_longest_match(alo, ahi, blo, bhi)`.
    fn longest_match(&self, a: Range<usize>, b: Range<usize>) -> (usize, usize, usize) {
        let (mut best_i, mut best_j, mut best_size) = (a.start, b.start, 0);
        // Run lengths ending at each `j` for the previous and the current line of `a`; two
        // maps reused (cleared, swapped) instead of one allocated per line.
        let (mut lengths, mut next): (FxMap<usize, usize>, FxMap<usize, usize>) =
            Default::default();
        for i in a.clone() {
            next.clear();
            for &j in &self.b2j[self.a[i]] {
                if j < b.start {
                    continue;
                }
                if j >= b.end {
                    break;
                }
                let k = j
                    .checked_sub(1)
                    .and_then(|before| lengths.get(&before))
                    .map_or(1, |length| length + 1);
                next.insert(j, k);
                if k > best_size {
                    (best_i, best_j, best_size) = (i + 1 - k, j + 1 - k, k);
                }
            }
            std::mem::swap(&mut lengths, &mut next);
        }
        while best_i > a.start && best_j > b.start && self.a[best_i - 1] == self.b[best_j - 1] {
            (best_i, best_j, best_size) = (best_i - 1, best_j - 1, best_size + 1);
        }
        while best_i + best_size < a.end
            && best_j + best_size < b.end
            && self.a[best_i + best_size] == self.b[best_j + best_size]
        {
            best_size += 1;
        }
        (best_i, best_j, best_size)
    }

    /// Python's `get_matching_blocks()`, the `(len(a), len(b), 0)` sentinel included.
    fn matching_blocks(&self) -> Vec<(usize, usize, usize)> {
        let mut pending = vec![(0..self.a.len(), 0..self.b.len())];
        let mut blocks = Vec::new();
        while let Some((a, b)) = pending.pop() {
            let (i, j, k) = self.longest_match(a.clone(), b.clone());
            if k == 0 {
                continue;
            }
            blocks.push((i, j, k));
            if a.start < i && b.start < j {
                pending.push((a.start..i, b.start..j));
            }
            if i + k < a.end && j + k < b.end {
                pending.push((i + k..a.end, j + k..b.end));
            }
        }
        blocks.sort_unstable();
        let mut merged: Vec<(usize, usize, usize)> = Vec::new();
        for (i, j, k) in blocks {
            match merged.last_mut() {
                Some(last) if last.0 + last.2 == i && last.1 + last.2 == j => last.2 += k,
                _ => merged.push((i, j, k)),
            }
        }
        merged.push((self.a.len(), self.b.len(), 0));
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(a: &str, b: &str) -> Vec<(Tag, Range<usize>, Range<usize>)> {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
        opcodes(&a, &b)
            .into_iter()
            .map(|code| (code.tag, code.a, code.b))
            .collect()
    }

    #[test]
    fn opcodes_match_python() {
        // difflib.SequenceMatcher(None, "q a b x c d".split(), "a b y c d f".split()).get_opcodes()
        assert_eq!(
            tags("q a b x c d", "a b y c d f"),
            [
                (Tag::Delete, 0..1, 0..0),
                (Tag::Equal, 1..3, 0..2),
                (Tag::Replace, 3..4, 2..3),
                (Tag::Equal, 4..6, 3..5),
                (Tag::Insert, 6..6, 5..6),
            ]
        );
        assert!(opcodes(&[], &[]).is_empty());
    }

    #[test]
    fn unified_diff_matches_python() {
        let a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
        let b = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n";
        assert_eq!(
            unified_diff(a, b, "a/f", "b/f"),
            "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -9,4 +9,3 @@\n 9\n 10\n 11\n-12\n"
        );
        assert_eq!(
            unified_diff("", "x\n", "a", "b"),
            "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(unified_diff(a, a, "a", "b"), "");
    }
}
