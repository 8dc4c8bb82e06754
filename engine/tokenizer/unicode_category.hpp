// What the pre-tokenizer regexes ask of a code point: its general category
// group (\p{L}, \p{N}, \p{P}, ...) and whether it is white space (\s).
#pragma once

#include <cstdint>
#include <span>

namespace kiln {

// The first letter of a Unicode general category (L, M, N, P, S, Z, C).
enum class CharCategory : uint8_t { Letter, Mark, Number, Punctuation, Symbol, Separator, Other };

struct CharClass {
  CharCategory category;
  bool whitespace;  // Unicode's White_Space property, which regex \s matches
};

// Code points past U+10FFFF are Other.
CharClass char_class(char32_t cp);

namespace detail {
// The generated table (unicode_category_table.cpp), sorted: entry k reads
// (first code point << 4) | (whitespace ? 8 : 0) | CharCategory, and holds
// for every code point up to the next entry's first.
extern const std::span<const uint32_t> kUnicodeClassRanges;
}  // namespace detail

}  // namespace kiln
