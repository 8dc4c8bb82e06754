#include "engine/tokenizer/unicode_category.hpp"

#include <algorithm>

namespace kiln {

namespace {
constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kWhitespaceBit = 8;
constexpr uint32_t kCategoryMask = 7;
}  // namespace

CharClass char_class(char32_t cp) {
  if (cp > kMaxCodePoint) return {CharCategory::Other, false};
  const std::span<const uint32_t> ranges = detail::kUnicodeClassRanges;
  // The last entry whose first code point is <= cp (entry 0 starts at U+0000).
  const uint32_t key = (static_cast<uint32_t>(cp) << 4) | 0xF;
  const uint32_t entry = *(std::upper_bound(ranges.begin(), ranges.end(), key) - 1);
  return {static_cast<CharCategory>(entry & kCategoryMask), (entry & kWhitespaceBit) != 0};
}

}  // namespace kiln
