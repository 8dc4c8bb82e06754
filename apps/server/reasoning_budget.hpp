// A reply's reasoning under a token budget (llama-server's
// --reasoning-budget and reasoning_budget_tokens): once the model has written
// `budget` tokens inside the reasoning block without closing it, the reply is
// made to write `forced` (the budget message, if any, and the template's
// close marker), a token at a time, and then goes on as the model likes: its
// answer. As in llama.cpp, a character cut between tokens is finished first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

class ReasoningBudget {
 public:
  // `starts_inside`: the prompt opened the block, so a budget of 0 forces
  // the close at once.
  ReasoningBudget(int budget, std::vector<int32_t> forced, bool starts_inside);

  // Before sampling: the token the reply must take next; nullopt: sample.
  std::optional<int32_t> forced_token() const;
  // After each token: whether the reply was inside the block before it and
  // is after it, and the token's bytes (which may end inside a UTF-8 character).
  void counted(bool was_inside, bool inside, std::string_view token_text);

 private:
  int budget_;
  int used_ = 0;  // tokens written inside the block
  std::vector<int32_t> forced_;
  bool forcing_;
  size_t next_ = 0;  // forcing: the next of forced_ to write
};

}  // namespace kiln
