// Where a chat reply's reasoning block lies, followed by the worker as it
// generates the reply (ReasoningReply tells the parts apart for the client):
// whether the reply is inside the block now, and where its content begins,
// so that a tool call's marker written while the model reasons starts no
// constrained call (as in llama-server, whose lazy grammar waits for the
// reasoning to end), unless the syntax's call_closes says the marker ends
// the reasoning (Qwen3-Coder, Qwen3.5).
#pragma once

#include <cstddef>
#include <string_view>

#include "apps/server/reasoning.hpp"

namespace kiln {

class ReasoningBlock {
 public:
  // `syntax` outlives the block (empty: the reply has no reasoning);
  // `starts_inside`: the prompt opened it (starts_in_reasoning).
  ReasoningBlock(const ReasoningSyntax& syntax, bool starts_inside);

  // After each token: the whole reply so far.
  void update(std::string_view reply);
  bool inside() const { return state_ == State::Inside; }
  // Where the reply's content begins: after the block's close marker (at a
  // call_closes marker), or 0 when no block opened; npos while the reply may still open the block or is inside it.
  size_t content_from() const { return state_ == State::Content ? at_ : std::string_view::npos; }
  // Inside the block: how much of the reply is reasoning for certain (a
  // marker's start at its end waits for the next token).
  size_t reasoning_known() const { return at_; }

 private:
  enum class State { MayOpen, Inside, Content };
  const ReasoningSyntax& syntax_;
  State state_;
  size_t at_ = 0;  // Inside: where the close marker may begin; Content: where the content begins
};

}  // namespace kiln
