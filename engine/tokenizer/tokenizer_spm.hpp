// SentencePiece BPE as GGUF describes it (tokenizer.ggml.model = "llama"):
// adjacent pieces merge highest score first; what no vocab piece covers
// falls back to "<0xNN>" byte tokens, or to unk.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer_token_index.hpp"
#include "engine/tokenizer/tokenizer_types.hpp"

namespace kiln {

// The byte a "<0xNN>" piece stands for (two upper-case hex digits), if it is one.
std::optional<uint8_t> parse_byte_piece(std::string_view piece);

// A piece's text with every "▁" turned back into a space.
std::string unescape_spaces(std::string_view piece);

class SpmModel {
 public:
  // `pieces`, `types` and `scores` have one entry per token.
  SpmModel(const TokenTexts& pieces, const std::vector<TokenType>& types, std::vector<float> scores,
           int32_t unk);

  // Appends the ids of `text` (not empty). SentencePiece sees every space as
  // "▁"; add_prefix puts one more in front ("dummy prefix", so a word at the
  // start looks like one after a space).
  void encode(std::string_view text, bool add_prefix, std::vector<int32_t>& out) const;

 private:
  // Vocab id of `text` if encoding may produce it, else -1.
  int32_t find_piece(std::string_view text) const;
  // Appends the ids for one fully merged symbol: its own id, or else one byte
  // token per byte (unk when the vocab has no such byte token).
  void append_symbol(std::string_view text, std::vector<int32_t>& out) const;

  TokenIndex pieces_;  // normal and user-defined pieces only
  std::vector<float> scores_;
  std::array<int32_t, 256> byte_ids_{};  // -1 when the vocab has no <0xNN> token
  int32_t unk_;
};

}  // namespace kiln
