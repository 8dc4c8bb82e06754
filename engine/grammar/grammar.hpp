// A compiled grammar: every rule's alternatives as sequences of elements in
// one array, the form the matcher walks. Built from GBNF text
// (parse_gbnf), the grammar language of llama.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/char_class.hpp"

namespace kiln::grammar {

enum class ElementKind : uint8_t {
  Char,  // one character of classes[index]
  Rule,  // the rule `index`
  End,   // the end of an alternative
};

struct Element {
  ElementKind kind;
  uint32_t index;
};

struct Grammar {
  // Each alternative's elements followed by an End; a position is an index here.
  std::vector<Element> elements;
  // Per rule, the position of each of its alternatives' first element.
  std::vector<std::vector<uint32_t>> alternatives;
  std::vector<std::string> rule_names;
  std::vector<CharClass> classes;
  uint32_t root = 0;
};

// Limits against hostile grammars (a request's grammar is the client's text).
struct GrammarLimits {
  size_t max_elements = 1 << 20;  // after repetitions are expanded
  size_t max_rules = 1 << 16;     // the grammar's and those groups and repetitions make
  int max_nesting = 64;           // parentheses inside parentheses
  uint32_t max_repetition = 1 << 16;  // m and n of {m,n}
};

// Parses GBNF: `name ::= alternatives` rules, `|`, sequences, `( )`, `*`,
// `+`, `?`, `{m}`, `{m,}`, `{m,n}`, "literals", [classes] with ranges and
// `^`, `.`, escapes \x.. \u.... \U........ \t \n \r \\ \" \[ \] \-, `#`
// comments, and a rule named `root` where matching starts. Throws
// kiln::Error with one line naming the line and column of the fault, or
// the rule that is undefined or left-recursive.
std::shared_ptr<const Grammar> parse_gbnf(std::string_view text, const GrammarLimits& limits = {});

}  // namespace kiln::grammar
