// Test vocabularies for the model families whose own vocabulary files are not
// in ../shared (Gemma 3, Phi-4-mini, SmolLM3): a vocab of
// ../shared/tokenizer-tests with its tokenizer metadata changed to what those
// families' files say (no space prefix, another pre-tokenizer, their chat
// tokens). Written by kiln's GGUF writer, the same bytes every time; kiln's
// tokenizer on them is checked against llama.cpp's ids for the same files
// (tests/vocab_variants/README.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_writer.hpp"
#include "engine/tokenizer/tokenizer_types.hpp"

namespace kiln::test {

// A token given a new text and type, or appended when its id is the vocab's
// size (appended tokens come in id order).
struct TokenChange {
  int32_t id;
  std::string_view piece;
  TokenType type;
};

struct VocabVariant {
  std::string_view name;  // also the name of its expected ids (tests/vocab_variants/<name>.*.ids)
  std::string_view base;  // the vocab it starts from: ../shared/tokenizer-tests/ggml-vocab-<base>.gguf
  std::vector<std::pair<std::string, GgufValue>> set;  // keys added or replaced
  std::vector<std::string> erase;                      // keys removed
  std::vector<TokenChange> tokens;
};

std::span<const VocabVariant> vocab_variants();
const VocabVariant& vocab_variant(std::string_view name);  // throws kiln::Error for an unknown name

// The variant's base vocab, relative to ../shared; its test texts are next
// to it, with ".inp" added.
std::string base_vocab(const VocabVariant& variant);

// The variant's file: every key of `base` (in key order) but those changed.
// Appending tokens lengthens token_type and, where the vocab has them, the
// scores (at -1000, as llama.cpp's converter scores added tokens) and
// `<architecture>.vocab_size`.
GgufWriter write_vocab_variant(const VocabVariant& variant, const GgufFile& base);

}  // namespace kiln::test
