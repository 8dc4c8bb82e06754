// End to end on models kiln-synth writes (tests/CMakeLists.txt lists them):
// between them they use every weight type and RoPE variant, mixed across
// tensor roles, on the llama and qwen2 architectures (the others:
// e2e_architectures). Each is checked against the plain
// reference forward pass in tests/, for batch/thread independence, and for
// batched decoding of several sequences matching each sequence's solo run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kiln_test_synth_llama_mixed.hpp"
#include "kiln_test_synth_llama_q5_iq4.hpp"
#include "kiln_test_synth_llama_tied_ropefreqs.hpp"
#include "kiln_test_linear_rope.hpp"
#include "kiln_test_synth_q4_k_m.hpp"
#include "kiln_test_synth_q4_k_m_f32.hpp"
#include "kiln_test_synth_qwen2_mixed.hpp"
#include "kiln_test_synth_qwen2_q2_q3.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/synth_fixture_checks.hpp"

// One test case per model, named after it: tests/CMakeLists.txt runs each as
// a ctest test of its own, so that they run side by side (under qemu this
// program is the longest of the instruction-set matrix's suites).
#define KILN_SYNTH_COMBINATION(ns)                                                                          \
  TEST_CASE(#ns ": agrees with the reference forward pass, whatever the batch and the threads") {           \
    kiln::test::check_synthetic_model(*kiln::models::kiln_test_##ns::load(), kiln::models::kiln_test_##ns::kDefaultGguf); \
  }

KILN_SYNTH_COMBINATION(synth_llama_mixed)
KILN_SYNTH_COMBINATION(synth_qwen2_mixed)
KILN_SYNTH_COMBINATION(synth_llama_tied_ropefreqs)
KILN_SYNTH_COMBINATION(synth_llama_q5_iq4)
KILN_SYNTH_COMBINATION(synth_qwen2_q2_q3)
KILN_SYNTH_COMBINATION(linear_rope)
KILN_SYNTH_COMBINATION(synth_q4_k_m)

TEST_CASE("a prompt longer than a token chunk, in one batch of the default 512: linear RoPE, Q8_0 and Q4_0") {
  auto model = kiln::models::kiln_test_linear_rope::load();
  auto seq = model->new_sequence();
  REQUIRE(model->max_batch() == 512);
  REQUIRE(model->kv_layout().type == "f16");
  const auto file = kiln::GgufFile::open(kiln::models::kiln_test_linear_rope::kDefaultGguf);
  // The largest token chunk (kernels/matmul.hpp, token_chunk) of its 256-wide
  // Q8_0 and Q4_0 rows is about 400 tokens: 450 take two chunks in every matmul.
  const auto ids = kiln::test::random_prompt(450, model->n_vocab(), 4);
  kiln::test::check_against_reference(*seq, file, ids);
  seq->set_threads(1);
  const auto one_by_one = kiln::test::all_logits(*seq, ids, 1);
  seq->set_threads(2);
  const auto batched = kiln::test::all_logits(*seq, ids, 512);
  CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
}

namespace {

// Log-softmax of one position's logits.
std::vector<double> log_probs(const float* logits, int n) {
  const double top = *std::max_element(logits, logits + n);
  double total = 0;
  for (int i = 0; i < n; ++i) total += std::exp(logits[i] - top);
  std::vector<double> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out[size_t(i)] = logits[i] - top - std::log(total);
  return out;
}

}  // namespace

TEST_CASE("kiln-synth's Q4_K_M loses about as much as llama-quantize's on the same weights") {
  // The same shape and seed draw the same values, so the F32 model holds the
  // weights the Q4_K_M one rounded. How far apart their predictions are is
  // measured as llama-perplexity --kl-divergence does: the mean, over
  // positions, of KL(F32 || Q4_K_M). On these weights llama-perplexity
  // measured 0.118 for llama-quantize's Q4_K_M file and 0.145 for kiln-synth's
  // (-c 128 on English text; kiln rounds to nearest where llama-quantize
  // searches for the best scales). The bound leaves room for other prompts
  // but not for a wrong type or layout, which gives a KL of several units.
  // Measured here: 0.121.
  auto quantized = kiln::models::kiln_test_synth_q4_k_m::load();
  auto original = kiln::models::kiln_test_synth_q4_k_m_f32::load();
  const int n_vocab = quantized->n_vocab();
  const auto ids = kiln::test::random_prompt(64, n_vocab, 5);
  const auto q = kiln::test::all_logits(*quantized->new_sequence(), ids, quantized->max_batch());
  const auto f = kiln::test::all_logits(*original->new_sequence(), ids, original->max_batch());
  REQUIRE(q.size() == f.size());
  double kl_sum = 0;
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    const auto base = log_probs(&f[pos * size_t(n_vocab)], n_vocab);
    const auto rounded = log_probs(&q[pos * size_t(n_vocab)], n_vocab);
    for (size_t i = 0; i < base.size(); ++i) kl_sum += std::exp(base[i]) * (base[i] - rounded[i]);
  }
  const double mean_kl = kl_sum / double(ids.size());
  INFO("mean KL divergence " << mean_kl);
  CHECK(mean_kl > 0.01);  // the two really differ: one is rounded
  CHECK(mean_kl < 0.25);
}
