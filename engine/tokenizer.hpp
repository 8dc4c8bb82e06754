// Text <-> token ids for SentencePiece-style vocabularies stored in GGUF
// (`tokenizer.ggml.model = "llama"`), and a streaming decoder that turns
// generated ids back into valid UTF-8 text.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf.hpp"

namespace kiln {

// Token kinds, with the numeric values GGUF's tokenizer.ggml.token_type uses.
enum class TokenType : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,      // BOS, EOS, chat markers: never produced from text
  UserDefined = 4,
  Unused = 5,
  Byte = 6,         // "<0xNN>": one raw byte, used when text has no vocab piece
};

class Tokenizer {
 public:
  // Reads the tokenizer.ggml.* metadata. Throws kiln::Error when the model is
  // not "llama", when arrays are missing or disagree in length, or when a
  // special id is out of range.
  static Tokenizer from_gguf(const GgufFile& f);

  // add_special: prepend BOS / append EOS as the vocab asks (add_bos_token,
  // add_eos_token). Special-token text inside `text` is treated as plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_special) const;

  int n_vocab() const { return static_cast<int>(pieces_.size()); }
  int32_t bos() const { return bos_; }
  int32_t eos() const { return eos_; }
  bool is_end_of_generation(int32_t id) const { return id == eos_ || (eot_ >= 0 && id == eot_); }
  bool adds_space_prefix() const { return add_space_prefix_; }

  // Raw vocabulary text (with "▁" for spaces, "<0x0A>" for byte tokens, ...).
  std::string_view piece(int32_t id) const { return pieces_.at(id); }
  TokenType type(int32_t id) const { return types_.at(id); }
  // The byte a TokenType::Byte token stands for.
  uint8_t byte_value(int32_t id) const;

 private:
  Tokenizer() = default;

  // Vocab id of `text` if encoding may produce it (normal and user-defined
  // pieces only), else -1.
  int32_t find_piece(std::string_view text) const;
  // Appends the ids of `escaped` (spaces already written as "▁", not empty).
  void append_merged(std::string_view escaped, std::vector<int32_t>& out) const;
  // Appends the ids for one fully merged symbol: its own id, or else one byte
  // token per byte (unk when the vocab has no such byte token).
  void append_symbol(std::string_view text, std::vector<int32_t>& out) const;

  struct TextHash {
    using is_transparent = void;  // lets find() take a string_view without a copy
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> piece_ids_;
  std::array<int32_t, 256> byte_ids_{};  // -1 when the vocab has no <0xNN> token
  int32_t bos_ = 1;
  int32_t eos_ = 2;
  int32_t eot_ = -1;  // -1: none
  int32_t unk_ = 0;
  bool add_bos_ = true;
  bool add_eos_ = false;
  bool add_space_prefix_ = true;
};

// Streams token ids back to text. Byte tokens are gathered until they form
// complete UTF-8 characters, so push() only ever returns valid UTF-8; "▁"
// becomes a space; control and unused tokens produce nothing. When the vocab
// adds a space prefix while encoding, the leading space of the first text
// piece is dropped, as SentencePiece's decoder does.
class Detokenizer {
 public:
  explicit Detokenizer(const Tokenizer& tok) : tok_(tok) {}

  // Text that is complete so far (may be empty).
  std::string push(int32_t id);
  // Whatever remains; bytes that never completed a character become U+FFFD.
  std::string flush();

 private:
  const Tokenizer& tok_;
  std::string pending_;  // bytes not yet returned: an incomplete UTF-8 tail
  bool seen_text_ = false;
};

}  // namespace kiln
