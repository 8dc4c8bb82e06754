// UTF-8 decoding that never fails (invalid input is classified, following
// Unicode's rules for replacing it with U+FFFD), and encoding.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

inline constexpr char32_t kReplacementChar = 0xFFFD;

enum class Utf8Status { Complete, Invalid, Truncated };

struct Utf8Unit {
  Utf8Status status;
  size_t length;          // bytes
  char32_t code_point;    // the character when Complete, else U+FFFD
};

// Classifies the bytes at the start of `s` (not empty):
//   Complete:  a valid character of `length` bytes;
//   Invalid:   `length` bytes that cannot start a valid character (Unicode's
//              "maximal subpart", which becomes one U+FFFD);
//   Truncated: all of `s` is the valid beginning of an unfinished character.
Utf8Unit next_utf8_unit(std::string_view s);

// Appends the UTF-8 form of `cp` (at most U+10FFFF, not a surrogate).
void append_utf8(char32_t cp, std::string& out);

}  // namespace kiln
