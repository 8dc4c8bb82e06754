// Matches text against a grammar one byte at a time: the state of a parse
// in progress, what it may read next, and whether it may end.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.hpp"
#include "engine/grammar/parse_stacks.hpp"

namespace kiln::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> g);
  Matcher(const Matcher&) = default;  // the arena is copied, the grammar shared
  Matcher& operator=(const Matcher&) = delete;

  // Reads `bytes` if the grammar allows all of them after what it has read
  // (true); otherwise false and nothing is read.
  bool accept(std::string_view bytes);
  // The grammar may end after what it has read.
  bool can_end() const;
  // It must end: no byte can follow.
  bool is_finished() const;

  ParseStacks& stacks() { return stacks_; }
  const std::vector<uint32_t>& state() const { return state_; }
  const Grammar& grammar() const { return *grammar_; }

 private:
  std::shared_ptr<const Grammar> grammar_;
  ParseStacks stacks_;
  std::vector<uint32_t> state_;
  std::vector<uint32_t> next_;
};

}  // namespace kiln::grammar
