//! The two matching aids beyond SWE-Edit, each behind a switch: a whitespace-tolerant
//! fallback for a SEARCH block that matches nothing exactly, and the "did you mean" lines
//! most like a SEARCH (or `old_str`) that was not found.

/// Lines compared beyond which the nearest-match search is skipped (a 10,000-line file and a
/// 400-line SEARCH), so a failed edit never costs seconds.
const NEAREST_BUDGET: usize = 4_000_000;
/// Below this mean line similarity there is no "did you mean".
const NEAREST_THRESHOLD: f64 = 0.5;

/// A line's leading whitespace.
fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The start indexes of every run of `lines` that equals `search` line by line when leading
/// and trailing whitespace is ignored. A SEARCH of blank lines only matches nothing.
pub fn whitespace_matches(lines: &[&str], search: &[&str]) -> Vec<usize> {
    if search.iter().all(|line| line.trim().is_empty()) || search.len() > lines.len() {
        return Vec::new();
    }
    (0..=lines.len() - search.len())
        .filter(|&start| {
            search
                .iter()
                .zip(&lines[start..])
                .all(|(wanted, line)| wanted.trim() == line.trim())
        })
        .collect()
}

/// `replace`'s lines re-indented the way the file's lines differ from the SEARCH's. Each
/// indentation of a non-blank SEARCH line stands for the matched file line's; a REPLACE line
/// with an indentation the SEARCH used gets the file's instead, and one with a new
/// indentation gets the same whitespace added or removed as every SEARCH line had, when they
/// all had the same. Lines are kept as written when the SEARCH's indentations map to the
/// file's inconsistently.
pub fn reindent(matched: &[&str], search: &[&str], replace: &[&str]) -> Vec<String> {
    let mut map: Vec<(&str, &str)> = Vec::new();
    for (line, wanted) in matched.iter().zip(search) {
        if line.trim().is_empty() {
            continue;
        }
        let (have, want) = (indent(line), indent(wanted));
        match map.iter().find(|(from, _)| *from == want) {
            Some((_, to)) if *to != have => {
                return replace.iter().map(|line| (*line).to_owned()).collect();
            }
            Some(_) => {}
            None => map.push((want, have)),
        }
    }
    let added = common(&map, |want, have| have.strip_suffix(want));
    let removed = common(&map, |want, have| want.strip_suffix(have));
    replace
        .iter()
        .map(|line| {
            let (own, body) = line.split_at(indent(line).len());
            if body.is_empty() {
                return (*line).to_owned();
            }
            if let Some((_, to)) = map.iter().find(|(from, _)| *from == own) {
                return format!("{to}{body}");
            }
            match (added, removed) {
                (Some(extra), _) => format!("{extra}{line}"),
                (None, Some(extra)) => line.strip_prefix(extra).unwrap_or(line).to_owned(),
                (None, None) => (*line).to_owned(),
            }
        })
        .collect()
}

/// The same non-empty whitespace `difference` gives for every SEARCH-to-file indentation.
fn common<'a>(
    map: &[(&'a str, &'a str)],
    difference: impl Fn(&'a str, &'a str) -> Option<&'a str>,
) -> Option<&'a str> {
    let (want, have) = map.first()?;
    let extra = difference(want, have).filter(|extra| !extra.is_empty())?;
    map.iter()
        .all(|(want, have)| difference(want, have) == Some(extra))
        .then_some(extra)
}

/// The lines most like a text that was not found.
#[derive(Debug, Clone, PartialEq)]
pub struct Nearest {
    /// The 1-based number of the first line.
    pub first_line: usize,
    /// The lines, as in the file.
    pub lines: Vec<String>,
    /// Mean similarity of the lines to the wanted ones, from 0 to 1.
    pub similarity: f64,
}

/// The run of `lines` as long as `wanted` whose lines are most like `wanted`'s (mean of
/// the Dice coefficients of the trimmed lines' character pairs), when it is at least 50%
/// similar; the first such run on a tie.
pub fn nearest(lines: &[&str], wanted: &[&str]) -> Option<Nearest> {
    let width = wanted.len().min(lines.len());
    if width == 0 || lines.len().saturating_mul(width) > NEAREST_BUDGET {
        return None;
    }
    let file: Vec<Bigrams> = lines.iter().map(|line| Bigrams::of(line)).collect();
    let wanted: Vec<Bigrams> = wanted[..width]
        .iter()
        .map(|line| Bigrams::of(line))
        .collect();
    let mut best: Option<(usize, f64)> = None;
    for start in 0..=lines.len() - width {
        let total: f64 = wanted
            .iter()
            .zip(&file[start..])
            .map(|(want, have)| want.similarity(have))
            .sum();
        let score = total / width as f64;
        if best.is_none_or(|(_, best_score)| score > best_score) {
            best = Some((start, score));
        }
    }
    let (start, similarity) = best.filter(|(_, score)| *score >= NEAREST_THRESHOLD)?;
    Some(Nearest {
        first_line: start + 1,
        lines: lines[start..start + width]
            .iter()
            .map(|line| (*line).to_owned())
            .collect(),
        similarity,
    })
}

/// A trimmed line and its sorted character pairs.
struct Bigrams {
    text: String,
    pairs: Vec<(char, char)>,
}

impl Bigrams {
    fn of(line: &str) -> Self {
        let text = line.trim().to_owned();
        let chars: Vec<char> = text.chars().collect();
        let mut pairs: Vec<(char, char)> =
            chars.windows(2).map(|pair| (pair[0], pair[1])).collect();
        pairs.sort_unstable();
        Self { text, pairs }
    }

    /// The Dice coefficient of the two pair multisets; lines too short for pairs are 1 when
    /// equal and 0 otherwise.
    fn similarity(&self, other: &Bigrams) -> f64 {
        if self.pairs.is_empty() || other.pairs.is_empty() {
            return f64::from(u8::from(self.text == other.text));
        }
        let (mut i, mut j, mut shared) = (0, 0, 0usize);
        while i < self.pairs.len() && j < other.pairs.len() {
            match self.pairs[i].cmp(&other.pairs[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => (i, j, shared) = (i + 1, j + 1, shared + 1),
            }
        }
        (2 * shared) as f64 / (self.pairs.len() + other.pairs.len()) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_matches_ignore_indentation_and_trailing_spaces() {
        let lines = ["def f():", "    x = 1  ", "    return x", "", "x = 1"];
        assert_eq!(whitespace_matches(&lines, &["x = 1", "return x"]), [1]);
        assert_eq!(whitespace_matches(&lines, &["x = 1"]), [1, 4]);
        assert!(whitespace_matches(&lines, &["", "  "]).is_empty());
        assert!(whitespace_matches(&lines[..1], &["a", "b"]).is_empty());
    }

    #[test]
    fn reindent_follows_the_files_indentation() {
        let matched = ["        if x:", "            y()"];
        assert_eq!(
            reindent(
                &matched,
                &["if x:", "    y()"],
                &["if x:", "", "    z()", "        w()"]
            ),
            [
                "        if x:",
                "",
                "            z()",
                "                w()"
            ]
        );
        assert_eq!(
            reindent(
                &["if x:", "    y()"],
                &["    if x:", "        y()"],
                &["    if x:", "  w()"]
            ),
            ["if x:", "  w()"]
        );
        // Two-space SEARCH, four-space file: known indentations are mapped.
        assert_eq!(
            reindent(
                &["def f():", "    return 1"],
                &["def f():", "  return 1"],
                &["def f():", "  return 2"]
            ),
            ["def f():", "    return 2"]
        );
        // Inconsistent mapping: REPLACE is kept as written.
        assert_eq!(reindent(&["  a", "b"], &["a", "b"], &["c"]), ["c"]);
    }

    #[test]
    fn nearest_finds_the_closest_run() {
        let lines = [
            "import os",
            "def total(items):",
            "    return sum(items)",
            "x = 1",
        ];
        let found = nearest(&lines, &["def totl(items):", "    return sum(item)"]).unwrap();
        assert_eq!(found.first_line, 2);
        assert_eq!(found.lines, ["def total(items):", "    return sum(items)"]);
        assert!(
            found.similarity > 0.8 && found.similarity < 1.0,
            "{found:?}"
        );
        assert_eq!(nearest(&lines, &["completely unrelated text"]), None);
        assert_eq!(nearest(&[], &["x"]), None);
    }
}
