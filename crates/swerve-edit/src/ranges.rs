//! The viewer's answer: JSON line ranges read robustly from a model reply, clamped to the
//! file, sorted and merged when they lie within 3 lines of each other, and rendered as
//! numbered lines with omitted-line markers (SWE-Edit `_parse_line_ranges`,
//! `_validate_and_merge_ranges`, `_format_view_output`).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::text::{after_think, push_numbered};

/// Ranges whose gap is at most this many lines are merged into one.
pub const MERGE_GAP: usize = 3;

/// An inclusive, 1-based range of lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineRange {
    /// The first line shown.
    pub start: usize,
    /// The last line shown.
    pub end: usize,
}

impl LineRange {
    /// How many lines the range holds.
    pub fn line_count(&self) -> usize {
        self.end + 1 - self.start
    }
}

/// The reply held no JSON list of line ranges.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Could not parse line ranges from LLM output")]
pub struct UnparseableRanges;

/// SWE-Edit's fallback pattern: a list of `[int, int]` pairs somewhere in the text (a
/// trailing comma before the closing bracket is tolerated, as the pattern allows it).
static PAIR_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[\s*(?:\[\s*[0-9]+\s*,\s*[0-9]+\s*\]\s*,?\s*)*\]").expect("valid pattern")
});
static PAIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\s*([0-9]+)\s*,\s*([0-9]+)\s*\]").expect("valid pattern"));
static FENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[A-Za-z0-9_-]*\n(.*?)```").expect("valid pattern"));

/// The line ranges a viewer reply names, clamped to `[1, total_lines]`, sorted and merged
/// (see [`merge`]). Read in this order, the first that works winning: the text after
/// `</think>` as JSON; each fenced code block as JSON; the first list of integer pairs in the
/// text (SWE-Edit's fallback pattern); a lone `[start, end]` pair. In a JSON list, items that
/// are not two numbers (or numeric strings) are skipped, and a list that is itself two
/// numbers is one range. An empty list is a valid answer: nothing is relevant.
pub fn parse_ranges(reply: &str, total_lines: usize) -> Result<Vec<LineRange>, UnparseableRanges> {
    let answer = after_think(reply).trim();
    let from_json = |text: &str| match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Array(items)) => Some(pairs_of(&items)),
        _ => None,
    };
    let pairs = from_json(answer)
        .or_else(|| {
            FENCE
                .captures_iter(answer)
                .find_map(|fenced| from_json(&fenced[1]))
        })
        .or_else(|| {
            let list = PAIR_LIST.find(answer)?.as_str();
            Some(
                PAIR.captures_iter(list)
                    .map(|pair| pair_of_digits(&pair))
                    .collect(),
            )
        })
        .or_else(|| {
            PAIR.captures(answer)
                .map(|pair| vec![pair_of_digits(&pair)])
        })
        .ok_or(UnparseableRanges)?;
    Ok(merge(clamp(pairs, total_lines)))
}

fn pair_of_digits(pair: &regex::Captures) -> (i64, i64) {
    let number = |index: usize| pair[index].parse().unwrap_or(i64::MAX);
    (number(1), number(2))
}

/// The `[start, end]` pairs of a JSON list (or the list itself when it is one pair).
fn pairs_of(items: &[Value]) -> Vec<(i64, i64)> {
    if let Some(pair) = pair_of(items) {
        return vec![pair];
    }
    items
        .iter()
        .filter_map(|item| pair_of(item.as_array()?))
        .collect()
}

fn pair_of(items: &[Value]) -> Option<(i64, i64)> {
    match items {
        [start, end] => Some((line_number(start)?, line_number(end)?)),
        _ => None,
    }
}

/// A line number as Python's `int()` reads it: integers, floats cut toward zero, and
/// strings of an integer; huge values saturate (they are clamped anyway).
fn line_number(value: &Value) -> Option<i64> {
    match value {
        Value::Number(number) => number
            .as_i64()
            .or_else(|| number.as_u64().map(|_| i64::MAX))
            .or_else(|| number.as_f64().map(|float| float as i64)),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// Clamps each pair into `[1, total_lines]` and drops pairs whose start is past their end.
fn clamp(pairs: Vec<(i64, i64)>, total_lines: usize) -> Vec<LineRange> {
    if total_lines == 0 {
        return Vec::new();
    }
    let last = i64::try_from(total_lines).unwrap_or(i64::MAX);
    // Both ends lie in [1, total_lines] after clamping, so the casts are lossless.
    let line = |number: i64| number.clamp(1, last) as usize;
    pairs
        .into_iter()
        .map(|(start, end)| LineRange {
            start: line(start),
            end: line(end),
        })
        .filter(|range| range.start <= range.end)
        .collect()
}

/// Sorts ranges by their start and merges those that overlap or lie within [`MERGE_GAP`]
/// lines of the one before (`start <= previous end + 3`).
pub fn merge(mut ranges: Vec<LineRange>) -> Vec<LineRange> {
    ranges.sort_by_key(|range| range.start);
    let mut merged: Vec<LineRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if range.start <= last.end + MERGE_GAP => last.end = last.end.max(range.end),
            _ => merged.push(range),
        }
    }
    merged
}

/// The viewer's observation for merged `ranges` of `lines`: `Relevant sections in {path}:`,
/// then each range's numbered lines (trailing whitespace removed), with
/// `... (N lines omitted) ...` between ranges; `No content in {path} matches the query.`
/// when there are none.
pub fn render(path: &str, lines: &[&str], ranges: &[LineRange]) -> String {
    if ranges.is_empty() {
        return format!("No content in {path} matches the query.");
    }
    let mut out = format!("Relevant sections in {path}:\n");
    for (index, range) in ranges.iter().enumerate() {
        out.push('\n');
        for number in range.start..=range.end {
            if number > range.start {
                out.push('\n');
            }
            push_numbered(&mut out, number, lines[number - 1].trim_end());
        }
        if let Some(next) = ranges.get(index + 1) {
            let omitted = next.start - range.end - 1;
            out.push_str(&format!("\n\n... ({omitted} lines omitted) ...\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(pairs: &[(usize, usize)]) -> Vec<LineRange> {
        pairs
            .iter()
            .map(|&(start, end)| LineRange { start, end })
            .collect()
    }

    #[test]
    fn every_reply_shape_parses() {
        let cases = [
            ("[[10, 25], [45, 60]]", vec![(10, 25), (45, 60)]),
            ("[]", vec![]),
            ("<think>maybe [[1, 2]]</think>\n[[5, 6]]", vec![(5, 6)]),
            ("```json\n[[3, 4]]\n```\nThose are the lines.", vec![(3, 4)]),
            (
                "The relevant lines are [[7, 8], [30, 31],] as asked.",
                vec![(7, 8), (30, 31)],
            ),
            ("Lines [12, 14] hold it.", vec![(12, 14)]),
            ("[12, 14]", vec![(12, 14)]),
            (
                "[[1.9, \"4\"], \"x\", [1], [true, 2], [2, 3, 4]]",
                vec![(1, 4)],
            ),
        ];
        for (reply, expected) in cases {
            assert_eq!(parse_ranges(reply, 100), Ok(ranges(&expected)), "{reply}");
        }
        for reply in [
            "I could not find it.",
            "",
            "{\"ranges\": 3}",
            "<think>[[1, 2]]",
        ] {
            assert_eq!(parse_ranges(reply, 100), Err(UnparseableRanges), "{reply}");
        }
    }

    #[test]
    fn ranges_are_clamped_sorted_and_merged_within_three_lines() {
        let parsed = parse_ranges(
            "[[90, 200], [-5, 3], [7, 9], [50, 40], [11, 12], [16, 20]]",
            100,
        );
        // 11 <= 9 + 3 merges; 16 <= 12 + 3 does not.
        assert_eq!(parsed, Ok(ranges(&[(1, 3), (7, 12), (16, 20), (90, 100)])));
        assert_eq!(
            merge(ranges(&[(20, 30), (1, 5), (8, 9), (9, 10)])),
            ranges(&[(1, 10), (20, 30)])
        );
        assert_eq!(merge(ranges(&[(1, 50), (10, 20)])), ranges(&[(1, 50)]));
        assert_eq!(parse_ranges("[[1, 5]]", 0), Ok(vec![]));
        assert_eq!(
            parse_ranges("[[1, 99999999999999999999999]]", 3),
            Ok(ranges(&[(1, 3)]))
        );
    }

    #[test]
    fn rendering_matches_swe_edit() {
        let lines = ["a", "b  ", "c", "d", "e", "f", "g"];
        assert_eq!(
            render("/testbed/x.py", &lines, &ranges(&[(1, 2), (6, 7)])),
            "Relevant sections in /testbed/x.py:\n\n     1\ta\n     2\tb\n\n... (3 lines omitted) ...\n\n     6\tf\n     7\tg"
        );
        assert_eq!(
            render("/testbed/x.py", &lines, &[]),
            "No content in /testbed/x.py matches the query."
        );
    }
}
