#include "engine/tokenizer/tokenizer_metadata.hpp"

#include "engine/tokenizer/tokenizer_spm.hpp"

namespace kiln {

namespace {

constexpr uint64_t kNoTokenId = 0xFFFFFFFF;

void require_length(const GgufFile& f, const std::string& key, size_t length, size_t n_tokens) {
  if (f.find(key) == nullptr) throw Error(f.path() + ": " + key + " is missing");
  if (length != n_tokens) {
    throw Error(f.path() + ": " + key + " has " + std::to_string(length) +
                " entries but tokenizer.ggml.tokens has " + std::to_string(n_tokens));
  }
}

}  // namespace

std::vector<TokenType> read_token_types(const GgufFile& f, const TokenTexts& pieces) {
  const std::string key = "tokenizer.ggml.token_type";
  const std::vector<int32_t> raw = f.get_int_array_or_empty(key);
  require_length(f, key, raw.size(), pieces.size());
  std::vector<TokenType> types;
  types.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] < 1 || raw[i] > 6) {
      throw Error(f.path() + ": " + key + "[" + std::to_string(i) + "] is " + std::to_string(raw[i]) +
                  ", not a known token type (1-6)");
    }
    types.push_back(static_cast<TokenType>(raw[i]));
    if (types.back() == TokenType::Byte && !parse_byte_piece(pieces[i])) {
      throw Error(f.path() + ": byte token " + std::to_string(i) + " is \"" + std::string(pieces[i]) +
                  "\", not <0xNN>");
    }
  }
  return types;
}

std::vector<float> read_scores(const GgufFile& f, size_t n_tokens) {
  const std::string key = "tokenizer.ggml.scores";
  std::vector<float> scores = f.get_float_array_or_empty(key);
  require_length(f, key, scores.size(), n_tokens);
  return scores;
}

int32_t read_token_id(const GgufFile& f, const std::string& key, uint32_t fallback, size_t n_tokens) {
  const uint64_t id = f.get_uint_or(key, fallback);
  if (id >= n_tokens) {
    throw Error(f.path() + ": " + key + " = " + std::to_string(id) + " is out of range (the vocab has " +
                std::to_string(n_tokens) + " tokens)");
  }
  return static_cast<int32_t>(id);
}

std::optional<int32_t> read_optional_token_id(const GgufFile& f, const std::string& key, size_t n_tokens) {
  if (f.get_uint_or(key, kNoTokenId) == kNoTokenId) return std::nullopt;
  return read_token_id(f, key, 0, n_tokens);
}

}  // namespace kiln
