#include "apps/server/generic_tool_calls.hpp"

#include "apps/server/request_fields.hpp"

namespace kiln {

std::string generic_tools_prompt(const CompletionRequest& r) {
  // Compact: every token of it takes room in the context.
  std::string text = "Tools (\"parameters\": the JSON schema of the arguments):\n";
  for (const Tool& t : r.tools) text += RequestJson::parse(t.json)["function"].dump() + "\n";
  text += "Reply in JSON";
  if (r.tool_choice == ToolChoice::Named) text += ", calling " + r.forced_function;
  text += R"(: {"tool_call": {"name": NAME, "arguments": {...}}})";
  if (r.parallel_tool_calls) text += R"( or {"tool_calls": [...]})";
  if (r.tool_choice == ToolChoice::Auto) text += R"( or {"response": "..."})";
  return text;
}

std::string generic_calls_text(const std::vector<ToolCall>& calls) {
  RequestJson list = RequestJson::array();
  for (const ToolCall& c : calls)
    list.push_back({{"name", c.name}, {"arguments", RequestJson::parse(c.arguments)}});
  const RequestJson reply = calls.size() == 1 ? RequestJson{{"tool_call", list[0]}} : RequestJson{{"tool_calls", list}};
  return reply.dump();
}

}  // namespace kiln
