#include "engine/grammar/grammar_builder.hpp"

#include <utility>

#include "engine/error/error.hpp"

namespace kiln::grammar {

void throw_at(TextLocation where, const std::string& what) {
  throw Error("grammar line " + std::to_string(where.line) + ", column " + std::to_string(where.column) + ": " + what);
}

uint32_t GrammarBuilder::add_rule(std::string name, TextLocation where) {
  if (rules_.size() >= limits_.max_rules)
    throw_at(where, "more than " + std::to_string(limits_.max_rules) + " rules (groups and repetitions count)");
  rules_.push_back(Rule{std::move(name), {}, false, where});
  return static_cast<uint32_t>(rules_.size() - 1);
}

uint32_t GrammarBuilder::rule(std::string_view name, TextLocation where) {
  const auto it = by_name_.find(std::string(name));
  if (it != by_name_.end()) return it->second;
  const uint32_t id = add_rule(std::string(name), where);
  by_name_.emplace(std::string(name), id);
  return id;
}

void GrammarBuilder::count_elements(size_t n, TextLocation where) {
  n_elements_ += n;
  if (n_elements_ > limits_.max_elements)
    throw_at(where, "the grammar expands to more than " + std::to_string(limits_.max_elements) + " elements");
}

void GrammarBuilder::define(uint32_t rule, std::vector<Sequence> alternatives, TextLocation where) {
  Rule& r = rules_[rule];
  if (r.defined) throw_at(where, "rule '" + r.name + "' is defined twice");
  for (const Sequence& s : alternatives) count_elements(s.size() + 1, where);
  r.alternatives = std::move(alternatives);
  r.defined = true;
}

uint32_t GrammarBuilder::add_generated(uint32_t parent, std::vector<Sequence> alternatives, TextLocation where) {
  const uint32_t id = add_rule(rules_[parent].name + "-" + std::to_string(rules_.size()), where);
  define(id, std::move(alternatives), where);
  return id;
}

uint32_t GrammarBuilder::add_class(const CharClass& c) {
  std::vector<std::pair<uint32_t, uint32_t>> key;
  for (const CodepointRange& r : c.ranges()) key.emplace_back(r.lo, r.hi);
  const auto [it, added] = class_ids_.emplace(std::move(key), static_cast<uint32_t>(classes_.size()));
  if (added) classes_.push_back(c);
  return it->second;
}

// x{min,max}: min copies of x, then either x* or a chain of max - min
// optional copies, each nested in the one before (x (x (x)?)?)? so that
// no count is matched in two ways.
void GrammarBuilder::repeat(Element x, uint32_t min, uint32_t max, uint32_t parent, TextLocation where, Sequence& out) {
  if (min > limits_.max_repetition || (max != kUnbounded && max > limits_.max_repetition))
    throw_at(where, "a repetition count above " + std::to_string(limits_.max_repetition));
  if (max < min) throw_at(where, "a repetition {m,n} with n < m");
  count_elements(min, where);
  out.insert(out.end(), min, x);
  if (max == kUnbounded) {
    const uint32_t star = add_rule(rules_[parent].name + "-" + std::to_string(rules_.size()), where);
    define(star, {{x, Element{ElementKind::Rule, star}}, {}}, where);
    out.push_back(Element{ElementKind::Rule, star});
    return;
  }
  if (max == min) return;
  uint32_t optional = add_generated(parent, {{x}, {}}, where);
  for (uint32_t i = min + 1; i < max; ++i)
    optional = add_generated(parent, {{x, Element{ElementKind::Rule, optional}}, {}}, where);
  out.push_back(Element{ElementKind::Rule, optional});
}

// A rule is left-recursive when it can reach itself through the first
// elements of its alternatives, past elements that can match nothing.
// The matcher expands rules before reading, so such a rule would never
// stop expanding.
void GrammarBuilder::check_left_recursion() const {
  const size_t n = rules_.size();
  std::vector<char> nullable(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (const Sequence& s : rules_[r].alternatives) {
        bool all = true;
        for (const Element& e : s) all = all && e.kind == ElementKind::Rule && nullable[e.index];
        if (all) {
          nullable[r] = 1;
          changed = true;
          break;
        }
      }
    }
  }
  // Iterative depth-first search for a cycle (a recursive one could
  // overflow the stack on a long chain of rules).
  std::vector<std::vector<uint32_t>> leading(n);
  for (size_t r = 0; r < n; ++r) {
    for (const Sequence& s : rules_[r].alternatives) {
      for (const Element& e : s) {
        if (e.kind != ElementKind::Rule) break;
        leading[r].push_back(e.index);
        if (!nullable[e.index]) break;
      }
    }
  }
  enum : char { Unseen, Open, Closed };
  std::vector<char> mark(n, Unseen);
  std::vector<std::pair<uint32_t, size_t>> path;  // rule, next edge to follow
  for (uint32_t start = 0; start < n; ++start) {
    if (mark[start] != Unseen) continue;
    mark[start] = Open;
    path.emplace_back(start, 0);
    while (!path.empty()) {
      auto& [r, edge] = path.back();
      if (edge == leading[r].size()) {
        mark[r] = Closed;
        path.pop_back();
        continue;
      }
      const uint32_t next = leading[r][edge++];
      if (mark[next] == Open) {
        throw Error("grammar: rule '" + rules_[next].name +
                    "' is left-recursive (it can reach itself before reading a character)");
      }
      if (mark[next] == Unseen) {
        mark[next] = Open;
        path.emplace_back(next, 0);
      }
    }
  }
}

std::shared_ptr<const Grammar> GrammarBuilder::finish() {
  for (const Rule& r : rules_) {
    if (!r.defined) throw_at(r.first_mention, "undefined rule '" + r.name + "'");
  }
  const auto root = by_name_.find("root");
  if (root == by_name_.end()) throw Error("grammar: no 'root' rule");
  check_left_recursion();

  auto g = std::make_shared<Grammar>();
  g->root = root->second;
  g->classes = std::move(classes_);
  g->elements.reserve(n_elements_);
  for (Rule& r : rules_) {
    std::vector<uint32_t> starts;
    for (const Sequence& s : r.alternatives) {
      starts.push_back(static_cast<uint32_t>(g->elements.size()));
      g->elements.insert(g->elements.end(), s.begin(), s.end());
      g->elements.push_back(Element{ElementKind::End, 0});
    }
    g->alternatives.push_back(std::move(starts));
    g->rule_names.push_back(std::move(r.name));
  }
  return g;
}

}  // namespace kiln::grammar
