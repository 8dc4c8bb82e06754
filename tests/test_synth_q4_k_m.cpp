// kiln-synth's Q4_K_M mix: the layers whose attn_v and ffn_down get Q6_K are
// the ones llama-quantize picked for files of the same layer counts (written
// by kiln-synth as F32, then `llama-quantize f32.gguf q.gguf Q4_K_M`; the
// lists below are what its log said), and every other matrix is Q4_K.
#include <doctest/doctest.h>

#include <cstdio>
#include <set>
#include <string>

#include "codegen/synth.hpp"
#include "engine/gguf/gguf.hpp"

namespace {

using kiln::TensorType;

std::set<int> layers_with_more_bits(int n_layer) {
  std::set<int> out;
  for (int l = 0; l < n_layer; ++l)
    if (kiln::synth::gets_more_bits(l, n_layer)) out.insert(l);
  return out;
}

kiln::GgufFile synth_q4_k_m(int n_layer, bool tied) {
  kiln::synth::SynthSpec spec;
  spec.shape = {"test", "llama", 256, n_layer, 4, 2, 256, 512, 64};
  spec.types = kiln::synth::q4_k_m_types();
  spec.tied_output = tied;
  return kiln::GgufFile::from_bytes(kiln::synth::make_model(spec).bytes());
}

}  // namespace

TEST_CASE("Q4_K_M: the layers that get more bits are llama-quantize's") {
  CHECK(layers_with_more_bits(2) == std::set<int>{1});
  CHECK(layers_with_more_bits(5) == std::set<int>{2, 4});
  CHECK(layers_with_more_bits(8) == std::set<int>{0, 3, 6, 7});
  CHECK(layers_with_more_bits(12) == std::set<int>{0, 3, 6, 9, 10, 11});
  CHECK(layers_with_more_bits(22) == std::set<int>{0, 1, 4, 7, 10, 13, 16, 19, 20, 21});
  CHECK(layers_with_more_bits(32) == std::set<int>{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31});
}

TEST_CASE("Q4_K_M: kiln-synth stores each tensor in the mix's type") {
  const kiln::GgufFile f = synth_q4_k_m(8, /*tied=*/false);
  const std::set<int> more = {0, 3, 6, 7};
  int matrices = 0;
  for (const kiln::GgufTensor& t : f.tensors()) {
    CAPTURE(t.name);
    if (t.dims.size() == 1) {
      CHECK(t.type == TensorType::F32);  // norms
      continue;
    }
    ++matrices;
    int layer = -1;
    char role[32] = {};
    const bool in_layer = std::sscanf(t.name.c_str(), "blk.%d.%31[a-z_]", &layer, role) == 2;
    const bool q6 = t.name == "output.weight" ||
                    (in_layer && more.count(layer) && (std::string(role) == "attn_v" || std::string(role) == "ffn_down"));
    CHECK(t.type == (q6 ? TensorType::Q6_K : TensorType::Q4_K));
  }
  CHECK(matrices == 2 + 8 * 7);
}

TEST_CASE("Q4_K_M: a tied token embedding is the output matrix, so it takes the output's Q6_K") {
  const kiln::GgufFile f = synth_q4_k_m(2, /*tied=*/true);
  CHECK(f.find_tensor("output.weight") == nullptr);
  CHECK(f.find_tensor("token_embd.weight")->type == TensorType::Q6_K);
  CHECK(synth_q4_k_m(2, /*tied=*/false).find_tensor("token_embd.weight")->type == TensorType::Q4_K);
}
