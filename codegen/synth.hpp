// Synthetic models of every architecture kiln compiles: a GGUF with the standard keys and tensor names, a
// valid SentencePiece vocabulary (or the tokenizer of another GGUF) and small
// random weights (deterministic from a seed) that keep activations finite.
// Used by kiln-synth and the tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/gguf/gguf_writer.hpp"
#include "models/presets.hpp"

namespace kiln::synth {

struct WeightTypes {
  TensorType token_embd = TensorType::F32;
  TensorType output = TensorType::F32;
  TensorType attention = TensorType::F32;     // attn_q, attn_k, attn_v, attn_output
  TensorType feed_forward = TensorType::F32;  // ffn_gate, ffn_up, ffn_down
  // The "_M" mixes of llama-quantize: attn_v and ffn_down of the layers
  // gets_more_bits picks take this type instead. A mix also gives a tied
  // token embedding the output's type (it is the output matrix).
  std::optional<TensorType> more_bits;
  // A mixture's experts (ffn_*_exps); default: the feed-forward's type.
  std::optional<TensorType> experts;
};

// llama-quantize's Q4_K_M for a llama model: Q4_K everywhere, Q6_K for the
// output matrix and for the attn_v and ffn_down matrices of the layers
// gets_more_bits picks.
WeightTypes q4_k_m_types();

// The layers llama-quantize's "_M" mixes give more bits: the first and the
// last eighth of the layers (counts rounded down), and every third layer in
// between, starting with the third layer of that middle part. With 22 layers
// (TinyLlama) that is 0, 1, 4, 7, 10, 13, 16, 19, 20, 21.
bool gets_more_bits(int layer, int n_layer);

struct SynthSpec {
  ModelShape shape;  // its arch: any that kiln compiles (models/describe.hpp)
  WeightTypes types;
  bool tied_output = false;
  uint64_t seed = 1;
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool rope_freqs = false;  // write Llama 3.1-style RoPE frequency factors (llama only)
  // When not 0, write LongRoPE's factors for this original context, and its
  // attention factor (phi3 only).
  int longrope_original_context = 0;
  // When set, its tokenizer (every tokenizer.* key, the chat template
  // included) instead of the synthetic vocabulary; shape.n_vocab must be
  // its token count. It must outlive make_model.
  const GgufFile* vocabulary = nullptr;
};

// The number of tokens of a GGUF's tokenizer (a vocabulary-only file such as
// llama.cpp's ggml-vocab-*.gguf, or a model). Throws kiln::Error if it has none.
int token_count(const GgufFile& vocabulary);

// Builds the whole model. Throws kiln::Error when a weight type does not fit
// a tensor's row length (block-quantized rows must be whole blocks).
GgufWriter make_model(const SynthSpec& spec);

}  // namespace kiln::synth
