// The generic tool-call format, for templates with none of their own (as
// llama-server has one): the system prompt describes the tools and asks for
// one JSON object as the reply, which a grammar then enforces:
//   {"tool_call": {"name": NAME, "arguments": {...}}}    one call
//   {"tool_calls": [{"name": NAME, "arguments": {...}}]} several (parallel_tool_calls)
//   {"response": "..."}                                   an answer (tool_choice auto)
#pragma once

#include <string>
#include <vector>

#include "apps/server/openai_request.hpp"

namespace kiln {

// The text added to the system prompt: the tools and how to call them.
std::string generic_tools_prompt(const CompletionRequest& r);

// Calls an assistant made, as the reply the generic format asks for (for
// earlier turns of a conversation).
std::string generic_calls_text(const std::vector<ToolCall>& calls);

}  // namespace kiln
