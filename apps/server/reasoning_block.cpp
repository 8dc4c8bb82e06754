#include "apps/server/reasoning_block.hpp"

#include <algorithm>

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
  // The close, or a call's marker that ends the block and begins the content.
  const std::string_view rest = reply.substr(at_);
  size_t first = std::string_view::npos;  // the first whole marker
  size_t content = 0;                     // where the content begins after it
  size_t held = rest.size();              // where a marker's start at the end waits for the next token
  for (const std::string_view marker : {std::string_view(syntax_.close), std::string_view(syntax_.call_closes)}) {
    const size_t at = marker.empty() ? std::string_view::npos : marker_start(rest, marker);
    if (at == std::string_view::npos) continue;
    if (!rest.substr(at).starts_with(marker)) {
      held = std::min(held, at);
    } else if (at < first) {
      first = at;
      content = at + (marker == syntax_.close ? marker.size() : 0);
    }
  }
  if (first != std::string_view::npos) state_ = State::Content;
  at_ += first != std::string_view::npos ? content : held;
}

}  // namespace kiln
