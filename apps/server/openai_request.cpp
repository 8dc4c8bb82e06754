#include "apps/server/openai_request.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/error/error.hpp"
#include "engine/grammar/json_schema.hpp"
#include "apps/server/openai_tools.hpp"
#include "apps/server/request_fields.hpp"

namespace kiln {

namespace {

using json = RequestJson;

double number(const json& body, const char* key, double def, double min, double max) {
  const json* v = field(body, key);
  if (!v) return def;
  if (!v->is_number()) reject(key, "must be a number");
  const double x = v->get<double>();
  if (!(x >= min && x <= max)) reject(key, "must be in [" + json(min).dump() + ", " + json(max).dump() + "]");
  return x;
}

long long integer(const json& body, const char* key, long long def, long long min, long long max) {
  const json* v = field(body, key);
  if (!v) return def;
  if (!v->is_number_integer()) reject(key, "must be an integer");
  // An unsigned number above the signed range would wrap in get<long long>.
  if (v->is_number_unsigned() && v->get<unsigned long long>() > static_cast<unsigned long long>(max))
    reject(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  const long long x = v->get<long long>();
  if (x < min || x > max) reject(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  return x;
}

bool boolean(const json& body, const char* key, bool def) {
  const json* v = field(body, key);
  if (!v) return def;
  if (!v->is_boolean()) reject(key, "must be true or false");
  return v->get<bool>();
}

// A message's content: a string, or a list of {"type": "text", "text": ...}
// parts (joined), or null (an assistant message that only called tools).
std::string message_content(const json& content, const std::string& name) {
  if (content.is_null()) return "";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) reject(name, "must be a string or a list of text parts");
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string part_name = name + "[" + std::to_string(i) + "]";
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text"))
      reject(part_name, "must be {\"type\": \"text\", \"text\": ...} (kiln serves text only)");
    text += string_field(part["text"], part_name + ".text");
  }
  return text;
}

std::vector<ChatMessage> messages(const json& body) {
  const json* list = field(body, "messages");
  if (!list) reject("messages", "is required");
  if (!list->is_array() || list->empty()) reject("messages", "must be a non-empty list");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& m = (*list)[i];
    const std::string name = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) reject(name, "must be an object with 'role' and 'content'");
    if (!m.contains("role")) reject(name + ".role", "is required");
    ChatMessage msg;
    msg.role = string_field(m["role"], name + ".role");
    if (msg.role != "system" && msg.role != "developer" && msg.role != "user" && msg.role != "assistant" &&
        msg.role != "tool")
      reject(name + ".role", "is '" + msg.role + "'; kiln knows system, developer, user, assistant and tool");
    if (!m.contains("content") && msg.role != "assistant") reject(name + ".content", "is required");
    msg.content = message_content(m.value("content", json()), name + ".content");
    if (const json* reasoning = field(m, "reasoning_content"); reasoning && msg.role == "assistant")
      msg.reasoning_content = string_field(*reasoning, name + ".reasoning_content");
    if (const json* calls = field(m, "tool_calls"); calls && msg.role == "assistant")
      msg.tool_calls = read_tool_calls(*calls, name + ".tool_calls");
    if (const json* id = field(m, "tool_call_id")) msg.tool_call_id = string_field(*id, name + ".tool_call_id");
    if (const json* fn = field(m, "name")) msg.name = string_field(*fn, name + ".name");
    out.push_back(std::move(msg));
  }
  return out;
}

// "prompt": a string or a list of token ids, or a list holding one of
// either, as OpenAI and llama-server take them (they also take lists of
// several prompts; kiln serves one per request). Token ids are checked
// against the vocabulary with the model (request_prompt).
void read_prompt(const json& body, CompletionRequest& r) {
  const json* p = field(body, "prompt");
  if (!p) reject("prompt", "is required");
  const json& one = p->is_array() && p->size() == 1 && !(*p)[0].is_number() ? (*p)[0] : *p;
  if (one.is_string()) {
    r.prompt = one.get<std::string>();
    return;
  }
  constexpr const char* kShapes =
      "must be a string, a list of token ids, or a list holding one of them (kiln serves one prompt per request)";
  if (!one.is_array() || one.empty()) reject("prompt", kShapes);
  for (const json& id : one) {
    if (!id.is_number_integer()) reject("prompt", kShapes);
    if (id.is_number_unsigned() ? id.get<uint64_t>() > uint64_t(INT32_MAX) : id.get<int64_t>() < 0)
      reject("prompt", "holds the token id " + id.dump() + ", which no vocabulary has");
    r.prompt_tokens.push_back(id.get<int32_t>());
  }
}

std::vector<std::string> stop_strings(const json& body) {
  const json* s = field(body, "stop");
  if (!s) return {};
  std::vector<std::string> out;
  if (s->is_string()) {
    out.push_back(s->get<std::string>());
  } else if (s->is_array()) {
    for (size_t i = 0; i < s->size(); ++i) out.push_back(string_field((*s)[i], "stop[" + std::to_string(i) + "]"));
  } else {
    reject("stop", "must be a string or a list of strings");
  }
  for (const std::string& t : out)
    if (t.empty()) reject("stop", "must not hold an empty string");
  return out;
}

// OpenAI's two shapes: a chat's `logprobs` is true or false and
// `top_logprobs` (0..20) asks for alternatives; a completion's `logprobs` is
// the number of alternatives (0..5), and `echo` puts the prompt before the
// text, scored too when logprobs are asked for.
void read_logprobs(const json& body, CompletionRequest& r) {
  if (r.endpoint == Endpoint::ChatCompletions) {
    r.logprobs = boolean(body, "logprobs", false);
    r.top_logprobs = static_cast<int>(integer(body, "top_logprobs", 0, 0, kMaxTopLogprobsChat));
    if (r.top_logprobs > 0 && !r.logprobs) reject("top_logprobs", "needs 'logprobs': true");
    if (boolean(body, "echo", false)) reject("echo", "is for /v1/completions only");
    return;
  }
  const json* logprobs = field(body, "logprobs");
  r.logprobs = logprobs != nullptr;
  r.top_logprobs = static_cast<int>(integer(body, "logprobs", 0, 0, kMaxTopLogprobsCompletion));
  r.echo = boolean(body, "echo", false);
}

// The GBNF a request's output must follow: llama-server's `grammar` and
// `json_schema`, or OpenAI's `response_format` (json_object, json_schema;
// llama-server's json_object with a `schema`). Empty: none.
std::string grammar_text(const json& body) {
  const json* grammar = field(body, "grammar");
  const json* schema = field(body, "json_schema");
  const json* format = field(body, "response_format");
  if ((grammar != nullptr) + (schema != nullptr) + (format != nullptr) > 1)
    reject(grammar ? "grammar" : "json_schema", "cannot be given with another of grammar, json_schema, response_format");
  if (grammar) return string_field(*grammar, "grammar");
  if (schema) return grammar::json_schema_to_gbnf(schema->dump());
  if (!format) return "";
  if (!format->is_object()) reject("response_format", "must be an object");
  const std::string type = string_field(format->value("type", json()), "response_format.type");
  if (type == "text") return "";
  if (type == "json_object") {
    const json* with_schema = field(*format, "schema");
    return with_schema ? grammar::json_schema_to_gbnf(with_schema->dump()) : grammar::json_object_gbnf();
  }
  if (type != "json_schema") reject("response_format.type", "must be text, json_object or json_schema");
  const json* spec = field(*format, "json_schema");
  if (!spec || !spec->is_object() || !field(*spec, "schema"))
    reject("response_format.json_schema", "must be an object with a 'schema'");
  return grammar::json_schema_to_gbnf((*spec)["schema"].dump());
}

// llama-server's `reasoning_format`, `chat_template_kwargs` and reasoning budget of a chat.
void read_reasoning(const json& body, CompletionRequest& r) {
  if (const json* format = field(body, "reasoning_format")) {
    const std::string name = string_field(*format, "reasoning_format");
    r.reasoning_format = parse_reasoning_format(name);
    if (!r.reasoning_format)
      reject("reasoning_format", "is '" + name + "'; kiln knows none, auto, deepseek and deepseek-legacy");
  }
  if (const json* kwargs = field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object()) reject("chat_template_kwargs", "must be an object, e.g. {\"enable_thinking\": false}");
    r.chat_template_kwargs = kwargs->dump();
  }
  const char* budget = field(body, "reasoning_budget_tokens") || !field(body, "thinking_budget_tokens")
                           ? "reasoning_budget_tokens"
                           : "thinking_budget_tokens";
  r.reasoning_budget = static_cast<int>(integer(body, budget, -1, -1, std::numeric_limits<int>::max()));
  if (const json* message = field(body, "reasoning_budget_message"))
    r.reasoning_budget_message = string_field(*message, "reasoning_budget_message");
}

std::shared_ptr<const grammar::Grammar> request_grammar(const json& body) {
  try {
    const std::string text = grammar_text(body);
    return text.empty() ? nullptr : grammar::parse_gbnf(text);
  } catch (const Error& e) {  // the schema's or the grammar's fault, named in the message
    throw RequestError(400, e.what(), field(body, "grammar") ? "grammar" : field(body, "json_schema") ? "json_schema" : "response_format");
  }
}

CompletionRequest read_request(const json& body, Endpoint endpoint) {
  CompletionRequest r;
  r.endpoint = endpoint;
  if (endpoint == Endpoint::ChatCompletions) r.messages = messages(body);
  else read_prompt(body, r);

  constexpr long long kIntMax = std::numeric_limits<int>::max();
  const char* max_key = endpoint == Endpoint::ChatCompletions && field(body, "max_completion_tokens")
                            ? "max_completion_tokens"
                            : "max_tokens";
  read_logprobs(body, r);
  // 0 only to score an echoed prompt, as evaluation harnesses do.
  r.max_tokens = static_cast<int>(integer(body, max_key, -1, r.echo ? 0 : 1, kIntMax));
  r.n = static_cast<int>(integer(body, "n", 1, 1, kMaxChoices));
  SamplerParams& s = r.sampling;
  s.temperature = static_cast<float>(number(body, "temperature", s.temperature, 0, 1e6));
  s.top_p = static_cast<float>(number(body, "top_p", s.top_p, 0, 1));
  s.min_p = static_cast<float>(number(body, "min_p", s.min_p, 0, 1));
  s.top_k = static_cast<int>(integer(body, "top_k", s.top_k, 0, kIntMax));
  s.repeat_penalty = static_cast<float>(number(body, "repeat_penalty", s.repeat_penalty, 1e-6, 1e6));
  s.presence_penalty = static_cast<float>(number(body, "presence_penalty", s.presence_penalty, -2, 2));
  s.frequency_penalty = static_cast<float>(number(body, "frequency_penalty", s.frequency_penalty, -2, 2));
  // -1 (llama.cpp's "random") and any non-negative seed.
  const long long seed = integer(body, "seed", -1, -1, std::numeric_limits<long long>::max());
  if (seed >= 0) s.seed = static_cast<uint64_t>(seed);
  r.stop = stop_strings(body);
  r.stream = boolean(body, "stream", false);
  r.grammar = request_grammar(body);
  if (endpoint == Endpoint::ChatCompletions) {
    read_tools(body, r);
    r.parallel_tool_calls = boolean(body, "parallel_tool_calls", true);
    read_reasoning(body, r);
  }
  return r;
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body_text, Endpoint endpoint) {
  json body;
  try {
    body = json::parse(body_text);
  } catch (const json::parse_error& e) {
    throw RequestError(400, std::string("the request body is not valid JSON: ") + e.what());
  } catch (const json::out_of_range& e) {  // a number such as 1e400 that no double holds
    throw RequestError(400, std::string("the request body holds a number out of range: ") + e.what());
  }
  if (!body.is_object()) throw RequestError(400, "the request body must be a JSON object");

  try {
    return read_request(body, endpoint);
  } catch (const json::exception& e) {  // a field of an unexpected type deep inside (value() of a string, ...)
    throw RequestError(400, std::string("the request does not have the expected form: ") + e.what());
  }
}

}  // namespace kiln
