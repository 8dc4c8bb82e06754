#include "engine/tokenizer/tokenizer_byte_level.hpp"

#include <array>
#include <optional>

#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln {

namespace {

constexpr bool stands_for_itself(int byte) {
  return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

constexpr std::array<char32_t, 256> kCodePoints = [] {
  std::array<char32_t, 256> table{};
  char32_t next = 0x100;
  for (int byte = 0; byte < 256; ++byte) table[byte] = stands_for_itself(byte) ? byte : next++;
  return table;
}();

// Every code point of the alphabet is below U+0144.
constexpr char32_t kAlphabetEnd = 0x144;

constexpr std::array<int16_t, kAlphabetEnd> kBytes = [] {
  std::array<int16_t, kAlphabetEnd> table{};
  table.fill(-1);
  for (int byte = 0; byte < 256; ++byte) table[kCodePoints[byte]] = static_cast<int16_t>(byte);
  return table;
}();

std::optional<uint8_t> byte_of(char32_t cp) {
  if (cp >= kAlphabetEnd || kBytes[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(kBytes[cp]);
}

}  // namespace

char32_t byte_level_code_point(uint8_t byte) { return kCodePoints[byte]; }

std::string encode_byte_level(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size() * 2);
  for (char c : bytes) append_utf8(kCodePoints[static_cast<uint8_t>(c)], text);
  return text;
}

std::string decode_byte_level(std::string_view text) {
  std::string bytes;
  bytes.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Unit unit = next_utf8_unit(text.substr(pos));
    const std::optional<uint8_t> byte = unit.status == Utf8Status::Complete ? byte_of(unit.code_point) : std::nullopt;
    if (byte) {
      bytes += static_cast<char>(*byte);
    } else {
      bytes.append(text, pos, unit.length);
    }
    pos += unit.length;
  }
  return bytes;
}

}  // namespace kiln
