// Constrained decoding over a real vocabulary (Qwen2's 151,643 byte-level
// tokens): a JSON document of a ten-property schema, tokenized as the
// model's tokenizer would, goes through the constraint token by token;
// every token must be allowed, and the end allowed only at the end. Prints
// what the trie and the masks cost (docs/benchmarks.md); no timing is
// asserted.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/grammar/grammar_constraint.hpp"
#include "engine/grammar/json_schema.hpp"
#include "engine/session/sampler.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/support/fixtures.hpp"

using namespace kiln::grammar;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// The schema scripts/grammar_bench.py sends to the servers too.
std::string ten_property_schema() {
  std::ifstream in(TEN_PROPERTY_SCHEMA);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* kDocument = R"({
  "id": 48213,
  "name": "Ada Lovelace, Countess of Lovelace",
  "email": "ada.lovelace@example.org",
  "age": 36,
  "score": 99.5,
  "active": true,
  "role": "editor",
  "tags": ["mathematics", "analytical engine", "poetry", "notes on Menabrea"],
  "joined": "1843-07-10",
  "manager": null
})";

}  // namespace

TEST_CASE("a schema's document through Qwen2's vocabulary" * kiln::test::needs_fixtures) {
  const kiln::GgufFile file = kiln::GgufFile::open(kiln::test::fixture("tokenizer-tests/ggml-vocab-qwen2.gguf"));
  const kiln::Tokenizer tok = kiln::Tokenizer::from_gguf(file);

  auto start = std::chrono::steady_clock::now();
  const auto vocab = std::make_shared<const TokenTrie>(TokenTrie::from_tokenizer(tok));
  const double trie_ms = ms_since(start);
  start = std::chrono::steady_clock::now();
  const auto grammar = parse_gbnf(json_schema_to_gbnf(ten_property_schema()));
  const double compile_ms = ms_since(start);

  GrammarConstraint constraint(grammar, vocab);
  const std::vector<int32_t> tokens = tok.encode(kDocument, false);
  std::vector<float> logits(static_cast<size_t>(tok.n_vocab()));
  std::vector<double> mask_ms;
  for (const int32_t t : tokens) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    start = std::chrono::steady_clock::now();
    constraint.mask(logits.data());
    mask_ms.push_back(ms_since(start));
    INFO("token ", t, " '", tok.text(t), "'");
    REQUIRE(logits[static_cast<size_t>(t)] == 0.0f);
    CHECK_FALSE(constraint.can_end());
    constraint.accept(t);
  }
  CHECK(constraint.can_end());
  std::fill(logits.begin(), logits.end(), 0.0f);
  constraint.mask(logits.data());
  CHECK(logits[static_cast<size_t>(tok.eos())] == 0.0f);
  const size_t allowed = static_cast<size_t>(std::count(logits.begin(), logits.end(), 0.0f));
  CHECK(allowed < 10);  // the end, or whitespace the grammar allows after it

  std::vector<double> sorted = mask_ms;
  std::sort(sorted.begin(), sorted.end());
  double total = 0;
  for (const double v : mask_ms) total += v;
  std::printf("qwen2 vocabulary (%d tokens): trie %.1f ms, schema -> grammar %.2f ms\n", tok.n_vocab(), trie_ms,
              compile_ms);
  std::printf("mask per token over %zu tokens: median %.3f ms, p90 %.3f ms, max %.3f ms (first %.3f ms), total %.1f ms\n",
              mask_ms.size(), sorted[sorted.size() / 2], sorted[sorted.size() * 9 / 10], sorted.back(), mask_ms[0],
              total);

  // For scale: sampling itself (llama.cpp's default chain) from a row of
  // this vocabulary's size, without a grammar.
  kiln::Sampler sampler(kiln::SamplerParams{.seed = 1}, tok.n_vocab());
  std::vector<double> sample_ms;
  for (int i = 0; i < 50; ++i) {
    for (size_t j = 0; j < logits.size(); ++j) logits[j] = static_cast<float>((j * 2654435761u + i) % 1000) / 100.0f;
    start = std::chrono::steady_clock::now();
    (void)sampler.sample(logits.data());
    sample_ms.push_back(ms_since(start));
  }
  std::sort(sample_ms.begin(), sample_ms.end());
  std::printf("sampling without a grammar: median %.3f ms\n", sample_ms[sample_ms.size() / 2]);
}
