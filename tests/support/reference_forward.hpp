// A plain llama forward pass for tests: every weight dequantized to float
// (activations rounded to 8 bits where kiln does), one token at a time,
// readable loops in the style of llama2.c's run.c. It is the oracle the
// compiled models are checked against, so it shares nothing with them but
// the GGUF file reader: its hyperparameters come from its own reading of the
// GGUF keys (reference_hparams) and its weights from its own decoders
// (reference_dequant). e2e_synthetic pins it to llama.cpp's reference logits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "tests/support/reference_hparams.hpp"

namespace kiln::test {

// Whether kiln rounds the activations that multiply weights of a GGUF type
// to 8-bit blocks of 32: it does for every block-quantized type (Q4_0 2,
// Q5_0 6, Q5_1 7, Q8_0 8, the K-quants Q2_K..Q6_K 10-14, IQ4_NL 20, IQ4_XS
// 23, MXFP4 39); llama.cpp does for the same types, in blocks of 256 for the
// K-quants and IQ4_XS.
constexpr bool rounds_activations(uint32_t ggml_type) {
  return ggml_type == 2 || (ggml_type >= 6 && ggml_type <= 8) || (ggml_type >= 10 && ggml_type <= 14) ||
         ggml_type == 20 || ggml_type == 23 || ggml_type == 39;
}

// How the activations that multiply a weight matrix are rounded first:
// to 8-bit blocks (rounds_activations), to bfloat16 (BF16 weights, type 30:
// llama.cpp's vector type for them is BF16, and kiln rounds as it does), or
// not at all.
enum class InputRounding { None, Q8Blocks, BF16 };

constexpr InputRounding input_rounding(uint32_t ggml_type) {
  if (rounds_activations(ggml_type)) return InputRounding::Q8Blocks;
  return ggml_type == 30 ? InputRounding::BF16 : InputRounding::None;
}

// A weight matrix dequantized to float, and how its input is rounded.
struct Matrix {
  std::vector<float> values;
  InputRounding rounds_input = InputRounding::None;
};

class ReferenceModel {
 public:
  // f16_kv: keys and values are rounded to F16 when cached (after RoPE), as
  // a model compiled with an F16 KV cache (and llama.cpp by default) does.
  // n_ctx: the context it runs with, as llama.cpp's n_ctx (LongRoPE chooses
  // its factors by it); 0: the file's context_length, llama.cpp's default.
  explicit ReferenceModel(const GgufFile& file, bool f16_kv = false, int n_ctx = 0);

  // Runs one token at the next position and returns its logits.
  std::vector<float> step(int32_t token);
  void reset() { pos_ = 0; }
  const ReferenceHparams& hp() const { return hp_; }

 private:
  struct Expert {
    Matrix gate, up, down;
    std::vector<float> gate_bias, up_bias, down_bias;  // gpt-oss
  };
  struct Layer {
    Matrix attn_norm, wq, wk, wv, bq, bk, bv, wo, ffn_norm, w_gate, w_up, w_down;  // bq/bk/bv: qwen2, gpt-oss
    Matrix q_norm, k_norm;                 // qwen3, gemma3, qwen3moe
    Matrix attn_post_norm, ffn_post_norm;  // gemma3
    Matrix router;                         // qwen3moe, gpt-oss: in place of w_gate, w_up, w_down
    std::vector<Expert> experts;
    Matrix bo, sinks, router_bias;         // gpt-oss
    Matrix shexp_gate_inp, shexp_gate, shexp_up, shexp_down;  // qwen2moe
  };
  std::vector<float> feed_forward(const Layer& w, const std::vector<float>& xn) const;
  ReferenceHparams hp_;
  Matrix token_embd_, output_norm_, output_;
  std::vector<float> rope_factors_;  // Llama 3.1's or LongRoPE's frequency factors, when the model has them
  std::vector<Layer> layers_;
  bool f16_kv_;
  int n_ctx_;
  std::vector<float> k_cache_, v_cache_;  // [layer][pos][kv_dim]
  int pos_ = 0;
};

}  // namespace kiln::test
