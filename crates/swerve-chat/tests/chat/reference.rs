//! swerve-chat against Hugging Face transformers: the rendered text and token ids of every
//! conversation in `tests/reference/conversations.json` equal those `make_reference.py`
//! recorded with `apply_chat_template`, for both real tokenizers, and so do plain
//! encodes and decodes.

use crate::common;

use std::path::PathBuf;

use serde_json::Value;
use swerve_chat::RenderOptions;
use swerve_core::TokenCounter;
use swerve_core::trajectory::Message;

use common::{MODELS, model};

/// A JSON file of `tests/reference/`.
fn reference(file: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The case's messages and options, as the fixture gives them.
fn case_input(case: &Value, add_generation_prompt: bool) -> (Vec<Message>, RenderOptions) {
    let messages = serde_json::from_value(case["messages"].clone()).expect("fixture messages");
    let mut options = RenderOptions::default().generation_prompt(add_generation_prompt);
    if let Some(tools) = case.get("tools").and_then(Value::as_array) {
        options = options.tools(tools.clone());
    }
    if let Some(variables) = case.get("variables").and_then(Value::as_object) {
        options.variables = variables.clone();
    }
    (messages, options)
}

/// Where two sequences first differ, for a readable failure.
fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[test]
fn renders_and_token_ids_equal_transformers() {
    let conversations = reference("conversations.json");
    let cases: Vec<&Value> = conversations["cases"].as_array().unwrap().iter().collect();
    for name in MODELS {
        let model = model(name);
        let expected = reference(&format!("{name}.json"));
        let rows = expected["cases"].as_array().unwrap();
        assert_eq!(
            rows.len(),
            cases.len() * 2,
            "{name}.json is stale: rerun make_reference.py"
        );
        let mut failures = Vec::new();
        for row in rows {
            let case_name = row["name"].as_str().unwrap();
            let generation = row["add_generation_prompt"].as_bool().unwrap();
            let case = cases.iter().find(|c| c["name"] == case_name).unwrap();
            let (messages, options) = case_input(case, generation);
            let label = format!("{name}/{case_name} (add_generation_prompt={generation})");

            let text = model
                .render(&messages, &options)
                .unwrap_or_else(|err| panic!("{label}: {err}"));
            let want_text = row["text"].as_str().unwrap();
            if text != want_text {
                let (ours, theirs): (Vec<char>, Vec<char>) =
                    (text.chars().collect(), want_text.chars().collect());
                let at = first_difference(&ours, &theirs);
                let excerpt = |chars: &[char]| -> String {
                    chars.iter().skip(at.saturating_sub(40)).take(80).collect()
                };
                failures.push(format!(
                    "{label}: text differs at character {at}:\n  ours: {:?}\n  HF:   {:?}",
                    excerpt(&ours),
                    excerpt(&theirs)
                ));
                continue;
            }
            let ids = model.encode(&messages, &options).unwrap();
            let want_ids: Vec<u32> = serde_json::from_value(row["ids"].clone()).unwrap();
            if ids != want_ids {
                let at = first_difference(&ids, &want_ids);
                failures.push(format!(
                    "{label}: token {at} differs: ours {:?}, HF {:?}",
                    ids.get(at..(at + 5).min(ids.len())),
                    want_ids.get(at..(at + 5).min(want_ids.len()))
                ));
                continue;
            }
            assert_eq!(
                model.count(&messages, &options).unwrap(),
                want_ids.len(),
                "{label}"
            );
        }
        assert!(
            failures.is_empty(),
            "{} mismatches:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn plain_encode_and_decode_equal_transformers() {
    for name in MODELS {
        let model = model(name);
        let tokenizer = model.tokenizer();
        let expected = reference(&format!("{name}.json"));
        for row in expected["encode"].as_array().unwrap() {
            let text = row["text"].as_str().unwrap();
            let special = row["add_special_tokens"].as_bool().unwrap();
            let want: Vec<u32> = serde_json::from_value(row["ids"].clone()).unwrap();
            assert_eq!(
                tokenizer.encode(text, special).unwrap(),
                want,
                "{name}: encode {text:?} special={special}"
            );
            assert_eq!(tokenizer.count(text, special).unwrap(), want.len());
            if !special {
                // The budget seam counts exactly what a plain encode gives.
                assert_eq!(TokenCounter::count(tokenizer, text), want.len(), "{name}");
            }
        }
        for row in expected["decode"].as_array().unwrap() {
            let ids: Vec<u32> = serde_json::from_value(row["ids"].clone()).unwrap();
            let skip = row["skip_special_tokens"].as_bool().unwrap();
            assert_eq!(
                tokenizer.decode(&ids, skip).unwrap(),
                row["text"].as_str().unwrap(),
                "{name}: decode {ids:?} skip={skip}"
            );
        }
    }
}

#[test]
fn special_tokens_come_from_the_config() {
    let qwen = model("qwen3");
    assert!(qwen.dir().ends_with("tokenizers/qwen3"));
    assert_eq!(qwen.tokenizer().path(), qwen.dir().join("tokenizer.json"));
    assert_eq!(
        qwen.template().special_tokens(),
        [
            ("eos_token".to_owned(), "<|im_end|>".to_owned()),
            ("pad_token".to_owned(), "<|endoftext|>".to_owned())
        ]
    );
    assert_eq!(qwen.tokenizer().token_to_id("<|im_end|>"), Some(151645));
    let llama = model("llama3_1");
    assert_eq!(
        llama.template().special_tokens()[0],
        ("bos_token".to_owned(), "<|begin_of_text|>".to_owned())
    );
    // The template writes <|begin_of_text|> itself; encoding must not add a second one.
    let ids = llama
        .encode(&[Message::user("hi")], &RenderOptions::default())
        .unwrap();
    assert_eq!(ids.iter().filter(|&&id| id == 128000).count(), 1);
}
