// Reading a model's reply back into OpenAI tool calls, in each format
// (apps/server/tool_call_format.hpp): the text before the first call is the
// content, each call a name and its arguments as a JSON object's text. A
// reply whose calls cannot be read (cut off, not JSON) is all content, as
// llama-server returns it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "apps/server/openai_request.hpp"
#include "apps/server/tool_call_format.hpp"

namespace kiln {

struct ParsedReply {
  std::string content;
  std::vector<ToolCall> calls;  // ids left empty
};

// `tools` gives the XML format's parameter types (a string parameter's value
// is its text; others are read as JSON).
ParsedReply parse_tool_calls(ToolCallFormat format, std::string_view text, const std::vector<Tool>& tools);

// How much of a reply so far is content for certain: a call may begin at
// this offset (or its marker is partly written there), so a stream holds the
// rest back until the reply ends.
size_t tool_call_start(ToolCallFormat format, std::string_view text);

}  // namespace kiln
