// Tokens spelled out in the text being encoded. User-defined tokens (added
// tokens such as Qwen's "<think>") are always taken as whole tokens, before
// any merging, as Hugging Face and llama.cpp do; control tokens
// ("<|eot_id|>") only when the caller asks, so that user text cannot forge
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/token_texts.hpp"
#include "engine/tokenizer/tokenizer_types.hpp"

namespace kiln {

// A stretch of the text: a token it spells out, or plain text to encode.
struct TextFragment {
  int32_t token;          // -1: plain text
  std::string_view text;  // the text of the stretch either way
};

// Whether a control token may be read from the bytes [begin, end) of the text
// being encoded (a chat prompt allows it only in the template's own text).
using SpecialFilter = std::function<bool(size_t begin, size_t end)>;

class SpecialTokens {
 public:
  SpecialTokens(const TokenTexts& pieces, const std::vector<TokenType>& types);

  // `text` cut at the tokens it spells out (control and unknown tokens too
  // when parse_special). As in llama.cpp, longer tokens are found first,
  // everywhere in the text, then shorter ones in what remains. With
  // `may_be_special`, a control token is taken only where it allows.
  std::vector<TextFragment> split(std::string_view text, bool parse_special,
                                  const SpecialFilter& may_be_special = nullptr) const;

 private:
  struct Entry {
    std::string text;
    int32_t id;
    bool always;  // user-defined: matched even without parse_special
  };
  std::vector<Entry> entries_;  // longest text first
};

}  // namespace kiln
