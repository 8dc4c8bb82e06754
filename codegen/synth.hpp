// Synthetic llama models: a GGUF with the standard keys and tensor names, a
// valid SentencePiece vocabulary and small random weights (deterministic from
// a seed) that keep activations finite. Used by kiln-synth and the tests.
#pragma once

#include <cstdint>
#include <string>

#include "engine/gguf_writer.hpp"
#include "models/presets.hpp"

namespace kiln::synth {

struct WeightTypes {
  TensorType token_embd = TensorType::F32;
  TensorType output = TensorType::F32;
  TensorType attention = TensorType::F32;     // attn_q, attn_k, attn_v, attn_output
  TensorType feed_forward = TensorType::F32;  // ffn_gate, ffn_up, ffn_down
};

struct SynthSpec {
  ModelShape shape;  // its arch is "llama" or "qwen2" (Q/K/V biases, NEOX RoPE)
  WeightTypes types;
  bool tied_output = false;
  uint64_t seed = 1;
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool rope_freqs = false;  // write Llama 3.1-style RoPE frequency factors (llama only)
};

// Builds the whole model. Throws kiln::Error when a weight type does not fit
// a tensor's row length (block-quantized rows must be whole blocks).
GgufWriter make_model(const SynthSpec& spec);

}  // namespace kiln::synth
