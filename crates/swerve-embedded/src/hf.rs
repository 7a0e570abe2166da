//! A Hugging Face model directory of the Llama family, as transformers' `save_pretrained`
//! writes one (a model fine-tuned by TRL, say): `config.json` (the architecture),
//! `tokenizer.json`, the chat template and special tokens (`chat_template.jinja` or
//! `tokenizer_config.json`, read by swerve-chat as transformers reads them),
//! `generation_config.json` (end-of-sequence ids; optional) and the weights in
//! `*.safetensors` (one file or shards). The weights are loaded as f32, whatever type they
//! are stored in, into candle's Llama (`candle_transformers::models::llama`), as candle's
//! own examples load Hugging Face checkpoints.
//!
//! Every tensor the configuration calls for is checked, by name and shape, before candle
//! builds the network (candle's loader panics on a missing one), so a directory that does
//! not hold the model its `config.json` describes is an error naming the file and what is
//! missing or wrong.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::llama::{Cache, Config, Llama, LlamaConfig};
use serde_json::Value;
use swerve_chat::ChatTemplate;

use crate::engine::{Engine, ModelInfo};
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;
use crate::weights::Weights;

/// The file that makes a directory a Hugging Face model directory.
pub(crate) const CONFIG_FILE: &str = "config.json";

/// Loads the model directory `dir`.
pub(crate) fn load(dir: &Path) -> Result<Engine> {
    let config_path = dir.join(CONFIG_FILE);
    if !config_path.is_file() {
        return Err(invalid(
            &config_path,
            "is missing: a Hugging Face model directory holds config.json, tokenizer.json and \
             the weights (*.safetensors); give such a directory or a GGUF file",
        ));
    }
    let raw = read_json(&config_path)?;
    let architecture = model_type(&config_path, &raw)?;
    let config = llama_config(&config_path, &raw)?;

    let tokenizer_path = dir.join("tokenizer.json");
    if !tokenizer_path.is_file() {
        return Err(invalid(
            &tokenizer_path,
            "is missing: the model directory needs the model's tokenizer (save it with the \
             model: tokenizer.save_pretrained(dir))",
        ));
    }
    let tokenizer = Tokenizer::from_file(&tokenizer_path)?;
    let vocab_size = tokenizer.vocab_size();
    if vocab_size > config.vocab_size {
        return Err(invalid(
            &tokenizer_path,
            format!(
                "has {vocab_size} tokens but config.json's vocab_size is {}: the tokenizer is \
                 not this model's",
                config.vocab_size
            ),
        ));
    }

    let template = match ChatTemplate::from_dir(dir) {
        Ok(template) => Some(template),
        Err(swerve_chat::Error::NoChatTemplate { .. }) => None,
        Err(source) => {
            return Err(Error::Template {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let special_tokens = template
        .as_ref()
        .map(|template| template.special_tokens().to_vec())
        .unwrap_or_default();
    let stop_ids = stop_ids(dir, &raw, &special_tokens, &tokenizer, config.vocab_size)?;

    let files = safetensors_files(dir)?;
    let mut tensors = HashMap::new();
    let mut file_bytes = 0;
    let device = Device::Cpu;
    for file in &files {
        file_bytes += std::fs::metadata(file).map(|meta| meta.len()).unwrap_or(0);
        let loaded = candle_core::safetensors::load(file, &device).map_err(|error| {
            invalid(
                file,
                format!("is not a safetensors file candle reads: {error}"),
            )
        })?;
        for (name, tensor) in loaded {
            if tensors.contains_key(&name) {
                return Err(invalid(
                    file,
                    format!("holds tensor `{name}` again (another .safetensors file has it)"),
                ));
            }
            tensors.insert(name, tensor);
        }
    }
    let weights_origin = if files.len() == 1 {
        files[0].clone()
    } else {
        dir.to_path_buf()
    };
    let elements = check_tensors(&weights_origin, &tensors, &config)?;
    let vb = VarBuilder::from_tensors(tensors, DType::F32, &device);
    let network = |error: candle_core::Error| {
        invalid(
            &weights_origin,
            format!("candle cannot build the Llama of config.json from these weights: {error}"),
        )
    };
    let model = Llama::load(vb, &config).map_err(network)?;
    let cache = Cache::new(true, DType::F32, &config, &device).map_err(network)?;
    let weights = Weights::from_llama(model, cache, device, elements * 4);

    let info = ModelInfo {
        path: dir.to_path_buf(),
        name: dir
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned()),
        architecture,
        context_length: config.max_position_embeddings,
        trained_context_length: config.max_position_embeddings,
        vocab_size,
        file_bytes,
        weight_bytes: weights.bytes,
        tokenizer: tokenizer_path.display().to_string(),
    };
    Ok(Engine::new(
        info,
        tokenizer,
        template,
        special_tokens,
        stop_ids,
        weights,
    ))
}

/// Whether `dir` is a Hugging Face model directory (it has a `config.json`).
pub(crate) fn is_model_dir(dir: &Path) -> bool {
    dir.join(CONFIG_FILE).is_file()
}

fn invalid(path: &Path, problem: impl Into<String>) -> Error {
    Error::Invalid {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|error| invalid(path, format!("is not JSON: {error}")))
}

/// `model_type`, which must be `llama`.
fn model_type(path: &Path, raw: &Value) -> Result<String> {
    let Some(model_type) = raw.get("model_type").and_then(Value::as_str) else {
        return Err(invalid(path, "has no `model_type` string"));
    };
    if model_type != "llama" {
        return Err(Error::Unsupported {
            path: path.to_path_buf(),
            what: format!(
                "model_type is `{model_type}`; the embedded backend runs `llama` models (SmolLM, \
                 Llama, TinyLlama and others of the Llama architecture)"
            ),
        });
    }
    Ok(model_type.to_owned())
}

/// The configuration as candle's Llama takes it. transformers 5 writes `rope_theta` (and
/// any scaling) inside `rope_parameters`; they are moved to where candle reads them.
fn llama_config(path: &Path, raw: &Value) -> Result<Config> {
    let unsupported = |what: String| Error::Unsupported {
        path: path.to_path_buf(),
        what,
    };
    for key in ["attention_bias", "mlp_bias"] {
        if raw.get(key).and_then(Value::as_bool) == Some(true) {
            return Err(unsupported(format!(
                "`{key}` is true; candle's Llama has no bias terms"
            )));
        }
    }
    let head_dim = match raw.get("head_dim") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .ok_or_else(|| invalid(path, format!("head_dim is {value}, not a count")))?,
        ),
    };
    let mut raw = raw.clone();
    let Some(fields) = raw.as_object_mut() else {
        return Err(invalid(path, "is not a JSON object"));
    };
    if let Some(Value::Object(parameters)) = fields.get("rope_parameters").cloned() {
        if let Some(theta) = parameters.get("rope_theta") {
            fields.entry("rope_theta").or_insert_with(|| theta.clone());
        }
        if fields.get("rope_scaling").is_none_or(Value::is_null) {
            fields.insert("rope_scaling".to_owned(), Value::Object(parameters));
        }
    }
    if let Some(scaling) = fields.get("rope_scaling").filter(|v| !v.is_null()) {
        let kind = scaling
            .get("rope_type")
            .or_else(|| scaling.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("default");
        match kind {
            "default" => {
                fields.remove("rope_scaling");
            }
            "llama3" => {}
            other => {
                return Err(unsupported(format!(
                    "the rotary embedding's rope_type is `{other}`; candle's Llama computes \
                     `default` and `llama3` ones"
                )));
            }
        }
    }
    let llama: LlamaConfig = serde_json::from_value(raw)
        .map_err(|error| invalid(path, format!("is not a Llama configuration: {error}")))?;
    let heads = llama.num_attention_heads;
    let kv_heads = llama.num_key_value_heads();
    if heads == 0
        || kv_heads == 0
        || !llama.hidden_size.is_multiple_of(heads)
        || !heads.is_multiple_of(kv_heads)
    {
        return Err(invalid(
            path,
            format!(
                "hidden_size {} with {heads} attention heads and {kv_heads} key-value heads: \
                 the hidden size must split evenly into the heads, and the heads into the \
                 key-value heads",
                llama.hidden_size
            ),
        ));
    }
    if let Some(head_dim) = head_dim
        && head_dim != (llama.hidden_size / heads) as u64
    {
        return Err(unsupported(format!(
            "head_dim is {head_dim}, not hidden_size / num_attention_heads ({}); candle's \
                 Llama derives it from those",
            llama.hidden_size / heads
        )));
    }
    if llama.max_position_embeddings == 0 || llama.vocab_size == 0 {
        return Err(invalid(
            path,
            "max_position_embeddings and vocab_size must be more than 0",
        ));
    }
    Ok(llama.into_config(false))
}

/// The ids that end a generation: `eos_token_id` of `generation_config.json` (when there is
/// one) and of `config.json` (a number or a list), and the id of the template's
/// `eos_token`.
fn stop_ids(
    dir: &Path,
    config: &Value,
    special_tokens: &[(String, String)],
    tokenizer: &Tokenizer,
    vocab_size: usize,
) -> Result<Vec<u32>> {
    let mut sources = Vec::new();
    let generation_path = dir.join("generation_config.json");
    if generation_path.is_file() {
        sources.push((generation_path.clone(), read_json(&generation_path)?));
    }
    sources.push((dir.join(CONFIG_FILE), config.clone()));
    let mut ids = Vec::new();
    for (path, json) in &sources {
        let listed = match json.get("eos_token_id") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.iter().collect(),
            Some(one) => vec![one],
        };
        for value in listed {
            let id = value
                .as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .filter(|&id| (id as usize) < vocab_size)
                .ok_or_else(|| {
                    invalid(
                        path,
                        format!(
                            "eos_token_id {value} is not a token id of the {vocab_size}-token                              vocabulary"
                        ),
                    )
                })?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let eos_text = special_tokens
        .iter()
        .find(|(name, _)| name == "eos_token")
        .map(|(_, text)| text);
    if let Some(id) = eos_text.and_then(|text| tokenizer.token_to_id(text))
        && !ids.contains(&id)
    {
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(invalid(
            &dir.join(CONFIG_FILE),
            "has no eos_token_id (nor has generation_config.json, nor tokenizer_config.json an              eos_token): without an end-of-sequence token generation would never stop",
        ));
    }
    Ok(ids)
}

/// The `.safetensors` files in `dir`, sorted (one file, or a checkpoint's shards).
fn safetensors_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "safetensors") && path.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(invalid(
            dir,
            "holds no .safetensors file: the model directory needs its weights (save the model \
             with safe_serialization, transformers' default)",
        ));
    }
    Ok(files)
}

/// Checks that `tensors` hold every weight of the Llama `config` describes, with its shape;
/// the number of elements in them. `origin` (the weights file, or the directory of shards)
/// names them in errors.
fn check_tensors(origin: &Path, tensors: &HashMap<String, Tensor>, config: &Config) -> Result<u64> {
    let hidden = config.hidden_size;
    let kv = hidden / config.num_attention_heads * config.num_key_value_heads;
    let inner = config.intermediate_size;
    let vocab = config.vocab_size;
    let mut expected: Vec<(String, Vec<usize>)> = vec![
        ("model.embed_tokens.weight".to_owned(), vec![vocab, hidden]),
        ("model.norm.weight".to_owned(), vec![hidden]),
    ];
    if !config.tie_word_embeddings {
        expected.push(("lm_head.weight".to_owned(), vec![vocab, hidden]));
    }
    for layer in 0..config.num_hidden_layers {
        let prefix = format!("model.layers.{layer}");
        for (name, shape) in [
            ("self_attn.q_proj", vec![hidden, hidden]),
            ("self_attn.k_proj", vec![kv, hidden]),
            ("self_attn.v_proj", vec![kv, hidden]),
            ("self_attn.o_proj", vec![hidden, hidden]),
            ("mlp.gate_proj", vec![inner, hidden]),
            ("mlp.up_proj", vec![inner, hidden]),
            ("mlp.down_proj", vec![hidden, inner]),
            ("input_layernorm", vec![hidden]),
            ("post_attention_layernorm", vec![hidden]),
        ] {
            expected.push((format!("{prefix}.{name}.weight"), shape));
        }
    }
    let mut elements = 0u64;
    for (name, shape) in &expected {
        let Some(tensor) = tensors.get(name) else {
            return Err(invalid(
                origin,
                format!(
                    "has no tensor `{name}`, which the Llama of config.json needs ({} layers{})",
                    config.num_hidden_layers,
                    if config.tie_word_embeddings {
                        ", tied embeddings"
                    } else {
                        ", lm_head.weight untied"
                    }
                ),
            ));
        };
        if tensor.dims() != shape.as_slice() {
            return Err(invalid(
                origin,
                format!(
                    "tensor `{name}` has shape {:?}; the Llama of config.json needs {shape:?}",
                    tensor.dims()
                ),
            ));
        }
        if !tensor.dtype().is_float() {
            return Err(invalid(
                origin,
                format!(
                    "tensor `{name}` is {:?}, not floating point (quantized safetensors are \
                     not read; give the full-precision weights or a GGUF file)",
                    tensor.dtype()
                ),
            ));
        }
        elements += tensor.elem_count() as u64;
    }
    Ok(elements)
}
