#include "engine/tokenizer/unicode_utf8.hpp"

#include <cstdint>

namespace kiln {

Utf8Unit next_utf8_unit(std::string_view s) {
  const auto lead = static_cast<uint8_t>(s[0]);
  if (lead < 0x80) return {Utf8Status::Complete, 1, lead};
  // The allowed range of the second byte is narrowed for a few lead bytes to
  // rule out overlong forms, UTF-16 surrogates and code points past U+10FFFF.
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    cp = lead & 0x0F;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    cp = lead & 0x07;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return {Utf8Status::Invalid, 1, kReplacementChar};
  }
  for (size_t i = 1; i < length; ++i) {
    if (i == s.size()) return {Utf8Status::Truncated, i, kReplacementChar};
    const auto byte = static_cast<uint8_t>(s[i]);
    if (byte < low || byte > high) return {Utf8Status::Invalid, i, kReplacementChar};
    cp = (cp << 6) | (byte & 0x3F);
    low = 0x80;
    high = 0xBF;
  }
  return {Utf8Status::Complete, length, cp};
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace kiln
