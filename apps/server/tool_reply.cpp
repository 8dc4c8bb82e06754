#include "apps/server/tool_reply.hpp"

#include <algorithm>
#include <random>

namespace kiln {

namespace {

std::string new_call_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  constexpr std::string_view kChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string id(9, ' ');
  for (char& c : id) c = kChars[rng() % kChars.size()];
  return id;
}

}  // namespace

std::string ToolReply::push(const std::string& piece) {
  text_ += piece;
  const size_t held = std::min(tool_call_start(format_, text_), text_.size());
  if (held <= sent_) return "";
  std::string out = text_.substr(sent_, held - sent_);
  sent_ = held;
  return out;
}

ParsedReply ToolReply::finish() {
  ParsedReply r = parse_tool_calls(format_, text_, tools_);
  // What was sent is the start of the content, which is the start of the
  // text (except in the generic format, which sends nothing early).
  r.content = r.content.size() > sent_ ? r.content.substr(sent_) : std::string();
  for (ToolCall& c : r.calls) c.id = new_call_id();
  return r;
}

}  // namespace kiln
