//! Okapi BM25 over the chunks of one file, the lexical viewer baseline of SWE-Edit's
//! Appendix E.1.
//!
//! Tokens ([`tokenize`]): the text is split on every character that is not a letter or a
//! digit (so `snake_case` gives `snake`, `case`), each piece is split again at camelCase
//! boundaries (a lower-case letter or digit followed by an upper-case one: `parseJson` →
//! `parse`, `json`; and an upper-case run before a capitalized word: `HTTPServer` →
//! `http`, `server`), and every token is lower-cased. Digits stay with the letters before
//! them (`base64Encode` → `base64`, `encode`). No stemming, no stop words.
//!
//! Score of a chunk `D` for a query `Q`, with `N` chunks, `n(t)` of them containing `t`,
//! `f(t, D)` occurrences of `t` in `D`, `|D|` tokens in `D` and `avgdl` the mean over the
//! chunks:
//!
//! ```text
//! score(D, Q) = Σ over distinct t in Q:  idf(t) · f(t, D) · (k1 + 1) / (f(t, D) + k1 · (1 − b + b · |D| / avgdl))
//! idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
//! ```
//!
//! (the IDF of Lucene's BM25, never negative; `k1 = 1.2`, `b = 0.75` by default). The IDF
//! is computed over the chunks of the same file.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::chunks::{ScoredChunk, chunk_ranges, chunk_texts, top_chunks};

/// BM25's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25 {
    /// Term-frequency saturation (`k1 ≥ 0`; 1.2 by default).
    pub k1: f64,
    /// Length normalization (`0 ≤ b ≤ 1`; 0.75 by default).
    pub b: f64,
}

impl Default for Bm25 {
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

impl Bm25 {
    /// The `top` chunks of `chunk_lines` lines of a file's `lines` that score best for
    /// `query`, best first (see [`top_chunks`]).
    pub fn retrieve(
        &self,
        lines: &[&str],
        query: &str,
        chunk_lines: usize,
        top: usize,
    ) -> Vec<ScoredChunk> {
        let chunks = chunk_ranges(lines.len(), chunk_lines);
        let documents: Vec<Vec<String>> = chunk_texts(lines, &chunks)
            .iter()
            .map(|text| tokenize(text))
            .collect();
        top_chunks(&chunks, &self.scores(&documents, &tokenize(query)), top)
    }

    /// The score of each of `documents` (token lists) for the `query` tokens (see the
    /// module's documentation); 0 for a document sharing no token with the query.
    pub fn scores(&self, documents: &[Vec<String>], query: &[String]) -> Vec<f64> {
        let count = documents.len() as f64;
        let total: usize = documents.iter().map(Vec::len).sum();
        let average = total as f64 / count.max(1.0);
        let frequencies: Vec<HashMap<&str, usize>> = documents
            .iter()
            .map(|tokens| {
                let mut frequency = HashMap::new();
                for token in tokens {
                    *frequency.entry(token.as_str()).or_insert(0) += 1;
                }
                frequency
            })
            .collect();
        let terms: BTreeSet<&str> = query.iter().map(String::as_str).collect();
        let idf: Vec<(&str, f64)> = terms
            .into_iter()
            .map(|term| {
                let containing = frequencies.iter().filter(|f| f.contains_key(term)).count();
                let containing = containing as f64;
                (
                    term,
                    (1.0 + (count - containing + 0.5) / (containing + 0.5)).ln(),
                )
            })
            .collect();
        documents
            .iter()
            .zip(&frequencies)
            .map(|(tokens, frequency)| {
                let length = tokens.len() as f64 / average;
                idf.iter()
                    .filter_map(|(term, idf)| {
                        let f = *frequency.get(term)? as f64;
                        Some(
                            idf * f * (self.k1 + 1.0)
                                / (f + self.k1 * (1.0 - self.b + self.b * length)),
                        )
                    })
                    .sum()
            })
            .collect()
    }
}

/// The tokens of `text` (see the module's documentation).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = word.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (previous, current) = (chars[i - 1], chars[i]);
            let after_lower = previous.is_lowercase() || previous.is_numeric();
            let ends_acronym =
                previous.is_uppercase() && chars.get(i + 1).is_some_and(|next| next.is_lowercase());
            if current.is_uppercase() && (after_lower || ends_acronym) {
                tokens.push(chars[start..i].iter().collect::<String>().to_lowercase());
                start = i;
            }
        }
        if start < chars.len() {
            tokens.push(chars[start..].iter().collect::<String>().to_lowercase());
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        tokenize(text)
    }

    #[test]
    fn tokens_split_on_punctuation_snake_and_camel_case() {
        assert_eq!(tokens("parse_json_file(x)"), ["parse", "json", "file", "x"]);
        assert_eq!(tokens("parseJsonFile"), ["parse", "json", "file"]);
        assert_eq!(
            tokens("HTTPServer.getURL()"),
            ["http", "server", "get", "url"]
        );
        assert_eq!(tokens("base64Encode utf8"), ["base64", "encode", "utf8"]);
        assert_eq!(tokens("MAX_RETRIES = 3"), ["max", "retries", "3"]);
        assert_eq!(
            tokens("Use the new API host!"),
            ["use", "the", "new", "api", "host"]
        );
        assert_eq!(tokens("Größe_ändernX"), ["größe", "ändern", "x"]);
        assert!(tokens("  -> {} ;; ").is_empty());
        assert!(tokens("").is_empty());
    }

    /// Three two-line chunks whose tokens are `retry count retry`, `fetch url` and
    /// `retry url host port` (N = 3, avgdl = 3), and the query `retry the host retry`:
    /// idf(retry) = ln(1 + 1.5 / 2.5) = ln 1.6, idf(host) = ln(1 + 2.5 / 1.5) = ln(8/3);
    /// `the` is in no chunk.
    #[test]
    fn scores_and_ranking_by_hand() {
        let file = [
            "retry count",
            "retry",
            "fetch(",
            "url)",
            "retryUrl",
            "host_port",
        ];
        let query = "Retry the host, retry!";
        // Chunk 1: f(retry) = 2, |D| = avgdl: 2 · 2.2 / (2 + 1.2) = 1.375.
        let first = 1.6f64.ln() * 1.375;
        // Chunk 3: |D| / avgdl = 4/3, so k1 · (0.25 + 0.75 · 4/3) = 1.5, and each term
        // with f = 1 weighs 2.2 / 2.5 = 0.88.
        let third = (1.6f64.ln() + (8.0f64 / 3.0).ln()) * 0.88;
        let bm25 = Bm25::default();
        let ranked = bm25.retrieve(&file, query, 2, 3);
        let lines: Vec<[usize; 2]> = ranked.iter().map(|chunk| chunk.lines).collect();
        assert_eq!(lines, [[5, 6], [1, 2], [3, 4]]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(ranked[0].score, third), "{ranked:?} vs {third}");
        assert!(close(ranked[1].score, first), "{ranked:?} vs {first}");
        assert_eq!(ranked[2].score, 0.0);
        assert!((third - 1.276_733).abs() < 1e-6, "{third}");
        // Top 1 is the third chunk alone; a file with no query token ranks by position.
        assert_eq!(bm25.retrieve(&file, query, 2, 1).len(), 1);
        let unrelated = bm25.retrieve(&file, "zzz", 2, 2);
        assert_eq!(
            unrelated.iter().map(|c| c.lines).collect::<Vec<_>>(),
            [[1, 2], [3, 4]]
        );
        // b = 0 ignores length: chunk 3's terms each weigh 2.2 / 2.2 = 1.
        let flat = Bm25 { k1: 1.2, b: 0.0 }.retrieve(&file, query, 2, 1);
        assert!(close(flat[0].score, 1.6f64.ln() + (8.0f64 / 3.0).ln()));

        // Edge cases: an empty file has no chunks; a file or query without tokens scores 0.
        assert!(bm25.retrieve(&[], query, 30, 3).is_empty());
        let blank = bm25.retrieve(&["  ;; "], "", 30, 3);
        assert_eq!(
            (blank.len(), blank[0].lines, blank[0].score),
            (1, [1, 1], 0.0)
        );
        assert_eq!(bm25.retrieve(&["  ;; "], query, 30, 3)[0].score, 0.0);
    }
}
