// End to end on ../shared/models/synthetic: random-weight llama and qwen2
// files of each weight type kiln supports (and Llama 3.1 RoPE factors), compiled with kiln_add_model, checked against
// llama.cpp's reference logits and greedy ids with the tolerances that
// folder's README gives, and against tests/support/reference_forward.cpp on other
// prompts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "kiln_test_llama3_ropescale.hpp"
#include "kiln_test_llama_bf16.hpp"
#include "kiln_test_llama_f16.hpp"
#include "kiln_test_llama_f32.hpp"
#include "kiln_test_llama_f32_kv16.hpp"
#include "kiln_test_llama_q4_0.hpp"
#include "kiln_test_llama_q4_k_m.hpp"
#include "kiln_test_llama_q5_k_m.hpp"
#include "kiln_test_llama_q6_k.hpp"
#include "kiln_test_llama_q8_0.hpp"
#include "kiln_test_llama_q8_0_kv16.hpp"
#include "kiln_test_llama_tied.hpp"
#include "kiln_test_qwen2_f32.hpp"
#include "kiln_test_qwen2_q8_0.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/llamacpp_reference.hpp"
#include "tests/support/reference_check.hpp"
#include "tests/support/reference_forward.hpp"

namespace {

struct Fixture {
  const char* file;  // stem in ../shared/models/synthetic
  std::function<std::unique_ptr<kiln::Model>()> load;
  const char* default_gguf;
  float max_abs, rms, margin, max_abs_f32kv;  // the README's tolerances
  bool f16_kv = false;                         // compiled with an F16 KV cache (the others: F32)
};

// Each compiled fixture: kiln_add_model names its namespace after the file.
#define KILN_FIXTURE(ns) [] { return kiln::models::ns::load(); }, kiln::models::ns::kDefaultGguf

const Fixture kFixtures[] = {
    {"llama-f32", KILN_FIXTURE(kiln_test_llama_f32), 0.1f, 0.02f, 0.1f, 1e-3f},
    {"llama-tied", KILN_FIXTURE(kiln_test_llama_tied), 0.1f, 0.02f, 0.1f, 1e-3f},
    {"llama3-ropescale", KILN_FIXTURE(kiln_test_llama3_ropescale), 0.1f, 0.02f, 0.1f, 1e-3f},
    {"qwen2-f32", KILN_FIXTURE(kiln_test_qwen2_f32), 0.1f, 0.02f, 0.1f, 1e-3f},
    {"llama-f16", KILN_FIXTURE(kiln_test_llama_f16), 0.25f, 0.03f, 0.3f, 0.1f},
    {"llama-bf16", KILN_FIXTURE(kiln_test_llama_bf16), 0.5f, 0.1f, 0.6f, 0.5f},
    // Q8_0/Q4_0 with F32 attention: kiln rounds activations as ggml does, so
    // it meets llama.cpp's F32-attention logits far inside the folder's 2.0,
    // except where a value lands on an 8-bit rounding boundary (measured on
    // x86-64-v3 code: llama-q4_0 0, bit for bit; qwen2-q8_0 5.7e-6; llama-q8_0 0.30).
    // 0.75, not 0: the float steps between the integer products (norms,
    // attention) may round differently on other instruction sets.
    {"llama-q8_0", KILN_FIXTURE(kiln_test_llama_q8_0), 2.0f, 0.4f, 1.5f, 0.75f},
    {"llama-q4_0", KILN_FIXTURE(kiln_test_llama_q4_0), 2.0f, 0.4f, 1.5f, 0.75f},
    {"qwen2-q8_0", KILN_FIXTURE(kiln_test_qwen2_q8_0), 2.0f, 0.4f, 1.5f, 0.75f},
    {"llama-q4_k_m", KILN_FIXTURE(kiln_test_llama_q4_k_m), 2.5f, 0.5f, 2.5f, 2.5f},
    {"llama-q5_k_m", KILN_FIXTURE(kiln_test_llama_q5_k_m), 2.5f, 0.5f, 2.5f, 2.5f},
    {"llama-q6_k", KILN_FIXTURE(kiln_test_llama_q6_k), 2.5f, 0.5f, 2.5f, 2.5f},
    // With llama.cpp's default F16 cache. Keys and values are then rounded as
    // llama.cpp rounds them, but attention still sums in F32 (llama.cpp: F16),
    // so these sit between the two reference files; .ref.txt's bounds apply
    // to both.
    {"llama-f32", KILN_FIXTURE(kiln_test_llama_f32_kv16), 0.1f, 0.02f, 0.1f, 0.1f, true},
    {"llama-q8_0", KILN_FIXTURE(kiln_test_llama_q8_0_kv16), 2.0f, 0.4f, 1.5f, 2.0f, true},
};

using Reference = kiln::test::LlamaCppReference;

// A reference of the folder's README: 16 prompt ids, all logits of each, 32 greedy steps.
Reference read_reference(const std::string& path) {
  Reference r = kiln::test::read_llamacpp_reference(path);
  REQUIRE(r.prompt.size() == 16);
  REQUIRE(r.logits[0].size() == 1024);
  REQUIRE(r.gen_ids.size() == 32);
  return r;
}

std::string display_name(const Fixture& f) { return std::string(f.file) + (f.f16_kv ? " (F16 KV)" : ""); }

}  // namespace

TEST_CASE("synthetic models match llama.cpp's reference logits and greedy ids") {
  for (const Fixture& f : kFixtures) {
    const std::string name = display_name(f);
    CAPTURE(name);
    auto model = f.load();
    auto sequence = model->new_sequence();
    const std::string base = KILN_SHARED_DIR "/models/synthetic/" + std::string(f.file);
    kiln::test::check_against_llamacpp(*sequence, read_reference(base + ".ref.txt"), {f.max_abs, f.rms, f.margin});
    const double max_abs_f32kv = kiln::test::prompt_difference(*sequence, read_reference(base + ".ref-f32kv.txt")).first;
    INFO(name << ": max |d| " << max_abs_f32kv << " vs .ref-f32kv.txt");
    CHECK(max_abs_f32kv <= f.max_abs_f32kv);
  }
}

TEST_CASE("synthetic models agree with the reference forward pass on other prompts") {
  std::mt19937 rng(7);
  for (const Fixture& f : kFixtures) {
    const std::string name = display_name(f);
    CAPTURE(name);
    auto model = f.load();
    auto sequence = model->new_sequence();
    const auto file = kiln::GgufFile::open(f.default_gguf);
    std::vector<int32_t> ids = {1};
    for (int i = 0; i < 40; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, model->n_vocab() - 1)(rng));
    kiln::test::check_against_reference(*sequence, file, ids);
  }
}

TEST_CASE("with an F16 KV cache, batched ingestion is bit-identical to token by token, whatever the threads") {
  std::mt19937 rng(11);
  for (const Fixture& f : kFixtures) {
    if (!f.f16_kv) continue;
    const std::string name = display_name(f);
    CAPTURE(name);
    auto model = f.load();
    auto sequence = model->new_sequence();
    std::vector<int32_t> ids = {1};
    for (int i = 0; i < 150; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, model->n_vocab() - 1)(rng));
    sequence->set_threads(1);
    const std::vector<float> one_by_one = kiln::test::all_logits(*sequence, ids, 1);
    for (int threads : {1, 2, 3}) {
      sequence->set_threads(threads, kiln::ThreadFit::Exact);
      for (int chunk : {7, model->max_batch()}) {
        CAPTURE(threads);
        CAPTURE(chunk);
        const std::vector<float> batched = kiln::test::all_logits(*sequence, ids, chunk);
        CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEST_CASE("a thread count that changes from pass to pass gives the bits of one thread") {
  // As kernels/team_backoff.hpp changes it: each pass on its own count, the
  // KV cache written by passes on other counts.
  std::mt19937 rng(13);
  constexpr int kChunk = 5;
  for (const Fixture& f : kFixtures) {
    const std::string name = display_name(f);
    CAPTURE(name);
    auto model = f.load();
    auto sequence = model->new_sequence();
    std::vector<int32_t> ids = {1};
    for (int i = 0; i < 60; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, model->n_vocab() - 1)(rng));
    sequence->set_threads(1);
    const std::vector<float> one_thread = kiln::test::all_logits(*sequence, ids, kChunk);
    const size_t vocab = size_t(model->n_vocab());
    std::vector<float> changing(ids.size() * vocab);
    for (size_t pos = 0, pass = 0; pos < ids.size(); pos += kChunk, ++pass) {
      sequence->set_threads(static_cast<int>(1 + pass % 3), kiln::ThreadFit::Exact);
      const int n = static_cast<int>(std::min(ids.size() - pos, size_t{kChunk}));
      sequence->forward(ids.data() + pos, n, static_cast<int>(pos), kiln::Logits::All, changing.data() + pos * vocab);
    }
    CHECK(std::memcmp(changing.data(), one_thread.data(), changing.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("the reference forward pass reproduces llama.cpp's F32-attention logits") {
  // The oracle against an outside implementation, with F32 keys and values as
  // in .ref-f32kv.txt. Bounds (measured, x86-64-v3 build): F32 weights 1e-3
  // (2.5e-5: float64 vs float32 sums); Q8_0/Q4_0 1e-3 (3.8e-6: both round the
  // activations the same way); BF16 0.2 (0.11: both round its activations to
  // bfloat16, where float64 and float32 sums straddle a rounding step now and
  // then); F16 and the K-quants the folder's F32-attention tolerances (0.033,
  // 1.49-1.79: llama.cpp rounds F16 activations, which the oracle, like kiln,
  // does not, and rounds
  // the K-quants' activations to 8 bits in blocks of 256 where the oracle,
  // like kiln, uses blocks of 32; its K-quant decoder is pinned bit for bit
  // in test_kernels_kquant).
  struct Pin {
    const char* file;
    double bound;
  };
  const Pin pins[] = {{"llama-f32", 1e-3},   {"llama-tied", 1e-3},   {"llama3-ropescale", 1e-3}, {"qwen2-f32", 1e-3},
                      {"llama-q8_0", 1e-3},  {"llama-q4_0", 1e-3},   {"qwen2-q8_0", 1e-3},       {"llama-f16", 0.1},
                      {"llama-bf16", 0.2},   {"llama-q4_k_m", 2.5},  {"llama-q5_k_m", 2.5},      {"llama-q6_k", 2.5}};
  for (const Pin& pin : pins) {
    CAPTURE(pin.file);
    const std::string base = "models/synthetic/" + std::string(pin.file);
    const Reference ref = read_reference(kiln::test::fixture(base + ".ref-f32kv.txt"));
    const auto file = kiln::GgufFile::open(kiln::test::fixture(base + ".gguf"));
    kiln::test::ReferenceModel oracle(file);
    double max_abs = 0;
    for (size_t p = 0; p < ref.prompt.size(); ++p) {
      const std::vector<float> got = oracle.step(ref.prompt[p]);
      REQUIRE(got.size() == ref.logits[p].size());
      for (size_t i = 0; i < got.size(); ++i) max_abs = std::max(max_abs, double(std::fabs(got[i] - ref.logits[p][i])));
    }
    MESSAGE(std::string(pin.file) << ": reference forward pass vs llama.cpp (F32 attention): max |d| " << max_abs);
    CHECK(max_abs <= pin.bound);
  }
}
