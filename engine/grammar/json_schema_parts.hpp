// The pieces of JSON schema -> GBNF that do not need the schema's
// structure: GBNF spellings of literals and character sets, JSON string
// contents (lengths, formats, regex patterns) and number ranges. Each
// returns a GBNF expression (parenthesized where it has alternatives).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/grammar/char_class.hpp"

namespace kiln::grammar::schema {

// Rules every converted grammar may name (ws, char, string, number, value...).
std::string common_rules();

// A GBNF string literal with these bytes (UTF-8 kept as is).
std::string literal(std::string_view bytes);
// A GBNF character class of exactly these code points ("" for none).
std::string char_class(const CharClass& c);
// The JSON spellings (inside a string) of one character of the set: the
// character itself where JSON allows it bare, else its escape.
std::string json_chars(const CharClass& c);

// The contents of a JSON string (no quotes) that matches the regex `pattern`
// (JSON Schema's: ECMA-262, unanchored unless ^...$). Throws kiln::Error
// naming a construct outside the supported subset.
std::string pattern_contents(std::string_view pattern);
// A whole JSON string (with quotes) of the format, or nullopt for a format
// not supported.
std::optional<std::string> format_string(std::string_view format);

// Decimal integers from lo to hi (either may be absent).
std::string integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi);
// Decimal numbers (fractions allowed, no exponent) from lo to hi.
std::string number_range(std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace kiln::grammar::schema
