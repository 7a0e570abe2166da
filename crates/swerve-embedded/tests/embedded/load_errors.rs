//! Files the backend cannot run are refused with errors that name the file and say why:
//! not GGUF at all, a missing metadata key, a tokenizer it does not build, an architecture
//! it does not run. The GGUF files are written here with candle's own GGUF writer.

use std::path::Path;

use candle_core::quantized::gguf_file::{self, Value};
use swerve_embedded::EmbeddedModel;

fn write_gguf(path: &Path, metadata: &[(&str, Value)]) {
    let mut file = std::fs::File::create(path).unwrap();
    let metadata: Vec<(&str, &Value)> = metadata.iter().map(|(key, value)| (*key, value)).collect();
    gguf_file::write(&mut file, &metadata, &[]).unwrap();
}

fn strings(items: &[&str]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|item| Value::String((*item).to_owned()))
            .collect(),
    )
}

fn load_error(path: &Path) -> String {
    let error = EmbeddedModel::load(path).unwrap_err().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    error
}

#[test]
fn unusable_files_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();

    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "not a model").unwrap();
    assert!(load_error(&text).contains("not a usable GGUF model file"));

    let path = dir.path().join("no-context.gguf");
    write_gguf(
        &path,
        &[("general.architecture", Value::String("llama".into()))],
    );
    let error = load_error(&path);
    assert!(
        error.contains("llama.context_length") && error.contains("missing"),
        "{error}"
    );

    let path = dir.path().join("sentencepiece.gguf");
    write_gguf(
        &path,
        &[
            ("general.architecture", Value::String("llama".into())),
            ("llama.context_length", Value::U32(2048)),
            ("tokenizer.ggml.model", Value::String("llama".into())),
        ],
    );
    let error = load_error(&path);
    assert!(error.contains("tokenizer.json beside the file"), "{error}");

    let path = dir.path().join("qwen.gguf");
    write_gguf(
        &path,
        &[
            ("general.architecture", Value::String("qwen2".into())),
            ("qwen2.context_length", Value::U32(2048)),
            ("tokenizer.ggml.model", Value::String("gpt2".into())),
            ("tokenizer.ggml.pre", Value::String("smollm".into())),
            ("tokenizer.ggml.tokens", strings(&["a", "b", "ab", "<eos>"])),
            ("tokenizer.ggml.merges", strings(&["a b"])),
            (
                "tokenizer.ggml.token_type",
                Value::Array(vec![
                    Value::I32(1),
                    Value::I32(1),
                    Value::I32(1),
                    Value::I32(3),
                ]),
            ),
            ("tokenizer.ggml.eos_token_id", Value::U32(3)),
        ],
    );
    let error = load_error(&path);
    assert!(
        error.contains("`qwen2`") && error.contains("`llama`"),
        "{error}"
    );

    let path = dir.path().join("bad-eos.gguf");
    write_gguf(
        &path,
        &[
            ("general.architecture", Value::String("llama".into())),
            ("llama.context_length", Value::U32(2048)),
            ("tokenizer.ggml.model", Value::String("gpt2".into())),
            ("tokenizer.ggml.tokens", strings(&["a", "b"])),
            ("tokenizer.ggml.merges", strings(&[])),
            ("tokenizer.ggml.eos_token_id", Value::U32(99)),
        ],
    );
    let error = load_error(&path);
    assert!(
        error.contains("tokenizer.ggml.eos_token_id") && error.contains("outside"),
        "{error}"
    );
}
