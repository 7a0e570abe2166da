//! Fixed-window retrieval, shared by the BM25 and embedding baselines: a file cut into
//! consecutive chunks of N lines (the last one shorter), the top chunks by score (ties go
//! to the earlier chunk), and the lines they cover.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::ranges::LineRange;

/// A chunk a retriever returned and its score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScoredChunk {
    /// Its first and last line (1-based, inclusive).
    pub lines: [usize; 2],
    /// Its score (BM25, or the cosine similarity to the query).
    pub score: f64,
}

/// The chunks of a file of `lines` lines: `[1, size]`, `[size + 1, 2 size]`, …, the last
/// one ending at the last line; none for an empty file. A `size` of 0 is taken as 1.
pub fn chunk_ranges(lines: usize, size: usize) -> Vec<LineRange> {
    let size = size.max(1);
    (1..=lines)
        .step_by(size)
        .map(|start| LineRange {
            start,
            end: (start + size - 1).min(lines),
        })
        .collect()
}

/// The text of each chunk of `lines`: its lines joined with newlines.
pub fn chunk_texts(lines: &[&str], chunks: &[LineRange]) -> Vec<String> {
    chunks
        .iter()
        .map(|chunk| lines[chunk.start - 1..chunk.end].join("\n"))
        .collect()
}

/// The `top` chunks with the highest `scores` (one per chunk), best first; equal scores
/// rank by position. Fewer when there are fewer chunks.
pub fn top_chunks(chunks: &[LineRange], scores: &[f64], top: usize) -> Vec<ScoredChunk> {
    // `-0.0 + 0.0` is `0.0`: the two zeros tie, as they should, under `total_cmp`.
    let mut ranked: Vec<(usize, f64)> =
        scores.iter().map(|score| score + 0.0).enumerate().collect();
    ranked.sort_by(
        |(a, a_score), (b, b_score)| match b_score.total_cmp(a_score) {
            Ordering::Equal => a.cmp(b),
            order => order,
        },
    );
    ranked
        .into_iter()
        .filter_map(|(index, score)| {
            let chunk = chunks.get(index)?;
            Some(ScoredChunk {
                lines: [chunk.start, chunk.end],
                score,
            })
        })
        .take(top)
        .collect()
}

/// Every line the chunks cover.
pub fn lines_of(chunks: &[ScoredChunk]) -> BTreeSet<usize> {
    chunks
        .iter()
        .flat_map(|chunk| chunk.lines[0]..=chunk.lines[1])
        .collect()
}

/// Sorted line numbers as maximal runs of consecutive lines, `[start, end]` each.
pub fn runs(lines: &BTreeSet<usize>) -> Vec<[usize; 2]> {
    let mut runs: Vec<[usize; 2]> = Vec::new();
    for &line in lines {
        match runs.last_mut() {
            Some(run) if run[1] + 1 == line => run[1] = line,
            _ => runs.push([line, line]),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_file_in_windows() {
        let pairs = |chunks: Vec<LineRange>| -> Vec<(usize, usize)> {
            chunks.iter().map(|c| (c.start, c.end)).collect()
        };
        assert_eq!(pairs(chunk_ranges(65, 30)), [(1, 30), (31, 60), (61, 65)]);
        assert_eq!(pairs(chunk_ranges(30, 30)), [(1, 30)]);
        assert_eq!(pairs(chunk_ranges(1, 30)), [(1, 1)]);
        assert!(chunk_ranges(0, 30).is_empty());
        assert_eq!(pairs(chunk_ranges(2, 0)), [(1, 1), (2, 2)]);
        let lines = ["a", "b", "c"];
        assert_eq!(chunk_texts(&lines, &chunk_ranges(3, 2)), ["a\nb", "c"]);
    }

    #[test]
    fn top_chunks_rank_by_score_then_position() {
        let chunks = chunk_ranges(50, 10);
        let ranked = top_chunks(&chunks, &[1.0, 3.0, 1.0, 3.0, 0.5], 3);
        let starts: Vec<usize> = ranked.iter().map(|c| c.lines[0]).collect();
        assert_eq!(starts, [11, 31, 1]);
        assert_eq!(ranked[0].score, 3.0);
        assert_eq!(top_chunks(&chunks, &[0.0; 5], 2)[1].lines, [11, 20]);
        let zeros = top_chunks(&chunks, &[0.0, -0.0, 0.0, 0.0, 0.0], 2);
        assert_eq!(
            (zeros[1].lines, zeros[1].score.is_sign_positive()),
            ([11, 20], true)
        );
        assert_eq!(top_chunks(&chunks[..1], &[2.0], 3).len(), 1);
        let lines = lines_of(&ranked);
        assert_eq!(lines.len(), 30);
        assert_eq!(runs(&lines), [[1, 20], [31, 40]]);
        assert!(runs(&BTreeSet::new()).is_empty());
    }
}
