// End to end on models kiln-synth writes (tests/CMakeLists.txt lists them):
// between them they use every architecture, weight type and RoPE variant the
// tool can write, mixed across tensor roles. Each is checked against the plain
// reference forward pass in tests/ and for batch/thread independence.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <random>

#include "kiln_test_synth_llama_mixed.hpp"
#include "kiln_test_synth_llama_tied_ropefreqs.hpp"
#include "kiln_test_linear_rope.hpp"
#include "kiln_test_synth_qwen2_mixed.hpp"
#include "tests/reference_check.hpp"

namespace {

struct SynthFixture {
  const char* name;
  std::function<std::unique_ptr<kiln::Model>()> load;
  const char* gguf;
};

#define KILN_SYNTH_FIXTURE(ns) #ns, [] { return kiln::models::ns::load(); }, kiln::models::ns::kDefaultGguf

const SynthFixture kFixtures[] = {
    {KILN_SYNTH_FIXTURE(kiln_test_synth_llama_mixed)},
    {KILN_SYNTH_FIXTURE(kiln_test_synth_qwen2_mixed)},
    {KILN_SYNTH_FIXTURE(kiln_test_synth_llama_tied_ropefreqs)},
    {KILN_SYNTH_FIXTURE(kiln_test_linear_rope)},
};

std::vector<int32_t> random_prompt(int n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids = {1};
  for (int i = 1; i < n; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, vocab - 1)(rng));
  return ids;
}

}  // namespace

TEST_CASE("synthetic combinations agree with the reference forward pass") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    auto seq = model->new_sequence();
    const auto file = kiln::GgufFile::open(f.gguf);
    for (unsigned seed : {1u, 2u}) {
      const auto ids = random_prompt(40, model->n_vocab(), seed);
      kiln::test::check_against_reference(*seq, file, ids);
    }
  }
}

TEST_CASE("synthetic combinations: batched ingestion is bit-identical to token by token, whatever the threads") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    auto seq = model->new_sequence();
    const auto ids = random_prompt(100, model->n_vocab(), 3);
    seq->set_threads(1);
    const auto one_by_one = kiln::test::all_logits(*seq, ids, 1);
    for (int threads : {2, 3}) {
      seq->set_threads(threads, kiln::ThreadFit::Exact);
      const auto batched = kiln::test::all_logits(*seq, ids, model->max_batch());
      CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("a prompt longer than a token chunk, in one batch of the default 512: linear RoPE, Q8_0 and Q4_0") {
  auto model = kiln::models::kiln_test_linear_rope::load();
  auto seq = model->new_sequence();
  REQUIRE(model->max_batch() == 512);
  REQUIRE(model->kv_layout().type == "f16");
  const auto file = kiln::GgufFile::open(kiln::models::kiln_test_linear_rope::kDefaultGguf);
  // The largest token chunk (kernels/matmul.hpp, token_chunk) of its 256-wide
  // Q8_0 and Q4_0 rows is about 400 tokens: 450 take two chunks in every matmul.
  const auto ids = random_prompt(450, model->n_vocab(), 4);
  kiln::test::check_against_reference(*seq, file, ids);
  seq->set_threads(1);
  const auto one_by_one = kiln::test::all_logits(*seq, ids, 1);
  seq->set_threads(2);
  const auto batched = kiln::test::all_logits(*seq, ids, 512);
  CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
}
