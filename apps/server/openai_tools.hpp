// The tool fields of a chat request, read and checked: `tools` (functions
// with a name and a JSON schema of their arguments), `tool_choice` (auto,
// none, required, or {"type": "function", "function": {"name": ...}}) and the
// `tool_calls` of assistant messages, whose arguments OpenAI clients send as
// a JSON string and templates need as an object.
#pragma once

#include <string>
#include <vector>

#include "apps/server/openai_request.hpp"
#include "apps/server/request_fields.hpp"

namespace kiln {

// Sets r.tools, r.tool_choice and r.forced_function from the body. Throws
// RequestError (400): tools not a list, a function without a name or with
// parameters that are not an object, a tool_choice naming no offered
// function or asking for calls when none are offered.
void read_tools(const RequestJson& body, CompletionRequest& r);

// An assistant message's `tool_calls` (`name` names the field in errors);
// arguments given as a JSON string are parsed, and kept as an object's text.
std::vector<ToolCall> read_tool_calls(const RequestJson& calls, const std::string& name);

}  // namespace kiln
