#include "apps/server/tool_prompt.hpp"

#include "engine/chat/chat_prompt.hpp"
#include "engine/chat/json.hpp"
#include "apps/server/generic_tool_calls.hpp"

namespace kiln {

namespace {

chat::Value call_value(const ToolCall& call) {
  auto fn = chat::make_object();
  fn->set("name", chat::Value(call.name));
  fn->set("arguments", chat::parse_json(call.arguments));
  auto c = chat::make_object();
  c->set("type", chat::Value("function"));
  if (!call.id.empty()) c->set("id", chat::Value(call.id));
  c->set("function", chat::Value(fn));
  return chat::Value(c);
}

chat::Value message_value(const ChatMessage& m, ToolCallFormat format) {
  const bool generic = format == ToolCallFormat::Generic;
  if (generic && !m.tool_calls.empty()) return chat::chat_message(m.role, generic_calls_text(m.tool_calls));
  chat::Value v = chat::chat_message(m.role, m.content);
  chat::Object& o = v.mutable_object();
  if (!m.reasoning_content.empty()) o.set("reasoning_content", chat::Value(m.reasoning_content));
  if (!m.tool_calls.empty()) {
    chat::Array calls;
    for (const ToolCall& c : m.tool_calls) calls.push_back(call_value(c));
    o.set("tool_calls", chat::Value(std::move(calls)));
  }
  if (!m.tool_call_id.empty()) o.set("tool_call_id", chat::Value(m.tool_call_id));
  if (!m.name.empty()) o.set("name", chat::Value(m.name));
  return v;
}

}  // namespace

bool uses_tools(const CompletionRequest& r) { return !r.tools.empty() && r.tool_choice != ToolChoice::None; }

chat::Array template_messages(const CompletionRequest& r, ToolCallFormat format) {
  chat::Array out;
  for (const ChatMessage& m : r.messages) out.push_back(message_value(m, format));
  if (format != ToolCallFormat::Generic || !uses_tools(r)) return out;
  // The tools' description goes at the end of the system prompt, or is one.
  const std::string description = generic_tools_prompt(r);
  if (!r.messages.empty() && (r.messages[0].role == "system" || r.messages[0].role == "developer")) {
    const std::string& system = r.messages[0].content;
    out[0].mutable_object().set("content", chat::Value(system.empty() ? description : system + "\n\n" + description));
  } else {
    out.insert(out.begin(), chat::chat_message("system", description));
  }
  return out;
}

std::shared_ptr<chat::Object> template_variables(const CompletionRequest& r, ToolCallFormat format) {
  auto vars = chat::make_object();
  if (!r.chat_template_kwargs.empty()) {
    const chat::Value kwargs = chat::parse_json(r.chat_template_kwargs);
    for (const auto& [key, value] : kwargs.as_object().items) vars->set(key, value);
  }
  if (format != ToolCallFormat::Generic && uses_tools(r)) {
    chat::Array tools;
    for (const Tool& t : r.tools) tools.push_back(chat::parse_json(t.json));
    vars->set("tools", chat::Value(std::move(tools)));
  }
  return vars->items.empty() ? nullptr : vars;
}

}  // namespace kiln
