// End to end on models kiln-synth writes (tests/CMakeLists.txt lists them):
// between them they use every architecture, weight type and RoPE variant the
// tool can write, mixed across tensor roles. Each is checked against the plain
// reference forward pass in tests/ and for batch/thread independence.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <random>

#include "synth_llama_mixed.hpp"
#include "synth_llama_tied_ropefreqs.hpp"
#include "synth_qwen2_mixed.hpp"
#include "tests/reference_check.hpp"

namespace {

struct SynthFixture {
  const char* name;
  std::function<std::unique_ptr<kiln::Model>()> load;
  const char* gguf;
};

#define KILN_SYNTH_FIXTURE(ns) #ns, [] { return kiln::models::ns::load(); }, kiln::models::ns::kDefaultGguf

const SynthFixture kFixtures[] = {
    {KILN_SYNTH_FIXTURE(synth_llama_mixed)},
    {KILN_SYNTH_FIXTURE(synth_qwen2_mixed)},
    {KILN_SYNTH_FIXTURE(synth_llama_tied_ropefreqs)},
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
    const auto file = kiln::GgufFile::open(f.gguf);
    for (unsigned seed : {1u, 2u}) {
      const auto ids = random_prompt(40, model->n_vocab(), seed);
      kiln::test::check_against_reference(*model, file, ids);
    }
  }
}

TEST_CASE("synthetic combinations: batched ingestion is bit-identical to token by token, whatever the threads") {
  for (const auto& f : kFixtures) {
    CAPTURE(std::string(f.name));
    auto model = f.load();
    const auto ids = random_prompt(100, model->n_vocab(), 3);
    model->set_threads(1);
    const auto one_by_one = kiln::test::all_logits(*model, ids, 1);
    for (int threads : {2, 3}) {
      model->set_threads(threads, kiln::ThreadFit::Exact);
      const auto batched = kiln::test::all_logits(*model, ids, model->max_batch());
      CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
    }
  }
}
