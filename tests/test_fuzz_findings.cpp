// What the fuzz targets (tests/fuzz) found, kept as tests: each case is a
// minimized input and the behaviour now expected of it.
#include <doctest/doctest.h>

#include "tests/support/fixtures.hpp"
#include "tests/support/test_tokenizer_support.hpp"

using kiln::test::decode;
using kiln::test::open_shared;

// fuzz_tokenizer_spm, first run: a literal U+2581 in the text did not round
// trip. Not a defect: SentencePiece writes a space as U+2581 and decodes
// U+2581 as a space, so both spell the same tokens (llama.cpp's
// SentencePiece tokenizer does the same). The fuzz target's round trip
// property now leaves such text out for SentencePiece vocabularies.
TEST_CASE("SentencePiece: a literal U+2581 is its space marker and decodes as a space" * kiln::test::needs_fixtures) {
  const kiln::GgufFile file = open_shared("tokenizer-tests/ggml-vocab-llama-spm.gguf");
  const kiln::Tokenizer tok = kiln::Tokenizer::from_gguf(file);
  CHECK(tok.encode("test\xE2\x96\x81" "dsdf", false) == tok.encode("test dsdf", false));
  CHECK(decode(tok, tok.encode("test\xE2\x96\x81" "dsdf", false)) == "test dsdf");
}

// fuzz_tokenizer_spm, second run: "##a</s>$" with phi-3's vocabulary came
// back with a space before "$". Not a defect either: "</s>" is a
// user-defined token there, matched inside plain text, and llama.cpp gives
// the text after such a token a space prefix of its own, as at the start.
TEST_CASE("SentencePiece: text after a user-defined token gets its own space prefix" * kiln::test::needs_fixtures) {
  const kiln::GgufFile file = open_shared("tokenizer-tests/ggml-vocab-phi-3.gguf");
  const kiln::Tokenizer tok = kiln::Tokenizer::from_gguf(file);
  const std::vector<int32_t> ids = tok.encode("##a</s>$", false);
  REQUIRE(ids.size() == 4);
  CHECK(tok.type(ids[2]) == kiln::TokenType::UserDefined);
  CHECK(tok.piece(ids[3]) == "\xE2\x96\x81$");
  CHECK(decode(tok, ids) == "##a</s> $");
}
