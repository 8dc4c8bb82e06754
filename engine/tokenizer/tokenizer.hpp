// Text <-> token ids for the vocabularies GGUF files carry: SentencePiece
// (`tokenizer.ggml.model = "llama"`) and byte-level BPE (`"gpt2"`), and a
// streaming decoder that turns generated ids back into valid UTF-8 text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/tokenizer_bpe.hpp"
#include "engine/tokenizer/token_texts.hpp"
#include "engine/tokenizer/tokenizer_special.hpp"
#include "engine/tokenizer/tokenizer_spm.hpp"
#include "engine/tokenizer/tokenizer_types.hpp"

namespace kiln {

class Tokenizer {
 public:
  // Reads the tokenizer.ggml.* metadata. Throws kiln::Error naming the key
  // when the model kind or the BPE pre-tokenizer (tokenizer.ggml.pre) is one
  // kiln does not know, when arrays are missing or disagree in length, when
  // a special id is out of range, or when BPE merges name unknown tokens.
  static Tokenizer from_gguf(const GgufFile& f);

  // add_special: prepend BOS / append EOS as the vocab asks (add_bos_token,
  // add_eos_token). parse_special: control tokens spelled out in `text`
  // ("<|im_start|>") become those tokens; otherwise they are plain text.
  // User-defined tokens are matched either way.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special = false) const;
  // encode() with parse_special, but a control token is read only where
  // `may_be_special` allows (chat prompts: not inside user content).
  // `continues`: the text goes on from earlier text, so SentencePiece adds no
  // space prefix at its start.
  std::vector<int32_t> encode(std::string_view text, bool add_special, const SpecialFilter& may_be_special,
                              bool continues = false) const;

  // The two encode()s, giving up (nullopt) as soon as the text is known to
  // need more than `max_tokens` tokens: before reading it when its length
  // alone proves it (more than max_tokens * max_token_bytes() bytes), else
  // once the tokens of its start pass the limit, so a text far too long for
  // a context costs next to nothing and one a little too long no more than
  // what fits.
  std::optional<std::vector<int32_t>> encode_at_most(size_t max_tokens, std::string_view text, bool add_special,
                                                     bool parse_special) const;
  std::optional<std::vector<int32_t>> encode_at_most(size_t max_tokens, std::string_view text, bool add_special,
                                                     const SpecialFilter& may_be_special, bool continues = false) const;
  // The most bytes of the encoded text one token can cover, so that a text
  // of n bytes needs at least n / max_token_bytes() tokens. Merging forms
  // only normal pieces of the vocabulary, each covering the bytes it decodes
  // to (SentencePiece's added space prefix is not even in the text); a
  // spelled-out special or user-defined token covers its piece; what no piece
  // covers becomes one byte token (or unk) per byte.
  size_t max_token_bytes() const { return max_token_bytes_; }
  // The longest text that may encode to max_tokens tokens or fewer (any
  // longer one needs more): max_tokens * max_token_bytes(), or SIZE_MAX.
  size_t max_text_bytes(size_t max_tokens) const;

  int n_vocab() const { return static_cast<int>(pieces_.size()); }
  int32_t bos() const { return bos_; }  // -1: the vocab has none
  int32_t eos() const { return eos_; }  // -1: the vocab has none
  bool adds_bos() const { return add_bos_; }  // encode(add_special) starts with BOS
  // EOS, EOT and the other tokens llama.cpp stops generating at.
  bool is_end_of_generation(int32_t id) const;
  // SentencePiece's leading space: added when encoding, dropped when decoding.
  bool adds_space_prefix() const { return add_space_prefix_; }

  // Raw vocabulary text ("▁Hello" or "ĠHello", "<0x0A>", "<|eot_id|>", ...).
  std::string_view piece(int32_t id) const { return pieces_.at(id); }
  TokenType type(int32_t id) const { return types_.at(id); }
  // The bytes a token stands for in decoded text: empty for control and
  // unused tokens, " ⁇ " for unknown ones (SentencePiece's surface).
  std::string_view text(int32_t id) const { return texts_.at(id); }

 private:
  using Model = std::variant<SpmModel, BpeModel>;

  Tokenizer(Model model, TokenTexts pieces, std::vector<TokenType> types);
  // Reads what both kinds of vocab read alike, once the kind-specific
  // defaults are set.
  void finish_loading(const GgufFile& f);
  // nullopt as soon as the fragments are known to need more than max_tokens tokens.
  std::optional<std::vector<int32_t>> encode_fragments(const std::vector<TextFragment>& fragments, bool add_special,
                                                       bool continues, size_t max_tokens) const;
  // Appends the ids of plain text (not empty); after_special: it starts the
  // input or follows a token spelled out in it. May stop once `out` holds
  // more than max_tokens ids (all of them final).
  void encode_text(std::string_view text, bool after_special, size_t max_tokens, std::vector<int32_t>& out) const;

  Model model_;
  TokenTexts pieces_;
  std::vector<TokenType> types_;
  TokenTexts texts_;
  SpecialTokens special_tokens_;
  std::vector<int32_t> end_of_generation_;  // sorted
  int32_t bos_ = -1;
  int32_t eos_ = -1;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_space_prefix_ = false;
  size_t max_token_bytes_ = 1;
};

// Streams token ids back to text. Bytes are gathered until they form
// complete UTF-8 characters, so push() only ever returns valid UTF-8. When
// the vocab adds a space prefix while encoding, the leading space of the
// first text piece is dropped, as SentencePiece's decoder does.
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
