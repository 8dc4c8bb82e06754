#include "engine/grammar/char_class.hpp"

#include <algorithm>

namespace kiln::grammar {

namespace {

constexpr uint32_t kSurrogateLo = 0xD800;
constexpr uint32_t kSurrogateHi = 0xDFFF;

// The smallest code point that needs `length` bytes (shorter forms are overlong).
uint32_t min_codepoint(uint32_t length) {
  switch (length) {
    case 2: return 0x80;
    case 3: return 0x800;
    case 4: return 0x10000;
    default: return 0;
  }
}

}  // namespace

CharClass::CharClass(std::vector<CodepointRange> ranges, bool negated) {
  for (CodepointRange& r : ranges) {
    r.lo = std::min(r.lo, kMaxCodepoint);
    r.hi = std::min(r.hi, kMaxCodepoint);
  }
  std::sort(ranges.begin(), ranges.end(), [](CodepointRange a, CodepointRange b) { return a.lo < b.lo; });
  std::vector<CodepointRange> merged;
  for (const CodepointRange& r : ranges) {
    if (r.lo > r.hi) continue;
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  if (!negated) {
    ranges_ = std::move(merged);
    return;
  }
  uint32_t next = 0;  // the first code point not yet known to be outside the class
  for (const CodepointRange& r : merged) {
    if (r.lo > next) ranges_.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) ranges_.push_back({next, kMaxCodepoint});
}

bool CharClass::contains(uint32_t cp) const { return intersects(cp, cp); }

bool CharClass::covers(uint32_t lo, uint32_t hi) const {
  const auto it =
      std::lower_bound(ranges_.begin(), ranges_.end(), lo, [](CodepointRange r, uint32_t v) { return r.hi < v; });
  return it != ranges_.end() && it->lo <= lo && it->hi >= hi;
}

bool CharClass::intersects(uint32_t lo, uint32_t hi) const {
  // The first range that ends at or after lo.
  const auto it =
      std::lower_bound(ranges_.begin(), ranges_.end(), lo, [](CodepointRange r, uint32_t v) { return r.hi < v; });
  return it != ranges_.end() && it->lo <= hi;
}

Utf8Partial::Step Utf8Partial::feed(uint8_t byte, Utf8Partial& next, uint32_t& codepoint) const {
  if (empty()) {
    if (byte < 0x80) {
      codepoint = byte;
      return Step::Complete;
    }
    if (byte >= 0xC2 && byte <= 0xDF) next = make(byte & 0x1F, 1, 2);
    else if (byte >= 0xE0 && byte <= 0xEF) next = make(byte & 0x0F, 2, 3);
    else if (byte >= 0xF0 && byte <= 0xF4) next = make(byte & 0x07, 3, 4);
    else return Step::Invalid;
    return Step::Incomplete;
  }
  if ((byte & 0xC0) != 0x80) return Step::Invalid;
  if (forgotten()) {
    if (remaining() > 1) {
      next = Utf8Partial(kForgotten | (remaining() - 1) << 24);
      return Step::Incomplete;
    }
    codepoint = kAnyCodepoint;
    return Step::Complete;
  }
  const uint32_t v = value() << 6 | (byte & 0x3F);
  if (remaining() > 1) {
    next = make(v, remaining() - 1, length());
    // An overlong or out-of-range start fails here rather than at the last byte.
    return next.intersects([](uint32_t, uint32_t) { return true; }) ? Step::Incomplete : Step::Invalid;
  }
  if (v < min_codepoint(length()) || v > kMaxCodepoint || (v >= kSurrogateLo && v <= kSurrogateHi))
    return Step::Invalid;
  codepoint = v;
  return Step::Complete;
}

bool Utf8Partial::may_complete_in(const CharClass& c) const {
  if (forgotten()) return true;  // every way on was in the class
  return intersects([&c](uint32_t lo, uint32_t hi) { return c.intersects(lo, hi); });
}

Utf8Partial Utf8Partial::forget_start_in(const CharClass& c) const {
  if (forgotten()) return *this;
  const uint32_t shift = 6 * remaining();
  const uint32_t lo = value() << shift;
  const uint32_t hi = ((value() + 1) << shift) - 1;
  const bool all_valid = lo >= min_codepoint(length()) && hi <= kMaxCodepoint && (hi < kSurrogateLo || lo > kSurrogateHi);
  return all_valid && c.covers(lo, hi) ? Utf8Partial(kForgotten | remaining() << 24) : *this;
}

template <class Test>
bool Utf8Partial::intersects(Test test) const {
  const uint32_t shift = 6 * remaining();
  const uint32_t lo = std::max(value() << shift, min_codepoint(length()));
  const uint32_t hi = std::min(((value() + 1) << shift) - 1, kMaxCodepoint);
  if (lo > hi) return false;
  // Surrogates are not characters: look on either side of them.
  if (lo < kSurrogateLo && test(lo, std::min(hi, kSurrogateLo - 1))) return true;
  return hi > kSurrogateHi && test(std::max(lo, kSurrogateHi + 1), hi);
}

}  // namespace kiln::grammar
