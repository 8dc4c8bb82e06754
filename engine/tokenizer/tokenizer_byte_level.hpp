// GPT-2's byte-level alphabet, in which byte-level BPE vocabularies are
// written: each of the 256 byte values is one printable code point (the
// printable Latin-1 bytes stand for themselves, the others are mapped to
// U+0100 onwards in byte order), so that any byte string is printable text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

char32_t byte_level_code_point(uint8_t byte);

// The byte-level text of raw bytes ("Ġhello" for " hello").
std::string encode_byte_level(std::string_view bytes);

// The bytes a byte-level text stands for. A code point outside the alphabet
// (only hand-added tokens have them) stands for its own UTF-8 bytes.
std::string decode_byte_level(std::string_view text);

}  // namespace kiln
