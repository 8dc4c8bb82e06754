// A chat reply with tools in play, as its text arrives: what is content for
// certain goes out at once (a stream sends it), what may be a tool call is
// held back until the reply ends and is then read into calls.
#pragma once

#include <string>
#include <vector>

#include "apps/server/tool_call_parser.hpp"

namespace kiln {

class ToolReply {
 public:
  ToolReply(ToolCallFormat format, const std::vector<Tool>& tools) : format_(format), tools_(tools) {}

  // The content that can be sent now (may be empty).
  std::string push(const std::string& piece);
  // At the end: the content not sent yet and the calls, each with an id of
  // its own (nine letters and digits, which Mistral's templates require).
  ParsedReply finish();

 private:
  ToolCallFormat format_;
  const std::vector<Tool>& tools_;
  std::string text_;
  size_t sent_ = 0;  // bytes of text_ given out as content
};

}  // namespace kiln
