// Assembles a Grammar from rules as the GBNF parser reads them: named and
// generated rules (groups, repetitions), character classes, and the checks
// that need the whole grammar (undefined rules, `root`, left recursion).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.hpp"

namespace kiln::grammar {

struct TextLocation {
  int line = 1;
  int column = 1;
};

// "grammar line L, column C: what"
[[noreturn]] void throw_at(TextLocation where, const std::string& what);

class GrammarBuilder {
 public:
  using Sequence = std::vector<Element>;
  static constexpr uint32_t kUnbounded = UINT32_MAX;

  explicit GrammarBuilder(const GrammarLimits& limits) : limits_(limits) {}

  // The named rule, made (undefined) at its first mention.
  uint32_t rule(std::string_view name, TextLocation where);
  void define(uint32_t rule, std::vector<Sequence> alternatives, TextLocation where);
  // A rule for a group or a repetition, named after the rule it is part of.
  uint32_t add_generated(uint32_t parent, std::vector<Sequence> alternatives, TextLocation where);
  uint32_t add_class(const CharClass& c);
  // Appends `x` repeated between min and max times (max may be kUnbounded).
  void repeat(Element x, uint32_t min, uint32_t max, uint32_t parent, TextLocation where, Sequence& out);

  // Throws kiln::Error for an undefined rule, a missing `root` or a rule
  // that can reach itself without reading a character.
  std::shared_ptr<const Grammar> finish();

 private:
  struct Rule {
    std::string name;
    std::vector<Sequence> alternatives;
    bool defined = false;
    TextLocation first_mention;
  };
  uint32_t add_rule(std::string name, TextLocation where);
  void count_elements(size_t n, TextLocation where);
  void check_left_recursion() const;

  GrammarLimits limits_;
  std::vector<Rule> rules_;
  std::unordered_map<std::string, uint32_t> by_name_;
  std::vector<CharClass> classes_;
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, uint32_t> class_ids_;
  size_t n_elements_ = 0;
};

}  // namespace kiln::grammar
