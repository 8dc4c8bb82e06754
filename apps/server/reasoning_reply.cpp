#include "apps/server/reasoning_reply.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "apps/server/text_markers.hpp"

namespace kiln {

namespace {

constexpr std::string_view kSpace = " \t\r\n";

// The first of `markers` in `text` (or a start of one at its end): where,
// and which (its index; -1 if none).
std::pair<size_t, int> first_marker(std::string_view text, const std::vector<std::string_view>& markers) {
  std::pair<size_t, int> first{std::string_view::npos, -1};
  for (size_t i = 0; i < markers.size(); ++i)
    if (const size_t at = marker_start(text, markers[i]); at < first.first) first = {at, static_cast<int>(i)};
  return first;
}

std::string trim_end(std::string_view s) {
  return std::string(s.substr(0, s.find_last_not_of(kSpace) + 1));
}

}  // namespace

void ReasoningReply::take(size_t n, ReplyParts& out) {
  std::string_view text = std::string_view(held_).substr(0, n);
  if (!part_started_) {
    const size_t start = text.find_first_not_of(kSpace);
    text.remove_prefix(start == std::string_view::npos ? text.size() : start);
    part_started_ = !text.empty();
  }
  (inside_ ? out.reasoning : out.content) += text;
  held_.erase(0, n);
}

ReplyParts ReasoningReply::push(std::string_view piece) {
  held_ += piece;
  ReplyParts out = split_held();
  if (legacy_) out.content = std::string(piece);
  return out;
}

ReplyParts ReasoningReply::split_held() {
  ReplyParts out;
  if (may_open_) {
    const ReplyStart start = reply_start(syntax_, held_);
    if (!start.known) return out;  // may still become the marker
    may_open_ = false;
    if (start.reasoning_from != std::string::npos) {
      held_.erase(0, start.reasoning_from);
      inside_ = true;
    }
  }
  for (;;) {
    // Inside, the block ends at its close (or a call's marker that ends it,
    // which stays: the content begins with it); outside, a header that is
    // neither part goes.
    std::vector<std::string_view> markers(syntax_.dropped.begin(), syntax_.dropped.end());
    if (inside_) markers = {syntax_.close};
    if (inside_ && !syntax_.call_closes.empty()) markers.push_back(syntax_.call_closes);
    const auto [at, which] = first_marker(held_, markers);
    if (which < 0 || !std::string_view(held_).substr(at).starts_with(markers[size_t(which)])) {
      size_t ready = std::min(at, held_.size());
      // The reasoning's trailing whitespace waits: it goes if the close follows.
      if (inside_ && ready > 0) ready = held_.find_last_not_of(kSpace, ready - 1) + 1;
      take(ready, out);
      break;
    }
    ReplyParts part;
    take(at, part);
    out.reasoning += trim_end(part.reasoning);
    out.content += part.content;
    if (markers[size_t(which)] != syntax_.call_closes) held_.erase(0, markers[size_t(which)].size());
    if (inside_) {  // the reasoning ended: the content begins
      inside_ = false;
      part_started_ = false;
    }
  }
  return out;
}

ReplyParts ReasoningReply::finish() {
  ReplyParts out;
  take(held_.size(), out);
  out.reasoning = trim_end(out.reasoning);
  if (legacy_) out.content.clear();
  return out;
}

}  // namespace kiln
