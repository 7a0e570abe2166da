//! The network, run on the CPU: candle's quantized Llama
//! (`candle_transformers::models::quantized_llama`) over a GGUF file's tensors, or candle's
//! Llama (`candle_transformers::models::llama`) over a Hugging Face directory's safetensors
//! (loaded by [`crate::hf`]). Both are the architecture of SmolLM, Llama and the many models
//! converted as `llama`. The quantized Llama's rotary tables cover [`MAX_POSITIONS`]
//! positions, which bounds a GGUF model's usable context whatever its trained context length.
//!
//! Tensors of the quantized types candle multiplies with portable scalar code only
//! ([`SCALAR_ONLY`]; SmolLM2's Q4_1 among them) are dequantized to f32 as the file is
//! loaded: the weights are exactly the file's, and the products run on candle's SIMD f32
//! kernels instead, at the cost of four bytes a weight in memory.

use std::io::Cursor;

use candle_core::quantized::gguf_file::{self, Content};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use candle_transformers::models::llama::{Cache, Llama};
use candle_transformers::models::quantized_llama::{self, ModelWeights};

use crate::error::{Error, Result};
use crate::gguf::Gguf;

/// Quantized types whose products candle 0.11 computes with scalar code on x86 (no AVX2
/// kernel, unlike Q4_0, Q8_0 and the K-quants).
const SCALAR_ONLY: [GgmlDType; 3] = [GgmlDType::Q4_1, GgmlDType::Q5_0, GgmlDType::Q5_1];

/// The most positions candle's quantized Llama computes rotary embeddings for.
pub(crate) const MAX_POSITIONS: usize = quantized_llama::MAX_SEQ_LEN;

/// The loaded weights, with the key-value cache of the sequence being run.
pub(crate) struct Weights {
    network: Network,
    device: Device,
    /// Bytes of the weight tensors as they are multiplied (f32 where dequantized): what
    /// generating one token reads.
    pub bytes: u64,
}

/// Which of candle's Llama implementations runs the weights.
enum Network {
    /// The quantized Llama over a GGUF file's tensors; it holds its own cache.
    Quantized(ModelWeights),
    /// The Llama over safetensors, with the cache of the sequence being run and an empty
    /// cache (its rotary tables computed once) to start the next sequence from.
    Llama {
        model: Llama,
        cache: Cache,
        empty: Cache,
    },
}

impl Weights {
    /// Loads the tensors of a `llama` GGUF file.
    pub fn from_gguf(mut gguf: Gguf) -> Result<Self> {
        let architecture = gguf.string("general.architecture")?.to_owned();
        if architecture != "llama" {
            return Err(Error::Unsupported {
                path: gguf.path.clone(),
                what: format!(
                    "general.architecture is `{architecture}`; the embedded backend runs `llama` \
                     models (SmolLM, Llama, TinyLlama, Mistral and others converted as llama)"
                ),
            });
        }
        let device = Device::Cpu;
        let path = gguf.path.clone();
        let infos = gguf.content.tensor_infos.values();
        let slow = infos
            .clone()
            .any(|info| SCALAR_ONLY.contains(&info.ggml_dtype));
        let bytes = infos
            .map(|info| {
                let elements = info.shape.elem_count();
                if SCALAR_ONLY.contains(&info.ggml_dtype) {
                    elements * 4
                } else {
                    elements / info.ggml_dtype.block_size() * info.ggml_dtype.type_size()
                }
            })
            .sum::<usize>() as u64;
        let model = if slow {
            dequantized(gguf.content, &mut gguf.file, &device).and_then(|(content, mut data)| {
                ModelWeights::from_gguf(content, &mut data, &device)
            })
        } else {
            ModelWeights::from_gguf(gguf.content, &mut gguf.file, &device)
        };
        let model = model.map_err(|error| Error::Gguf {
            path,
            message: error.to_string(),
        })?;
        Ok(Self {
            network: Network::Quantized(model),
            device,
            bytes,
        })
    }

    /// Weights loaded from safetensors into candle's Llama, with an empty `cache` for it;
    /// `bytes` of them are multiplied for each token.
    pub fn from_llama(model: Llama, cache: Cache, device: Device, bytes: u64) -> Self {
        Self {
            network: Network::Llama {
                model,
                cache: cache.clone(),
                empty: cache,
            },
            device,
            bytes,
        }
    }

    /// Runs `tokens` at positions `position..`, extending the cache (position 0 starts a
    /// new sequence), and returns the logits that follow the last of them.
    pub fn forward(&mut self, tokens: &[u32], position: usize) -> candle_core::Result<Vec<f32>> {
        let input = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let logits = match &mut self.network {
            Network::Quantized(model) => model.forward(&input, position)?,
            Network::Llama { model, cache, .. } => model.forward(&input, position, cache)?,
        };
        logits.squeeze(0)?.to_vec1::<f32>()
    }

    /// Frees the cache.
    pub fn reset(&mut self) {
        match &mut self.network {
            Network::Quantized(model) => model.clear_kv_cache(),
            Network::Llama { cache, empty, .. } => *cache = empty.clone(),
        }
    }
}

/// The file rewritten in memory with its [`SCALAR_ONLY`] tensors as f32 (exactly their
/// values), everything else as it is.
fn dequantized(
    content: Content,
    file: &mut std::fs::File,
    device: &Device,
) -> candle_core::Result<(Content, Cursor<Vec<u8>>)> {
    let mut tensors = Vec::with_capacity(content.tensor_infos.len());
    for name in content.tensor_infos.keys() {
        let tensor = content.tensor(file, name, device)?;
        let tensor = if SCALAR_ONLY.contains(&tensor.dtype()) {
            QTensor::quantize(&tensor.dequantize(device)?, GgmlDType::F32)?
        } else {
            tensor
        };
        tensors.push((name.as_str(), tensor));
    }
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(key, value)| (key.as_str(), value))
        .collect();
    let tensors: Vec<(&str, &QTensor)> = tensors
        .iter()
        .map(|(name, tensor)| (*name, tensor))
        .collect();
    let mut data = Cursor::new(Vec::new());
    gguf_file::write(&mut data, &metadata, &tensors)?;
    data.set_position(0);
    let content = Content::read(&mut data)?;
    Ok((content, data))
}
