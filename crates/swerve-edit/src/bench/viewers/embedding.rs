//! The dense viewer baseline: a file's chunks and the query embedded in one request to an
//! OpenAI-compatible embeddings endpoint (the query first), chunks ranked by cosine
//! similarity to the query.

use swerve_llm::{Embeddings, HttpEmbedder};

use super::chunks::{ScoredChunk, chunk_ranges, chunk_texts, top_chunks};

/// What the embedding retriever returned for one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    /// The top chunks, best first.
    pub chunks: Vec<ScoredChunk>,
    /// The call's vectors, usage and cost.
    pub embeddings: Embeddings,
}

/// The `top` chunks of `chunk_lines` lines of a file's `lines` most similar to `query`.
/// An empty chunk is sent as one space (embedding endpoints refuse empty inputs). A failed
/// call or vectors of different lengths are an error, in words.
pub async fn retrieve(
    embedder: &HttpEmbedder,
    lines: &[&str],
    query: &str,
    chunk_lines: usize,
    top: usize,
) -> Result<Retrieved, String> {
    let chunks = chunk_ranges(lines.len(), chunk_lines);
    let mut inputs = vec![query.to_owned()];
    inputs.extend(
        chunk_texts(lines, &chunks)
            .into_iter()
            .map(|text| match text.is_empty() {
                true => " ".to_owned(),
                false => text,
            }),
    );
    let embeddings = embedder
        .embed(&inputs)
        .await
        .map_err(|error| error.to_string())?;
    let (query, chunk_vectors) = embeddings
        .vectors
        .split_first()
        .ok_or("the endpoint returned no vectors")?;
    let mut scores = Vec::with_capacity(chunk_vectors.len());
    for vector in chunk_vectors {
        if vector.len() != query.len() {
            return Err(format!(
                "the endpoint returned vectors of {} and {} dimensions",
                query.len(),
                vector.len()
            ));
        }
        scores.push(cosine(query, vector));
    }
    Ok(Retrieved {
        chunks: top_chunks(&chunks, &scores, top),
        embeddings,
    })
}

/// The cosine similarity of two vectors of the same length; 0 when either is all zeros.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut a_norm, mut b_norm) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        a_norm += x * x;
        b_norm += y * y;
    }
    match a_norm > 0.0 && b_norm > 0.0 {
        true => dot / (a_norm.sqrt() * b_norm.sqrt()),
        false => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_by_hand() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 1.0]) - 0.5f64.sqrt()).abs() < 1e-9);
        assert_eq!(cosine(&[1.0, 2.0], &[-2.0, 1.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 1.0]), 0.0);
        assert!((cosine(&[3.0, 4.0], &[6.0, 8.0]) - 1.0).abs() < 1e-9);
    }
}
