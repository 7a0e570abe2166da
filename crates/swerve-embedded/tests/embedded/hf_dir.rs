//! Hugging Face model directories (`config.json`, `tokenizer.json`, `*.safetensors`).
//!
//! The real default model is written out as a directory here, as transformers' GGUF loader
//! turns a GGUF file into a Llama checkpoint: every tensor dequantized to f32, the query and
//! key projections un-permuted from llama.cpp's rotary layout back to Hugging Face's, the
//! tokenizer and chat template carried over. The same dequantized tensors are also written
//! as an all-f32 GGUF file. Loaded back, the directory must be the model that file holds:
//! the same prompt tokens, the same greedy tokens, and logprobs within 10⁻³ (candle's Llama
//! and quantized Llama sum in different orders).
//!
//! Against the original file the greedy tokens may differ: its Q4_1 tensors are dequantized
//! to f32 when loaded (the same values), but its embedding table is Q8_0, and the output
//! projection, tied to it, runs candle's Q8_0 kernel, which quantizes the final hidden state
//! to 8 bits before the product. The logits then differ a little, and a near-tie between two
//! tokens can go the other way. What is comparable there is each token's logprob with the
//! tokens forced, which must stay close. A tiny random Llama checks the errors of
//! directories that do not hold the model their configuration describes.

use std::collections::HashMap;
use std::path::Path;

use candle_core::quantized::gguf_file::{self, Content, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{DType, Device, Tensor};
use serde_json::json;
use swerve_embedded::{BpeParts, EmbeddedModel, Tokenizer, default_model_path};
use swerve_llm::{Message, ModelInput, Sampling};

use crate::common;

fn metadata_u64(content: &Content, key: &str) -> usize {
    content.metadata[key].to_u64().expect(key) as usize
}

fn metadata_f32(content: &Content, key: &str) -> f64 {
    f64::from(content.metadata[key].to_f32().expect(key))
}

/// The Hugging Face name of a GGUF tensor of the Llama architecture.
fn hf_name(gguf_name: &str) -> String {
    match gguf_name {
        "token_embd.weight" => return "model.embed_tokens.weight".to_owned(),
        "output_norm.weight" => return "model.norm.weight".to_owned(),
        "output.weight" => return "lm_head.weight".to_owned(),
        _ => {}
    }
    let rest = gguf_name
        .strip_prefix("blk.")
        .unwrap_or_else(|| panic!("unexpected tensor {gguf_name}"));
    let (layer, part) = rest.split_once('.').unwrap();
    let part = match part {
        "attn_norm.weight" => "input_layernorm.weight",
        "attn_q.weight" => "self_attn.q_proj.weight",
        "attn_k.weight" => "self_attn.k_proj.weight",
        "attn_v.weight" => "self_attn.v_proj.weight",
        "attn_output.weight" => "self_attn.o_proj.weight",
        "ffn_norm.weight" => "post_attention_layernorm.weight",
        "ffn_gate.weight" => "mlp.gate_proj.weight",
        "ffn_up.weight" => "mlp.up_proj.weight",
        "ffn_down.weight" => "mlp.down_proj.weight",
        other => panic!("unexpected tensor part {other}"),
    };
    format!("model.layers.{layer}.{part}")
}

/// llama.cpp's converter interleaves each head's two rotary halves in the query and key
/// projections; this puts them back (transformers' `reverse_permute_weights`).
fn unpermute(weight: &Tensor, heads: usize) -> Tensor {
    let (rows, columns) = weight.dims2().unwrap();
    weight
        .reshape((heads, rows / heads / 2, 2, columns))
        .unwrap()
        .transpose(1, 2)
        .unwrap()
        .contiguous()
        .unwrap()
        .reshape((rows, columns))
        .unwrap()
}

/// Writes the GGUF model `gguf` as a Hugging Face directory in `dir`, with `tokenizer`, and
/// as an all-f32 GGUF file `f32_gguf`.
fn write_hf_dir(gguf: &Path, tokenizer: &Tokenizer, dir: &Path, f32_gguf: &Path) {
    let device = Device::Cpu;
    let mut file = std::fs::File::open(gguf).unwrap();
    let content = Content::read(&mut file).unwrap();
    let heads = metadata_u64(&content, "llama.attention.head_count");
    let kv_heads = metadata_u64(&content, "llama.attention.head_count_kv");
    let mut tensors = HashMap::new();
    let mut f32_tensors = Vec::new();
    for name in content.tensor_infos.keys() {
        let weight = content
            .tensor(&mut file, name, &device)
            .unwrap()
            .dequantize(&device)
            .unwrap();
        f32_tensors.push((
            name.as_str(),
            QTensor::quantize(&weight, GgmlDType::F32).unwrap(),
        ));
        let weight = match name.rsplit_once(".attn_").map(|(_, part)| part) {
            Some("q.weight") => unpermute(&weight, heads),
            Some("k.weight") => unpermute(&weight, kv_heads),
            _ => weight,
        };
        tensors.insert(hf_name(name), weight.to_dtype(DType::F32).unwrap());
    }
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let metadata: Vec<(&str, &Value)> = content
        .metadata
        .iter()
        .map(|(key, value)| (key.as_str(), value))
        .collect();
    let f32_refs: Vec<(&str, &QTensor)> = f32_tensors
        .iter()
        .map(|(name, tensor)| (*name, tensor))
        .collect();
    let mut out = std::fs::File::create(f32_gguf).unwrap();
    gguf_file::write(&mut out, &metadata, &f32_refs).unwrap();

    let token = |key: &str| {
        let id = metadata_u64(&content, key) as u32;
        (id, tokenizer.id_to_token(id).unwrap())
    };
    let (bos_id, bos) = token("tokenizer.ggml.bos_token_id");
    let (eos_id, eos) = token("tokenizer.ggml.eos_token_id");
    let config = json!({
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": metadata_u64(&content, "llama.embedding_length"),
        "intermediate_size": metadata_u64(&content, "llama.feed_forward_length"),
        "num_hidden_layers": metadata_u64(&content, "llama.block_count"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "rms_norm_eps": metadata_f32(&content, "llama.attention.layer_norm_rms_epsilon"),
        // As transformers 5 writes it.
        "rope_parameters": {"rope_type": "default", "rope_theta": metadata_f32(&content, "llama.rope.freq_base")},
        "max_position_embeddings": metadata_u64(&content, "llama.context_length"),
        "vocab_size": tokenizer.vocab_size(),
        "tie_word_embeddings": !tensors.contains_key("lm_head.weight"),
        "bos_token_id": bos_id,
        "eos_token_id": eos_id,
        "torch_dtype": "float32",
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let Value::String(template) = &content.metadata["tokenizer.chat_template"] else {
        panic!("the model has a chat template");
    };
    let tokenizer_config = json!({
        "chat_template": template,
        "bos_token": bos,
        "eos_token": eos,
    });
    std::fs::write(
        dir.join("tokenizer_config.json"),
        tokenizer_config.to_string(),
    )
    .unwrap();
    tokenizer.save(&dir.join("tokenizer.json")).unwrap();
}

#[test]
fn a_directory_written_from_the_gguf_file_is_the_same_model() {
    let Some(gguf_model) = common::model() else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("SmolLM2-135M-Instruct");
    std::fs::create_dir(&dir).unwrap();
    let f32_path = temp.path().join("SmolLM2-135M-Instruct.F32.gguf");
    write_hf_dir(
        &default_model_path(),
        gguf_model.tokenizer(),
        &dir,
        &f32_path,
    );
    let hf_model = EmbeddedModel::load(&dir).unwrap();
    let f32_model = EmbeddedModel::load(&f32_path).unwrap();
    let info = hf_model.info();
    assert_eq!(info.path, dir);
    assert_eq!(info.architecture, "llama");
    assert_eq!(info.vocab_size, gguf_model.info().vocab_size);
    assert_eq!(info.context_length, info.trained_context_length);

    let input = ModelInput::Chat {
        messages: vec![
            Message::system("You fix bugs in Python code."),
            Message::user("The function add(a, b) returns a - b. What is wrong?"),
        ],
        tools: Vec::new(),
    };
    let prompt = gguf_model.prompt_tokens(&input).unwrap();
    assert_eq!(hf_model.prompt_tokens(&input).unwrap(), prompt);

    let greedy = Sampling {
        temperature: Some(0.0),
        max_tokens: Some(40),
        ..Sampling::default()
    };
    // The same weights in f32: the same greedy tokens, logprobs within 1e-3.
    let expected = f32_model.generate(&prompt, &greedy, true).unwrap();
    let actual = hf_model.generate(&prompt, &greedy, true).unwrap();
    assert_eq!(
        actual.tokens, expected.tokens,
        "HF directory: {:?}\nf32 GGUF file: {:?}",
        actual.text, expected.text
    );
    for (index, (hf, gguf)) in actual.logprobs.iter().zip(&expected.logprobs).enumerate() {
        assert!(
            (hf - gguf).abs() < 1e-3,
            "token {index}: logprob {hf} from the directory, {gguf} from the f32 GGUF file"
        );
    }
    // The logprobs are the directory model's own, as for GGUF.
    let scored = hf_model.score(&prompt, &actual.tokens).unwrap();
    for (generated, forced) in actual.logprobs.iter().zip(&scored) {
        assert!((generated - forced).abs() < 1e-4, "{generated} vs {forced}");
    }

    // The original file (its output projection in Q8_0): its own greedy tokens, forced
    // through the directory's model, have nearly the logprobs the file gave them.
    let original = gguf_model.generate(&prompt, &greedy, true).unwrap();
    let forced = hf_model.score(&prompt, &original.tokens).unwrap();
    let largest = original
        .logprobs
        .iter()
        .zip(&forced)
        .map(|(gguf, hf)| (gguf - hf).abs())
        .fold(0.0, f64::max);
    eprintln!("largest logprob difference from the Q8_0 output projection: {largest}");
    assert!(largest < TOLERANCE_Q8, "{largest}");
}

/// The most a logprob may move when the output projection quantizes its input to 8 bits
/// (0.09 measured on the test's prompt).
const TOLERANCE_Q8: f64 = 0.25;

/// A tiny Llama with random weights: 2 layers, hidden size 8, a 6-token vocabulary.
fn tiny_model(dir: &Path, config_changes: serde_json::Value) -> HashMap<String, Tensor> {
    let tokens = ["a", "b", "ab", "Ġ", "<|im_start|>", "<|im_end|>"];
    let tokenizer = Tokenizer::from_bpe(
        &BpeParts {
            tokens: &tokens,
            merges: &["a b"],
            special: &[4, 5],
            pre: "default",
            bos: None,
        },
        "tiny",
    )
    .unwrap();
    tokenizer.save(&dir.join("tokenizer.json")).unwrap();
    std::fs::write(
        dir.join("tokenizer_config.json"),
        json!({
            "chat_template": "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}{% if add_generation_prompt %}<|im_start|>{% endif %}",
            "eos_token": "<|im_end|>",
        })
        .to_string(),
    )
    .unwrap();
    let mut config = json!({
        "model_type": "llama", "hidden_size": 8, "intermediate_size": 16,
        "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 64,
        "vocab_size": 6, "tie_word_embeddings": true,
    });
    // A null change removes the key.
    for (key, value) in config_changes.as_object().unwrap() {
        match value {
            serde_json::Value::Null => {
                config.as_object_mut().unwrap().remove(key);
            }
            value => config[key] = value.clone(),
        }
    }
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    let device = Device::Cpu;
    let random = |shape: &[usize]| Tensor::randn(0f32, 0.5, shape, &device).unwrap();
    let mut tensors = HashMap::from([
        ("model.embed_tokens.weight".to_owned(), random(&[6, 8])),
        (
            "model.norm.weight".to_owned(),
            Tensor::ones(8, DType::F32, &device).unwrap(),
        ),
    ]);
    for layer in 0..2 {
        for (name, shape) in [
            ("self_attn.q_proj", [8, 8]),
            ("self_attn.k_proj", [4, 8]),
            ("self_attn.v_proj", [4, 8]),
            ("self_attn.o_proj", [8, 8]),
            ("mlp.gate_proj", [16, 8]),
            ("mlp.up_proj", [16, 8]),
            ("mlp.down_proj", [8, 16]),
        ] {
            tensors.insert(
                format!("model.layers.{layer}.{name}.weight"),
                random(&shape),
            );
        }
        for name in ["input_layernorm", "post_attention_layernorm"] {
            tensors.insert(
                format!("model.layers.{layer}.{name}.weight"),
                Tensor::ones(8, DType::F32, &device).unwrap(),
            );
        }
    }
    tensors
}

fn save(tensors: &HashMap<String, Tensor>, dir: &Path) {
    candle_core::safetensors::save(tensors, dir.join("model.safetensors")).unwrap();
}

fn load_error(dir: &Path) -> String {
    match EmbeddedModel::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_tiny_directory_loads_and_generates_with_its_template_and_stop_token() {
    let dir = tempfile::tempdir().unwrap();
    let tensors = tiny_model(dir.path(), json!({}));
    // Stored as bf16, as trainers often save: loaded as f32.
    let tensors: HashMap<String, Tensor> = tensors
        .into_iter()
        .map(|(name, tensor)| (name, tensor.to_dtype(DType::BF16).unwrap()))
        .collect();
    save(&tensors, dir.path());
    let model = EmbeddedModel::load(dir.path()).unwrap();
    assert_eq!(model.info().context_length, 64);
    assert_eq!(model.info().weight_bytes, 4 * (6 * 8 + 8 + 2 * 592));
    let input = ModelInput::Chat {
        messages: vec![Message::user("ab a")],
        tools: Vec::new(),
    };
    assert_eq!(
        model.render(&[Message::user("ab a")], &[]).unwrap(),
        "<|im_start|>ab a<|im_end|><|im_start|>"
    );
    let prompt = model.prompt_tokens(&input).unwrap();
    assert_eq!(prompt, [4, 2, 3, 0, 5, 4]);
    let sampling = Sampling {
        temperature: Some(0.8),
        max_tokens: Some(20),
        seed: Some(7),
        ..Sampling::default()
    };
    let generation = model.generate(&prompt, &sampling, false).unwrap();
    assert_eq!(generation.tokens.len(), generation.logprobs.len());
    assert!(!generation.tokens.is_empty() && generation.tokens.len() <= 20);
    if generation.tokens.len() < 20 {
        // It ended on the eos token named by tokenizer_config.json.
        assert_eq!(generation.tokens.last(), Some(&5));
    }
    // A seed gives the same tokens and logprobs again.
    let again = model.generate(&prompt, &sampling, false).unwrap();
    assert_eq!(
        (again.tokens, again.logprobs),
        (generation.tokens.clone(), generation.logprobs.clone())
    );
    let scored = model.score(&prompt, &generation.tokens).unwrap();
    for (generated, forced) in generation.logprobs.iter().zip(&scored) {
        assert!((generated - forced).abs() < 1e-4, "{generated} vs {forced}");
    }
}

#[test]
fn directories_that_do_not_hold_their_model_are_refused_with_the_file_and_what_is_wrong() {
    let temp = tempfile::tempdir().unwrap();

    let dir = temp.path().join("empty");
    std::fs::create_dir(&dir).unwrap();
    let error = load_error(&dir);
    assert!(
        error.contains(&dir.join("config.json").display().to_string())
            && error.contains("is missing"),
        "{error}"
    );

    let dir = temp.path().join("qwen");
    std::fs::create_dir(&dir).unwrap();
    let tensors = tiny_model(&dir, json!({"model_type": "qwen2"}));
    save(&tensors, &dir);
    let error = load_error(&dir);
    assert!(
        error.contains("config.json") && error.contains("`qwen2`"),
        "{error}"
    );

    let dir = temp.path().join("no-hidden-size");
    std::fs::create_dir(&dir).unwrap();
    tiny_model(&dir, json!({"hidden_size": null}));
    let error = load_error(&dir);
    assert!(
        error.contains("config.json") && error.contains("hidden_size"),
        "{error}"
    );

    let dir = temp.path().join("yarn");
    std::fs::create_dir(&dir).unwrap();
    tiny_model(
        &dir,
        json!({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}),
    );
    let error = load_error(&dir);
    assert!(error.contains("`yarn`"), "{error}");

    let dir = temp.path().join("no-weights");
    std::fs::create_dir(&dir).unwrap();
    tiny_model(&dir, json!({}));
    let error = load_error(&dir);
    assert!(error.contains("no .safetensors file"), "{error}");

    let dir = temp.path().join("missing-tensor");
    std::fs::create_dir(&dir).unwrap();
    let mut tensors = tiny_model(&dir, json!({}));
    tensors.remove("model.layers.1.mlp.up_proj.weight");
    save(&tensors, &dir);
    let error = load_error(&dir);
    assert!(
        error.contains(&dir.join("model.safetensors").display().to_string())
            && error.contains("`model.layers.1.mlp.up_proj.weight`"),
        "{error}"
    );

    let dir = temp.path().join("untied");
    std::fs::create_dir(&dir).unwrap();
    let tensors = tiny_model(&dir, json!({"tie_word_embeddings": false}));
    save(&tensors, &dir);
    let error = load_error(&dir);
    assert!(error.contains("`lm_head.weight`"), "{error}");

    let dir = temp.path().join("wrong-shape");
    std::fs::create_dir(&dir).unwrap();
    let mut tensors = tiny_model(&dir, json!({}));
    tensors.insert(
        "model.layers.0.self_attn.k_proj.weight".to_owned(),
        Tensor::zeros((8, 8), DType::F32, &Device::Cpu).unwrap(),
    );
    save(&tensors, &dir);
    let error = load_error(&dir);
    assert!(
        error.contains("k_proj") && error.contains("[8, 8]") && error.contains("[4, 8]"),
        "{error}"
    );

    let dir = temp.path().join("no-tokenizer");
    std::fs::create_dir(&dir).unwrap();
    let tensors = tiny_model(&dir, json!({}));
    save(&tensors, &dir);
    std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
    let error = load_error(&dir);
    assert!(
        error.contains(&dir.join("tokenizer.json").display().to_string()),
        "{error}"
    );

    let dir = temp.path().join("bad-safetensors");
    std::fs::create_dir(&dir).unwrap();
    tiny_model(&dir, json!({}));
    std::fs::write(dir.join("model.safetensors"), b"not tensors").unwrap();
    let error = load_error(&dir);
    assert!(
        error.contains("model.safetensors") && error.contains("not a safetensors file"),
        "{error}"
    );
}
