// A plain llama forward pass for tests: every weight dequantized to float,
// one token at a time, readable loops in the style of llama2.c's run.c. It
// shares nothing with the generated code but the GGUF reader and the
// dequantizers, so it is the oracle the compiled models are checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gguf.hpp"
#include "engine/model_desc.hpp"

namespace kiln::test {

class ReferenceModel {
 public:
  explicit ReferenceModel(const GgufFile& file);

  // Runs one token at the next position and returns its logits.
  std::vector<float> step(int32_t token);
  void reset() { pos_ = 0; }
  const Hyperparams& hp() const { return desc_.hp; }

 private:
  std::vector<float> matrix(const GgufFile& file, const std::string& name) const;

  struct Layer {
    std::vector<float> attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
  };
  ModelDesc desc_;
  std::vector<float> token_embd_, output_norm_, output_;
  std::vector<Layer> layers_;
  std::vector<float> k_cache_, v_cache_;  // [layer][pos][kv_dim]
  int pos_ = 0;
};

}  // namespace kiln::test
