#include "apps/server/openai_tools.hpp"

namespace kiln {

namespace {

using json = RequestJson;

Tool read_tool(const json& entry, const std::string& name) {
  if (!entry.is_object()) reject(name, "must be {\"type\": \"function\", \"function\": {...}}");
  if (const json* type = field(entry, "type"); type && string_field(*type, name + ".type") != "function")
    reject(name + ".type", "must be 'function'");
  const json* fn = field(entry, "function");
  if (!fn || !fn->is_object()) reject(name + ".function", "must be an object with a 'name'");
  const json* fn_name = field(*fn, "name");
  if (!fn_name) reject(name + ".function.name", "is required");
  Tool tool;
  tool.name = string_field(*fn_name, name + ".function.name");
  if (tool.name.empty()) reject(name + ".function.name", "must not be empty");
  const json* parameters = field(*fn, "parameters");
  if (parameters && !parameters->is_object()) reject(name + ".function.parameters", "must be a JSON schema object");
  tool.parameters = parameters ? parameters->dump() : R"({"type": "object", "properties": {}})";
  json whole = {{"type", "function"}, {"function", *fn}};
  tool.json = whole.dump();
  return tool;
}

}  // namespace

void read_tools(const json& body, CompletionRequest& r) {
  if (const json* tools = field(body, "tools")) {
    if (!tools->is_array()) reject("tools", "must be a list of {\"type\": \"function\", \"function\": {...}}");
    for (size_t i = 0; i < tools->size(); ++i) {
      r.tools.push_back(read_tool((*tools)[i], "tools[" + std::to_string(i) + "]"));
      for (size_t j = 0; j + 1 < r.tools.size(); ++j)
        if (r.tools[j].name == r.tools.back().name)
          reject("tools[" + std::to_string(i) + "].function.name", "repeats the name '" + r.tools[j].name + "'");
    }
  }
  const json* choice = field(body, "tool_choice");
  if (!choice) return;
  if (choice->is_string()) {
    const std::string c = choice->get<std::string>();
    if (c == "auto") r.tool_choice = ToolChoice::Auto;
    else if (c == "none") r.tool_choice = ToolChoice::None;
    else if (c == "required") r.tool_choice = ToolChoice::Required;
    else reject("tool_choice", "must be auto, none, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
  } else if (choice->is_object()) {
    const json* fn = field(*choice, "function");
    if (!fn || !fn->is_object() || !field(*fn, "name")) reject("tool_choice.function.name", "is required");
    r.tool_choice = ToolChoice::Named;
    r.forced_function = string_field((*fn)["name"], "tool_choice.function.name");
    bool offered = false;
    for (const Tool& t : r.tools) offered = offered || t.name == r.forced_function;
    if (!offered) reject("tool_choice.function.name", "names '" + r.forced_function + "', which is not in 'tools'");
  } else {
    reject("tool_choice", "must be a string or an object");
  }
  if (r.tool_choice == ToolChoice::Required && r.tools.empty()) reject("tool_choice", "is 'required' but no tools are given");
}

std::vector<ToolCall> read_tool_calls(const json& calls, const std::string& name) {
  if (!calls.is_array()) reject(name, "must be a list");
  std::vector<ToolCall> out;
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string at = name + "[" + std::to_string(i) + "]";
    const json& call = calls[i];
    const json* fn = call.is_object() ? field(call, "function") : nullptr;
    if (!fn || !fn->is_object() || !field(*fn, "name")) reject(at + ".function.name", "is required");
    ToolCall c;
    if (const json* id = field(call, "id")) c.id = string_field(*id, at + ".id");
    c.name = string_field((*fn)["name"], at + ".function.name");
    json arguments = json::object();
    if (const json* a = field(*fn, "arguments")) {
      if (a->is_string()) {
        try {
          arguments = json::parse(a->get<std::string>());
        } catch (const json::exception&) {
          reject(at + ".function.arguments", "must be a JSON object or a string holding one");
        }
      } else {
        arguments = *a;
      }
    }
    if (!arguments.is_object()) reject(at + ".function.arguments", "must be a JSON object or a string holding one");
    c.arguments = arguments.dump();
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kiln
