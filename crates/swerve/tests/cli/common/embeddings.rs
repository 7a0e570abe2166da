//! Answers of a loopback OpenAI-compatible `/embeddings` endpoint (serve them with
//! [`super::start_answering_json`]): deterministic bag-of-words vectors over a fixed
//! vocabulary, so cosine similarities can be worked out by hand.

use serde_json::{Value, json};

use super::Request;

/// The body answering an embeddings `request`: for each of its `input` texts, the count of
/// each `vocabulary` word among the text's words (lower-cased runs of letters and digits),
/// and a usage of 10 prompt tokens per input.
pub fn bag_of_words(request: &Request, vocabulary: &[&str]) -> Value {
    let inputs = request.body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, input)| {
            let text = input.as_str().unwrap_or("").to_lowercase();
            let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
            let vector: Vec<usize> = vocabulary
                .iter()
                .map(|term| words.iter().filter(|word| *word == term).count())
                .collect();
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    let tokens = 10 * inputs.len();
    json!({"object": "list", "model": request.body["model"], "data": data,
           "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
}
