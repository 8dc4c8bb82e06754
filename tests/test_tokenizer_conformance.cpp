// llama.cpp's tokenizer conformance vectors (test-tokenizer-0) for every
// vocab in the shared tokenizer-tests folder; its README gives the format.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/support/test_tokenizer_support.hpp"

using kiln::GgufFile;
using kiln::Tokenizer;
using namespace kiln::test;

namespace {

// One case: an input string and its expected ids.
struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// Reads the .inp/.out pair next to a vocab GGUF.
std::vector<VocabCase> read_vocab_cases(const std::string& gguf_path) {
  std::vector<VocabCase> cases;
  for (std::string& text : read_test_texts(gguf_path + ".inp")) cases.push_back({std::move(text), {}});
  std::istringstream outputs(read_file(gguf_path + ".out"));
  std::string line;
  for (VocabCase& c : cases) {
    REQUIRE(std::getline(outputs, line));
    c.ids = parse_ids(line);
  }
  return cases;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Encodes every case without BOS/EOS and with special-token text as plain
// text, as llama.cpp's test does, and checks the round trip too.
void check_vocab_cases(const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  const GgufFile f = open_shared("tokenizer-tests/ggml-vocab-" + name + ".gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  const double load_seconds = seconds_since(start);
  const std::vector<VocabCase> cases = read_vocab_cases(f.path());
  CHECK(cases.size() == 46);
  int passed = 0;
  for (const VocabCase& c : cases) {
    CAPTURE(c.text);
    const std::vector<int32_t> ids = tok.encode(c.text, /*add_special=*/false);
    CHECK(ids == c.ids);
    CHECK(decode(tok, ids) == c.text);
    passed += ids == c.ids;
  }
  MESSAGE(name << ": " << passed << "/" << cases.size() << " cases pass; vocab loaded in " << load_seconds * 1000
               << " ms");
}

// A limit on the tokens: the cases encode to the same ids within their own
// count and give up one below it, with special-token text read as tokens
// and BOS added; no case is shorter in tokens than its bytes divided by the
// longest token's (the bound that refuses a text unread); a text far too
// long for the limit is given up on before it is read.
void check_token_limit(const std::string& name) {
  const Tokenizer tok = Tokenizer::from_gguf(open_shared("tokenizer-tests/ggml-vocab-" + name + ".gguf"));
  for (const VocabCase& c : read_vocab_cases(kShared + "/tokenizer-tests/ggml-vocab-" + name + ".gguf")) {
    CAPTURE(c.text);
    const std::vector<int32_t> ids = tok.encode(c.text, /*add_special=*/true, /*parse_special=*/true);
    CHECK(tok.encode_at_most(ids.size(), c.text, true, true) == ids);
    if (!ids.empty()) CHECK(tok.encode_at_most(ids.size() - 1, c.text, true, true) == std::nullopt);
    CHECK(c.text.size() <= ids.size() * tok.max_token_bytes());
  }
  const std::string huge(size_t{100} << 20, 'a');
  const auto start = std::chrono::steady_clock::now();
  CHECK(tok.encode_at_most(4096, huge, true, true) == std::nullopt);
  CHECK(seconds_since(start) < 0.1);  // tokenizing it all takes tens of seconds
}

}  // namespace

TEST_CASE("every vocab: a limit on the tokens, and texts too long for it given up on early" * needs_fixtures) {
  for (const std::string name : {"llama-spm", "phi-3", "gpt-2", "deepseek-llm", "deepseek-coder", "llama-bpe", "qwen2"}) {
    CAPTURE(name);
    check_token_limit(name);
  }
}

TEST_CASE("llama-spm vocab: conformance cases" * needs_fixtures) { check_vocab_cases("llama-spm"); }
TEST_CASE("phi-3 vocab: conformance cases" * needs_fixtures) { check_vocab_cases("phi-3"); }
TEST_CASE("gpt-2 vocab: conformance cases" * needs_fixtures) { check_vocab_cases("gpt-2"); }
TEST_CASE("deepseek-llm vocab: conformance cases" * needs_fixtures) { check_vocab_cases("deepseek-llm"); }
TEST_CASE("deepseek-coder vocab: conformance cases" * needs_fixtures) { check_vocab_cases("deepseek-coder"); }
TEST_CASE("llama-bpe vocab: conformance cases" * needs_fixtures) { check_vocab_cases("llama-bpe"); }
TEST_CASE("qwen2 vocab: conformance cases" * needs_fixtures) { check_vocab_cases("qwen2"); }
