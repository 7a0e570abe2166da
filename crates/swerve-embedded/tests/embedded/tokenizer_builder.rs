//! The tokenizer built from GGUF-style parts (vocabulary by id, merges, special tokens, the
//! pre-tokenizer's name) encodes exactly as the model's own Hugging Face `tokenizer.json`:
//! Llama 3.1's, taken apart into those parts and rebuilt as a GGUF file lists them
//! (`tokenizer.ggml.pre = "llama-bpe"`, BOS added). The tokenizer files come from
//! scripts/fetch-tokenizers.sh (swerve-chat's test data); the test skips with a message when
//! they are absent.

use std::path::PathBuf;

use serde_json::Value;
use swerve_embedded::{BpeParts, Tokenizer};

fn llama3_tokenizer_json() -> Option<PathBuf> {
    let root = std::env::var_os("SWERVE_TEST_DATA")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/swerve/test-data"))
        })?;
    let path = root.join("tokenizers/llama3_1/tokenizer.json");
    if path.is_file() {
        Some(path)
    } else {
        eprintln!(
            "skipping: {} is absent; run scripts/fetch-tokenizers.sh",
            path.display()
        );
        None
    }
}

#[test]
fn a_tokenizer_built_from_gguf_parts_matches_the_models_tokenizer_json() {
    let Some(path) = llama3_tokenizer_json() else {
        return;
    };
    let document: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let vocab = document["model"]["vocab"].as_object().unwrap();
    let added = document["added_tokens"].as_array().unwrap();
    let size = vocab.len() + added.len();
    let mut tokens = vec![""; size];
    for (text, id) in vocab {
        tokens[id.as_u64().unwrap() as usize] = text;
    }
    let mut special = Vec::new();
    for token in added {
        let id = token["id"].as_u64().unwrap() as u32;
        tokens[id as usize] = token["content"].as_str().unwrap();
        special.push(id);
    }
    assert!(tokens.iter().all(|token| !token.is_empty()));
    let merges: Vec<&str> = document["model"]["merges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|merge| merge.as_str().unwrap())
        .collect();
    let parts = BpeParts {
        tokens: &tokens,
        merges: &merges,
        special: &special,
        pre: "llama-bpe",
        bos: Some(128000),
    };
    let built = Tokenizer::from_bpe(&parts, "rebuilt llama 3.1").unwrap();
    let original = Tokenizer::from_file(&path).unwrap();
    let texts = [
        "Hello, world!",
        "def add(a, b):\n    return a + b  # 1234567 numbers\n\n\n",
        "I'm sure they'VE done it; DON'T panic.",
        "Ünïcödé — 日本語のテキスト, emoji 🦀🚀, tabs\tand \u{1F} controls\r\n",
        "   many   spaces   ",
        "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
        "",
    ];
    for text in texts {
        for special_tokens in [false, true] {
            let want = original.encode(text, special_tokens).unwrap();
            assert_eq!(
                built.encode(text, special_tokens).unwrap(),
                want,
                "{text:?}"
            );
            assert_eq!(
                built.decode(&want, false).unwrap(),
                original.decode(&want, false).unwrap()
            );
        }
    }
    // Unknown pre-tokenizers are refused by name, not guessed.
    let error = Tokenizer::from_bpe(
        &BpeParts {
            pre: "qwen2",
            ..parts
        },
        "x",
    )
    .unwrap_err();
    assert!(
        error.contains("qwen2") && error.contains("tokenizer.json"),
        "{error}"
    );
}
