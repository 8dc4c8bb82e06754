// Matches text against a grammar one byte at a time: the state of a parse
// in progress, what it may read next, and whether it may end.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "engine/grammar/grammar.hpp"
#include "engine/grammar/parse_stacks.hpp"

namespace kiln::grammar {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> g);
  // A copy goes on from the same state, with a copy of the automaton.
  Matcher(const Matcher&) = default;
  Matcher& operator=(const Matcher&) = delete;

  // Reads `bytes` if the grammar allows all of them after what it has read
  // (true); otherwise false and nothing is read.
  bool accept(std::string_view bytes);
  // Whether accept(bytes) would succeed (nothing is read).
  bool allows(std::string_view bytes) const;
  // The grammar may end after what it has read.
  bool can_end() const { return stacks_.can_end(state_); }
  // It must end: no byte can follow.
  bool is_finished() const { return stacks_.is_finished(state_); }

  // The automaton (whose caches grow as it is asked) and the current state.
  ParseStacks& stacks() const { return stacks_; }
  uint32_t state() const { return state_; }

 private:
  std::shared_ptr<const Grammar> grammar_;
  mutable ParseStacks stacks_;
  uint32_t state_;
};

}  // namespace kiln::grammar
