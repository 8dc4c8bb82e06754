#include "tests/support/synth_fixture_checks.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "engine/gguf/gguf.hpp"
#include "tests/support/batch_check.hpp"
#include "tests/support/reference_check.hpp"

namespace kiln::test {

std::vector<int32_t> random_prompt(int n, int vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids = {1};
  for (int i = 1; i < n; ++i) ids.push_back(std::uniform_int_distribution<int32_t>(3, vocab - 1)(rng));
  return ids;
}

void check_model_against_reference(const Model& model, const std::string& gguf) {
  auto seq = model.new_sequence();
  const auto file = GgufFile::open(gguf);
  for (unsigned seed : {1u, 2u}) check_against_reference(*seq, file, random_prompt(40, model.n_vocab(), seed));
}

void check_batch_and_thread_invariance(const Model& model) {
  auto seq = model.new_sequence();
  const auto ids = random_prompt(100, model.n_vocab(), 3);
  seq->set_threads(1);
  const auto one_by_one = all_logits(*seq, ids, 1);
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    seq->set_threads(threads, ThreadFit::Exact);
    const auto batched = all_logits(*seq, ids, model.max_batch());
    CHECK(std::memcmp(batched.data(), one_by_one.data(), batched.size() * sizeof(float)) == 0);
  }
  check_batched_matches_solo(model, 2);
}

void check_synthetic_model(const Model& model, const std::string& gguf) {
  check_model_against_reference(model, gguf);
  check_batch_and_thread_invariance(model);
}

}  // namespace kiln::test
