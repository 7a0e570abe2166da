//! An OpenAI-compatible embeddings client: `POST {base_url}/embeddings` with
//! `{"model", "input": [...]}` (plus the configuration's `extra_body`), answered with
//! `data[i].embedding`. It is configured by an [`HttpModelConfig`] and sends through the
//! same client as [`HttpModel`]: API key from the environment (never logged), TLS,
//! per-attempt timeout, retries with back-off, costs from the price table (`sampling` and
//! `mode` do not apply).

use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::Url;
use serde_json::{Map, Value};

use crate::Usage;
use crate::config::HttpModelConfig;
use crate::error::ModelError;
use crate::http::HttpModel;
use crate::price::PriceTable;
use crate::wire::{parse_usage, snippet};

/// Embeds texts with a model served behind an OpenAI-compatible `/embeddings` endpoint.
///
/// Calls must run inside a tokio runtime with its time and I/O drivers enabled.
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    http: HttpModel,
    url: Url,
}

/// What one [`HttpEmbedder::embed`] call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One vector per input, in the inputs' order.
    pub vectors: Vec<Vec<f32>>,
    /// The tokens the server counted (`prompt_tokens`).
    pub usage: Usage,
    /// The cost by the price table.
    pub cost: f64,
    /// From sending the first attempt to the parsed answer.
    pub latency: Duration,
    /// Attempts made (1 without retries).
    pub attempts: u32,
}

impl HttpEmbedder {
    /// Checks `config` (as [`HttpModel::new`] does) and builds the client. Costs use the
    /// built-in price table until [`HttpEmbedder::with_prices`] replaces it.
    pub fn new(config: HttpModelConfig) -> Result<Self, ModelError> {
        let http = HttpModel::new(config)?;
        let base = http.config().base_url.trim_end_matches('/');
        let url = Url::parse(&format!("{base}/embeddings"))
            .map_err(|error| ModelError::config(format!("`base_url`: {error}")))?;
        Ok(Self { http, url })
    }

    /// Uses `prices` for cost accounting.
    pub fn with_prices(mut self, prices: PriceTable) -> Self {
        self.http = self.http.with_prices(prices);
        self
    }

    /// The model name sent in each request.
    pub fn name(&self) -> &str {
        &self.http.config().model
    }

    /// The endpoint URL requests are posted to.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// Embeds `inputs` in one request: one vector per input, in order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Embeddings, ModelError> {
        let started = Instant::now();
        let config = self.http.config();
        let mut body = Map::new();
        body.insert("model".into(), Value::String(config.model.clone()));
        body.insert(
            "input".into(),
            Value::Array(inputs.iter().cloned().map(Value::String).collect()),
        );
        body.extend(config.extra_body.clone());
        let body = serde_json::to_vec(&body)
            .map(Bytes::from)
            .map_err(|error| ModelError::config(format!("cannot encode the request: {error}")))?;
        let ((vectors, usage), attempts) = self
            .http
            .post(&self.url, body, None, |bytes| {
                parse_embeddings(bytes, inputs.len())
            })
            .await?;
        Ok(Embeddings {
            vectors,
            cost: self.http.cost(&usage),
            usage,
            latency: started.elapsed(),
            attempts,
        })
    }
}

/// The vectors of an embeddings response (ordered by each item's `index` when given) and its
/// usage; `expected` vectors, each a non-empty list of finite numbers.
fn parse_embeddings(body: &[u8], expected: usize) -> Result<(Vec<Vec<f32>>, Usage), ModelError> {
    let root: Value = serde_json::from_slice(body).map_err(|error| {
        ModelError::malformed(format!(
            "body is not JSON ({error}); it starts with {}",
            snippet(body)
        ))
    })?;
    let Some(data) = root.get("data").and_then(Value::as_array) else {
        return Err(ModelError::malformed(format!(
            "missing the `data` list of embeddings; the body starts with {}",
            snippet(body)
        )));
    };
    if data.len() != expected {
        return Err(ModelError::malformed(format!(
            "{} embeddings for {expected} inputs",
            data.len()
        )));
    }
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, item) in data.iter().enumerate() {
        let index = match item.get("index") {
            None | Some(Value::Null) => position,
            Some(index) => index
                .as_u64()
                .and_then(|index| usize::try_from(index).ok())
                .filter(|index| *index < expected)
                .ok_or_else(|| {
                    ModelError::malformed(format!(
                        "`data[{position}].index` is {index}, not an input's position (0 to {})",
                        expected - 1
                    ))
                })?,
        };
        let vector = vector_of(item.get("embedding")).ok_or_else(|| {
            ModelError::malformed(format!(
                "`data[{position}].embedding` is not a non-empty list of finite numbers \
                     (base64 encoding is not read: leave `encoding_format` unset or \"float\")"
            ))
        })?;
        if vectors[index].replace(vector).is_some() {
            return Err(ModelError::malformed(format!(
                "two embeddings for input {index}"
            )));
        }
    }
    let vectors = vectors.into_iter().flatten().collect();
    Ok((vectors, parse_usage(root.get("usage"))?))
}

fn vector_of(value: Option<&Value>) -> Option<Vec<f32>> {
    let numbers = value?.as_array()?;
    let vector: Vec<f32> = numbers
        .iter()
        .map(|number| number.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
        .collect::<Option<_>>()?;
    (!vector.is_empty()).then_some(vector)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_vectors_in_index_order_and_usage() {
        let body = br#"{"object": "list", "data": [
            {"object": "embedding", "index": 1, "embedding": [0.5, -1]},
            {"object": "embedding", "index": 0, "embedding": [1, 2.5]}],
            "model": "e", "usage": {"prompt_tokens": 7, "total_tokens": 7}}"#;
        let (vectors, usage) = parse_embeddings(body, 2).unwrap();
        assert_eq!(vectors, [vec![1.0, 2.5], vec![0.5, -1.0]]);
        assert_eq!(usage.prompt_tokens, 7);
        let unindexed = br#"{"data": [{"embedding": [1]}, {"embedding": [2]}]}"#;
        let (vectors, usage) = parse_embeddings(unindexed, 2).unwrap();
        assert_eq!(vectors, [vec![1.0], vec![2.0]]);
        assert_eq!(usage, Usage::default());
    }

    #[test]
    fn bad_bodies_say_what_is_wrong() {
        let cases: [(&[u8], &str); 7] = [
            (b"<html>", "body is not JSON"),
            (br#"{"error": "x"}"#, "missing the `data` list"),
            (
                br#"{"data": [{"embedding": [1]}]}"#,
                "1 embeddings for 2 inputs",
            ),
            (
                br#"{"data": [{"embedding": [1]}, {"embedding": "AAAA"}]}"#,
                "`data[1].embedding` is not a non-empty list",
            ),
            (
                br#"{"data": [{"embedding": []}, {"embedding": [1]}]}"#,
                "`data[0].embedding`",
            ),
            (
                br#"{"data": [{"index": 5, "embedding": [1]}, {"embedding": [1]}]}"#,
                "`data[0].index` is 5",
            ),
            (
                br#"{"data": [{"index": 1, "embedding": [1]}, {"embedding": [1]}]}"#,
                "two embeddings for input 1",
            ),
        ];
        for (body, needle) in cases {
            let error = parse_embeddings(body, 2).unwrap_err();
            assert!(matches!(error, ModelError::MalformedResponse { .. }));
            assert!(error.to_string().contains(needle), "{error} lacks {needle}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..200), expected in 0usize..4) {
            let _ = parse_embeddings(&body, expected);
        }

        #[test]
        fn arbitrary_json_items_never_panic(items in proptest::collection::vec(prop_oneof![
            Just(serde_json::json!({"embedding": [1.0]})),
            Just(serde_json::json!({"index": 0, "embedding": [1.0, 2.0]})),
            Just(serde_json::json!({"index": -1, "embedding": [1.0]})),
            Just(serde_json::json!({"index": 1e30, "embedding": [1.0]})),
            Just(serde_json::json!({"embedding": null})),
            Just(serde_json::json!(3)),
        ], 0..4), expected in 0usize..4) {
            let body = serde_json::json!({"data": items}).to_string();
            let _ = parse_embeddings(body.as_bytes(), expected);
        }
    }
}
