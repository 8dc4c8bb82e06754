// A chat reply's reasoning and content, told apart as the text arrives: what
// is known to be one or the other goes out at once (a stream sends it as
// `reasoning_content` and `content` deltas); a marker's start at the end of
// the text, and whitespace that may end the reasoning, wait for more.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "apps/server/reasoning.hpp"

namespace kiln {

struct ReplyParts {
  std::string reasoning;
  std::string content;
};

class ReasoningReply {
 public:
  // `in_reasoning`: the prompt opened the block (starts_in_reasoning).
  // `legacy` (reasoning_format deepseek-legacy): the content is the reply as
  // written, markers and reasoning included.
  ReasoningReply(ReasoningSyntax syntax, bool in_reasoning, bool legacy)
      : syntax_(std::move(syntax)), inside_(in_reasoning), may_open_(!in_reasoning), legacy_(legacy) {}

  // What can be sent now of the reply's next piece.
  ReplyParts push(std::string_view piece);
  // At the end: what was held back.
  ReplyParts finish();

 private:
  // What held_ now tells apart (push without deepseek-legacy's content).
  ReplyParts split_held();
  // Moves the first `n` bytes of held_ to the part being written, without
  // the whitespace that opens a part.
  void take(size_t n, ReplyParts& out);

  ReasoningSyntax syntax_;
  bool inside_;
  // The block may still open: only at the reply's start, as llama-server
  // reads it; later its marker is text.
  bool may_open_;
  bool legacy_;
  bool part_started_ = false;  // the current part has more than whitespace
  std::string held_;
};

}  // namespace kiln
