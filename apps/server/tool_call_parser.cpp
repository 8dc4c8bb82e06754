#include "apps/server/tool_call_parser.hpp"

#include <optional>

#include "apps/server/gemma_arguments.hpp"
#include "apps/server/request_fields.hpp"
#include "apps/server/string_schema.hpp"
#include "apps/server/text_markers.hpp"

namespace kiln {

namespace {

using json = RequestJson;

constexpr std::string_view kToolCall = "<tool_call>";
constexpr std::string_view kToolCallEnd = "</tool_call>";
constexpr std::string_view kMistralCalls = "[TOOL_CALLS]";
constexpr std::string_view kMistralArgs = "[ARGS]";
constexpr std::string_view kMistralCallId = "[CALL_ID]";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kHarmonyMessage = "<|message|>";
constexpr std::string_view kHarmonyStart = "<|start|>";
constexpr std::string_view kHarmonyEnd = "<|end|>";
constexpr std::string_view kHarmonyRecipient = "to=functions.";

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::optional<json> parse(std::string_view text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// {name, arguments} from an object with the name under "name" and the
// arguments (an object, or a string holding one) under one of `keys`.
std::optional<ToolCall> call_from(const json& v, std::initializer_list<const char*> keys) {
  if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) return std::nullopt;
  json arguments = json::object();
  for (const char* key : keys) {
    if (!v.contains(key)) continue;
    arguments = v[key];
    if (arguments.is_string()) {
      std::optional<json> parsed = parse(arguments.get<std::string>());
      if (!parsed) return std::nullopt;
      arguments = *parsed;
    }
  }
  if (!arguments.is_object()) return std::nullopt;
  return ToolCall{"", v["name"].get<std::string>(), arguments.dump()};
}

// What comes before the first call, trimmed at its end.
std::string content_before(std::string_view text, size_t at) {
  std::string_view c = text.substr(0, at);
  const size_t end = c.find_last_not_of(" \t\r\n");
  return std::string(end == std::string_view::npos ? std::string_view() : c.substr(0, end + 1));
}

// The bodies of every <tool_call>...</tool_call> from `from` on (the last
// may lack its closing tag: the reply ended there); nullopt if anything but
// whitespace lies between them.
std::optional<std::vector<std::string_view>> tagged_calls(std::string_view text, size_t from) {
  std::vector<std::string_view> bodies;
  while (from < text.size()) {
    const size_t open = text.find(kToolCall, from);
    if (open == std::string_view::npos) {
      if (!trim(text.substr(from)).empty()) return std::nullopt;
      break;
    }
    if (!trim(text.substr(from, open - from)).empty()) return std::nullopt;
    const size_t body = open + kToolCall.size();
    const size_t close = text.find(kToolCallEnd, body);
    bodies.push_back(text.substr(body, close == std::string_view::npos ? std::string_view::npos : close - body));
    from = close == std::string_view::npos ? text.size() : close + kToolCallEnd.size();
  }
  return bodies;
}

// Whether the function's parameter `param` is a string, which the XML
// format writes as bare text.
bool string_parameter(const std::vector<Tool>& tools, const std::string& function, const std::string& param) {
  for (const Tool& t : tools) {
    if (t.name != function) continue;
    const json schema = json::parse(t.parameters);
    const auto props = schema.find("properties");
    if (props == schema.end() || !props->is_object() || !props->contains(param)) return false;
    return is_string_schema((*props)[param]);
  }
  return false;
}

// <function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n...</function>
std::optional<ToolCall> xml_call(std::string_view body, const std::vector<Tool>& tools) {
  body = trim(body);
  constexpr std::string_view open = "<function=", end = "</function>", param = "<parameter=", param_end = "</parameter>";
  if (!body.starts_with(open)) return std::nullopt;
  const size_t name_end = body.find('>');
  ToolCall call{"", std::string(body.substr(open.size(), name_end - open.size())), ""};
  json arguments = json::object();
  size_t at = name_end + 1;
  for (;;) {
    const std::string_view rest = trim(body.substr(at));
    if (rest.empty() || rest == end) break;
    if (!rest.starts_with(param)) return std::nullopt;
    at = body.size() - rest.size();
    const size_t key_end = body.find('>', at);
    if (key_end == std::string_view::npos) return std::nullopt;
    const std::string key(body.substr(at + param.size(), key_end - at - param.size()));
    const size_t value_end = body.find(param_end, key_end);
    std::string_view value = body.substr(key_end + 1, value_end == std::string_view::npos ? std::string_view::npos
                                                                                            : value_end - key_end - 1);
    if (value.starts_with('\n')) value.remove_prefix(1);
    if (value.ends_with('\n')) value.remove_suffix(1);
    std::optional<json> parsed = string_parameter(tools, call.name, key) ? std::nullopt : parse(value);
    arguments[key] = parsed ? *parsed : json(std::string(value));
    if (value_end == std::string_view::npos) break;
    at = value_end + param_end.size();
  }
  call.arguments = arguments.dump();
  return call;
}

ParsedReply tagged(std::string_view text, const std::vector<Tool>& tools, bool xml) {
  const size_t first = text.find(kToolCall);
  if (first == std::string_view::npos) return {std::string(text), {}};
  const std::optional<std::vector<std::string_view>> bodies = tagged_calls(text, first);
  if (!bodies) return {std::string(text), {}};
  ParsedReply out{content_before(text, first), {}};
  for (size_t i = 0; i < bodies->size(); ++i) {
    const std::string_view body = (*bodies)[i];
    std::optional<json> v = xml ? std::nullopt : parse(body);
    std::optional<ToolCall> call = xml ? xml_call(body, tools) : v ? call_from(*v, {"arguments"}) : std::nullopt;
    // A reply cut (by max_tokens) inside a call after complete ones keeps those.
    const bool cut_last = i + 1 == bodies->size() && i > 0 && !text.ends_with(kToolCallEnd);
    if (!call && cut_last) break;
    if (!call) return {std::string(text), {}};
    out.calls.push_back(std::move(*call));
  }
  return out;
}

ParsedReply llama31(std::string_view text) {
  std::string_view body = trim(text);
  if (body.starts_with(kPythonTag)) body = trim(body.substr(kPythonTag.size()));
  std::optional<json> v = body.starts_with('{') ? parse(body) : std::nullopt;
  std::optional<ToolCall> call = v ? call_from(*v, {"parameters", "arguments"}) : std::nullopt;
  if (!call) return {std::string(text), {}};
  return {"", {std::move(*call)}};
}

// [TOOL_CALLS]NAME[ARGS]{...} (repeated, with [CALL_ID]ID before [ARGS] in
// some versions), or the older [TOOL_CALLS][{"name": ..., "arguments": ...}].
ParsedReply mistral(std::string_view text) {
  const size_t first = text.find(kMistralCalls);
  if (first == std::string_view::npos) return {std::string(text), {}};
  ParsedReply out{content_before(text, first), {}};
  const std::string_view calls = trim(text.substr(first + kMistralCalls.size()));
  if (calls.starts_with('[')) {
    std::optional<json> list = parse(calls);
    if (!list || !list->is_array()) return {std::string(text), {}};
    for (const json& v : *list) {
      std::optional<ToolCall> call = call_from(v, {"arguments"});
      if (!call) return {std::string(text), {}};
      out.calls.push_back(std::move(*call));
    }
    return out;
  }
  for (size_t at = first; at != std::string_view::npos;) {
    const size_t name = at + kMistralCalls.size();
    const size_t args = text.find(kMistralArgs, name);
    const size_t next = args == std::string_view::npos ? args : text.find(kMistralCalls, args);
    std::string_view head = text.substr(name, args == std::string_view::npos ? args : args - name);
    if (const size_t id = head.find(kMistralCallId); id != std::string_view::npos) head = head.substr(0, id);
    std::optional<json> arguments =
        args == std::string_view::npos
            ? std::nullopt
            : parse(text.substr(args + kMistralArgs.size(), next == std::string_view::npos ? next : next - args - kMistralArgs.size()));
    // A reply cut (by max_tokens) inside a call after complete ones keeps those.
    if ((!arguments || !arguments->is_object()) && next == std::string_view::npos && !out.calls.empty()) break;
    if (!arguments || !arguments->is_object()) return {std::string(text), {}};
    out.calls.push_back(ToolCall{"", std::string(trim(head)), arguments->dump()});
    at = next;
  }
  return out;
}

// gpt-oss: the reply's messages, each a header (channel, recipient) up to
// <|message|> and a body up to the next <|start|>. A message addressed
// to=functions.NAME is a call; the content is the final channel's text (the
// analysis channel, the model's reasoning, is left out).
ParsedReply harmony(std::string_view text) {
  if (text.find(kHarmonyMessage) == std::string_view::npos) return {std::string(text), {}};
  ParsedReply out;
  for (size_t at = 0; at < text.size();) {
    const size_t header_end = text.find(kHarmonyMessage, at);
    if (header_end == std::string_view::npos) break;
    const std::string_view header = text.substr(at, header_end - at);
    const size_t body = header_end + kHarmonyMessage.size();
    const size_t next = text.find(kHarmonyStart, body);
    std::string_view message = text.substr(body, next == std::string_view::npos ? next : next - body);
    if (message.ends_with(kHarmonyEnd)) message.remove_suffix(kHarmonyEnd.size());
    if (const size_t to = header.find(kHarmonyRecipient); to != std::string_view::npos) {
      const std::string_view name = header.substr(to + kHarmonyRecipient.size());
      std::optional<json> arguments = parse(message);
      if (!arguments || !arguments->is_object()) return {std::string(text), {}};
      out.calls.push_back(ToolCall{"", std::string(name.substr(0, name.find_first_of(" <"))), arguments->dump()});
    } else if (header.find("final") != std::string_view::npos) {
      out.content += message;
    }
    at = next == std::string_view::npos ? text.size() : next + kHarmonyStart.size();
  }
  return out;
}

// Gemma 4: <|tool_call>call:NAME{key:value,...}<tool_call|>, one after another.
ParsedReply gemma(std::string_view text) {
  constexpr std::string_view open = "<|tool_call>call:", close = "<tool_call|>";
  const size_t first = text.find(open);
  if (first == std::string_view::npos) return {std::string(text), {}};
  ParsedReply out{content_before(text, first), {}};
  for (size_t at = first; at < text.size();) {
    if (!text.substr(at).starts_with(open)) {
      if (!trim(text.substr(at)).empty()) return {std::string(text), {}};
      break;
    }
    at += open.size();
    const size_t brace = text.find('{', at);
    const std::string name(text.substr(at, brace == std::string_view::npos ? brace : brace - at));
    at = brace;
    std::optional<json> arguments = brace == std::string_view::npos ? std::nullopt : read_gemma_value(text, at);
    if (!arguments || !arguments->is_object()) {
      // A reply cut (by max_tokens) inside a call after complete ones keeps those.
      if (!out.calls.empty() && text.find(open, brace == std::string_view::npos ? text.size() : brace) == std::string_view::npos) break;
      return {std::string(text), {}};
    }
    out.calls.push_back(ToolCall{"", name, arguments->dump()});
    if (text.substr(at).starts_with(close)) at += close.size();
  }
  return out;
}

ParsedReply generic(std::string_view text) {
  std::optional<json> v = parse(trim(text));
  if (!v || !v->is_object()) return {std::string(text), {}};
  if (v->contains("response") && (*v)["response"].is_string()) return {(*v)["response"].get<std::string>(), {}};
  ParsedReply out;
  if (v->contains("tool_call")) {
    std::optional<ToolCall> call = call_from((*v)["tool_call"], {"arguments"});
    if (!call) return {std::string(text), {}};
    out.calls.push_back(std::move(*call));
  } else if (v->contains("tool_calls") && (*v)["tool_calls"].is_array()) {
    for (const json& c : (*v)["tool_calls"]) {
      std::optional<ToolCall> call = call_from(c, {"arguments"});
      if (!call) return {std::string(text), {}};
      out.calls.push_back(std::move(*call));
    }
  } else {
    return {std::string(text), {}};
  }
  return out;
}

}  // namespace

ParsedReply parse_tool_calls(ToolCallFormat format, std::string_view text, const std::vector<Tool>& tools) {
  switch (format) {
    case ToolCallFormat::Hermes: return tagged(text, tools, false);
    case ToolCallFormat::QwenXml: return tagged(text, tools, true);
    case ToolCallFormat::Llama31: return llama31(text);
    case ToolCallFormat::Mistral: return mistral(text);
    case ToolCallFormat::Harmony: return harmony(text);
    case ToolCallFormat::Gemma4: return gemma(text);
    case ToolCallFormat::Generic: break;
  }
  return generic(text);
}

size_t tool_call_start(ToolCallFormat format, std::string_view text) {
  switch (format) {
    case ToolCallFormat::Hermes:
    case ToolCallFormat::QwenXml:
    case ToolCallFormat::Mistral:
    case ToolCallFormat::Gemma4: return marker_start(text, tool_call_marker(format));
    case ToolCallFormat::Llama31: {
      // The call is the whole reply: held back while it may still be one.
      const std::string_view t = trim(text);
      const bool may_be_call = t.empty() || t.starts_with('{') || t.starts_with(kPythonTag) || kPythonTag.starts_with(t);
      return may_be_call ? 0 : std::string_view::npos;
    }
    case ToolCallFormat::Harmony:  // the content is the final channel's, known at the end
    case ToolCallFormat::Generic: break;
  }
  return 0;  // the whole reply is one JSON object
}

}  // namespace kiln
