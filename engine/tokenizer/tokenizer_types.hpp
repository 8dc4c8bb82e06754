// Token kinds, with the numeric values GGUF's tokenizer.ggml.token_type uses.
#pragma once

#include <cstdint>

namespace kiln {

enum class TokenType : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,      // BOS, EOS, chat markers: never produced from plain text
  UserDefined = 4,  // added tokens, matched as whole strings before merging
  Unused = 5,
  Byte = 6,         // "<0xNN>": one raw byte, used when text has no vocab piece
};

}  // namespace kiln
