// GBNF spellings of literals, character classes and JSON string characters,
// the rules every converted schema shares, and the string formats.
#include <cstdio>
#include <vector>

#include "engine/grammar/json_schema_parts.hpp"

namespace kiln::grammar::schema {

namespace {

// A code point as it may stand in a GBNF literal or class: printable ASCII
// bare (except the characters that mean something there), the rest escaped.
std::string spell(uint32_t cp, std::string_view specials) {
  if (cp >= 0x20 && cp < 0x7F && specials.find(static_cast<char>(cp)) == std::string_view::npos) {
    return std::string(1, static_cast<char>(cp));
  }
  char buffer[16];
  if (cp < 0x100) std::snprintf(buffer, sizeof buffer, "\\x%02X", static_cast<unsigned>(cp));
  else if (cp < 0x10000) std::snprintf(buffer, sizeof buffer, "\\u%04X", static_cast<unsigned>(cp));
  else std::snprintf(buffer, sizeof buffer, "\\U%08X", static_cast<unsigned>(cp));
  return buffer;
}

// The JSON escape of a character that cannot stand bare in a string.
std::string json_escape(uint32_t cp) {
  switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04X", static_cast<unsigned>(cp));
      return buffer;
    }
  }
}

}  // namespace

std::string literal(std::string_view bytes) {
  std::string out = "\"";
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += b >= 0x80 ? std::string(1, c) : spell(b, "\"\\");
  }
  return out + "\"";
}

std::string char_class(const CharClass& c) {
  if (c.ranges().empty()) return "";
  std::string out = "[";
  for (const CodepointRange& r : c.ranges()) {
    out += spell(r.lo, "]\\-^\"[");
    if (r.hi == r.lo) continue;
    out += '-';
    out += spell(r.hi, "]\\-^\"[");
  }
  return out + "]";
}

std::string json_chars(const CharClass& c) {
  std::vector<std::string> alternatives;
  // The characters JSON allows bare: all but '"', '\' and the controls.
  static const CodepointRange kBare[] = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodepoint}};
  std::vector<CodepointRange> bare;
  for (const CodepointRange& r : c.ranges()) {
    for (const CodepointRange cut : kBare) {
      if (r.lo <= cut.hi && cut.lo <= r.hi) bare.push_back({std::max(r.lo, cut.lo), std::min(r.hi, cut.hi)});
    }
  }
  if (!bare.empty()) alternatives.push_back(char_class(CharClass(bare, false)));
  for (const uint32_t cp : {uint32_t{'"'}, uint32_t{'\\'}}) {
    if (c.contains(cp)) alternatives.push_back(literal(json_escape(cp)));
  }
  for (uint32_t cp = 0; cp < 0x20; ++cp) {
    if (c.contains(cp)) alternatives.push_back(literal(json_escape(cp)));
  }
  if (alternatives.empty()) return "[]";  // no character: nothing matches
  if (alternatives.size() == 1) return alternatives[0];
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : "") + alternatives[i];
  return out + ")";
}

std::string common_rules() {
  // Whitespace: one space, or a line break and up to 16 spaces of indent,
  // so that a model cannot spend its tokens on blank space. \u escapes: any
  // but the surrogates, which only pairs could make valid (and which would
  // make a length count two where one character is).
  return R"(ws ::= (" " | "\n" " "{0,16})?
char ::= [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" ([0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}))
string ::= "\"" char* "\""
integer ::= "-"? ("0" | [1-9] [0-9]*)
number ::= integer ("." [0-9]+)? ([eE] [+-]? [0-9]+)?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws (string ws ":" ws value ws ("," ws string ws ":" ws value ws)*)? "}"
array ::= "[" ws (value ws ("," ws value ws)*)? "]"
)";
}

std::optional<std::string> format_string(std::string_view format) {
  // Days by month; 29 February is left out, as it is valid only in leap years.
  const std::string date = R"([0-9]{4} "-" (("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02-" ("0" [1-9] | "1" [0-9] | "2" [0-8])))";
  const std::string time =
      R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))";
  const std::string hex = "[0-9a-fA-F]";
  if (format == "date") return "\"\\\"\" " + date + " \"\\\"\"";
  if (format == "time") return "\"\\\"\" " + time + " \"\\\"\"";
  if (format == "date-time") return "\"\\\"\" " + date + " \"T\" " + time + " \"\\\"\"";
  if (format == "uuid") {
    return "\"\\\"\" " + hex + "{8} \"-\" " + hex + "{4} \"-\" " + hex + "{4} \"-\" " + hex + "{4} \"-\" " + hex +
           "{12} \"\\\"\"";
  }
  return std::nullopt;
}

}  // namespace kiln::grammar::schema
