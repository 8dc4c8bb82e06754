#include "apps/server/reasoning_block.hpp"

#include "apps/server/text_markers.hpp"

namespace kiln {

ReasoningBlock::ReasoningBlock(const ReasoningSyntax& syntax, bool starts_inside)
    : syntax_(syntax), state_(syntax.empty() ? State::Content : starts_inside ? State::Inside : State::MayOpen) {}

void ReasoningBlock::update(std::string_view reply) {
  if (state_ == State::MayOpen) {
    const ReplyStart start = reply_start(syntax_, reply);
    if (!start.known) return;
    state_ = start.reasoning_from == std::string_view::npos ? State::Content : State::Inside;
    at_ = start.reasoning_from == std::string_view::npos ? 0 : start.reasoning_from;
  }
  if (state_ != State::Inside) return;
  const size_t close = marker_start(reply.substr(at_), syntax_.close);
  if (close == std::string_view::npos) {
    at_ = reply.size();
  } else if (reply.substr(at_ + close).starts_with(syntax_.close)) {
    state_ = State::Content;
    at_ += close + syntax_.close.size();
  } else {
    at_ += close;  // a start of the marker at the end: the next token tells
  }
}

}  // namespace kiln
