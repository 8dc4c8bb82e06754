// A set of Unicode code points (a GBNF character class, a literal's
// character, `.`) and the incremental UTF-8 decoding the matcher uses to
// test a class one byte at a time: a token may end in the middle of a
// character, and the grammar must already know whether that character can
// still be one the class accepts.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::grammar {

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

struct CodepointRange {
  uint32_t lo;
  uint32_t hi;  // inclusive
};

class CharClass {
 public:
  // The ranges in any order, overlapping or not; `negated`: every code point
  // outside them. Out-of-range bounds are clamped to kMaxCodepoint.
  CharClass(std::vector<CodepointRange> ranges, bool negated);

  bool contains(uint32_t cp) const;
  // Whether some code point in [lo, hi] is in the class.
  bool intersects(uint32_t lo, uint32_t hi) const;
  // Whether all of them are.
  bool covers(uint32_t lo, uint32_t hi) const;
  // Sorted, disjoint, not adjacent.
  const std::vector<CodepointRange>& ranges() const { return ranges_; }

 private:
  std::vector<CodepointRange> ranges_;
};

// A UTF-8 character being read: nothing (0), or the bits of its first bytes
// with how many bytes are still to come. Packed in 32 bits so that a stack
// frame stays small.
class Utf8Partial {
 public:
  Utf8Partial() = default;
  static Utf8Partial from_bits(uint32_t bits) { return Utf8Partial(bits); }
  uint32_t bits() const { return bits_; }
  bool empty() const { return bits_ == 0; }

  enum class Step { Invalid, Incomplete, Complete };
  // Reads one byte. Complete: `codepoint` is set (overlong forms, surrogates
  // and values past U+10FFFF are Invalid), kAnyCodepoint after a forgotten
  // start; Incomplete: `next` is the state.
  Step feed(uint8_t byte, Utf8Partial& next, uint32_t& codepoint) const;
  // Whether a character that starts with these bytes can still be in `c`.
  bool may_complete_in(const CharClass& c) const;
  // Where every way these bytes can go on ends in a character of `c`, the
  // bytes so far no longer matter: the same state stands for all of them
  // (only the count still to come), which keeps a class like "anything but
  // a quote" from making a state per partial character.
  Utf8Partial forget_start_in(const CharClass& c) const;
  static constexpr uint32_t kAnyCodepoint = UINT32_MAX;

 private:
  explicit Utf8Partial(uint32_t bits) : bits_(bits) {}
  static Utf8Partial make(uint32_t value, uint32_t remaining, uint32_t length) {
    return Utf8Partial(value | remaining << 24 | length << 28);
  }
  uint32_t value() const { return bits_ & 0x1FFFFF; }
  uint32_t remaining() const { return (bits_ >> 24) & 0xF; }
  uint32_t length() const { return bits_ >> 28; }
  bool forgotten() const { return bits_ & kForgotten; }
  static constexpr uint32_t kForgotten = 1u << 23;
  // Whether test(lo, hi) holds for a range of the characters these bytes
  // can still become (overlong forms and surrogates left out).
  template <class Test>
  bool intersects(Test test) const;

  uint32_t bits_ = 0;
};

}  // namespace kiln::grammar
