// The architectures beyond llama and qwen2 (qwen3, gemma3, smollm3), each in
// F32, Q8_0 and kiln-synth's Q4_K_M, against llama.cpp's logits for the same
// files: the prompt in one batch (24 tokens, longer than gemma3's 16-token
// window) and 32 greedy steps. The references (tests/llamacpp/) were made by
// tests/llama_oracle/refdump with F32 attention (--f32kv), so the models are
// compiled with an F32 KV cache. kiln-synth writes the same bytes from the
// same flags and seed; if it changes, regenerate the references as
// tests/llama_oracle/README.md says.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>

#include "kiln_test_synth_gemma3.hpp"
#include "kiln_test_synth_gemma3_q4_k_m.hpp"
#include "kiln_test_synth_gemma3_q8_0.hpp"
#include "kiln_test_synth_qwen3.hpp"
#include "kiln_test_synth_qwen3_q4_k_m.hpp"
#include "kiln_test_synth_qwen3_q8_0.hpp"
#include "kiln_test_synth_smollm3.hpp"
#include "kiln_test_synth_smollm3_q4_k_m.hpp"
#include "kiln_test_synth_smollm3_q8_0.hpp"
#include "tests/llamacpp_reference.hpp"

namespace {

struct Fixture {
  const char* name;
  std::function<std::unique_ptr<kiln::Model>()> load;
  kiln::test::LlamaCppBounds bounds;
};

#define KILN_ARCH_FIXTURE(ns) #ns, [] { return kiln::models::ns::load(); }

// Bounds by weight type, as e2e_synthetic's for llama.cpp's F32-attention
// references: F32 weights differ only in the order of float sums (1e-3);
// Q8_0 and Q4_K_M round the activations to 8 bits before every matrix, and a
// value that lands on a rounding boundary moves by a step that later layers
// carry (0.75 and 2.5, the same bounds as the llama files').
constexpr kiln::test::LlamaCppBounds kF32{1e-3f, 2e-4f, 0.1f}, kQ8_0{0.75f, 0.15f, 1.5f}, kQ4_K_M{2.5f, 0.5f, 2.5f};

const Fixture kFixtures[] = {
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3), kF32},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_qwen3_q4_k_m), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gemma3), kF32},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gemma3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_gemma3_q4_k_m), kQ4_K_M},
    {KILN_ARCH_FIXTURE(kiln_test_synth_smollm3), kF32},
    {KILN_ARCH_FIXTURE(kiln_test_synth_smollm3_q8_0), kQ8_0},
    {KILN_ARCH_FIXTURE(kiln_test_synth_smollm3_q4_k_m), kQ4_K_M},
};

}  // namespace

TEST_CASE("qwen3, gemma3 and smollm3 match llama.cpp's logits and greedy ids") {
  for (const Fixture& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    auto sequence = model->new_sequence();
    const auto ref = kiln::test::read_llamacpp_reference(std::string(LLAMACPP_REFS) + "/" + f.name + ".ref-f32kv.txt");
    REQUIRE(ref.prompt.size() == 24);
    REQUIRE(ref.gen_ids.size() == 32);
    kiln::test::check_against_llamacpp(*sequence, ref, f.bounds);
  }
}
