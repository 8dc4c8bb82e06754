#include "apps/server/openai_response.hpp"

#include <chrono>
#include <random>

namespace kiln {

namespace {

using nlohmann::json;

json usage(const CompletionResult& r) {
  return {{"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.completion_tokens},
          {"total_tokens", r.prompt_tokens + r.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", r.cached_tokens}}}};
}

double per_second(int n, double ms) { return ms > 0 ? 1000.0 * n / ms : 0.0; }

// llama-server's names: cache_n prompt tokens reused, prompt_n computed.
json timings(const CompletionResult& r) {
  const int computed = r.prompt_tokens - r.cached_tokens;
  return {{"cache_n", r.cached_tokens},
          {"prompt_n", computed},
          {"prompt_ms", r.prompt_ms},
          {"prompt_per_second", per_second(computed, r.prompt_ms)},
          {"predicted_n", r.completion_tokens},
          {"predicted_ms", r.generation_ms},
          {"predicted_per_second", per_second(r.completion_tokens, r.generation_ms)}};
}

json envelope(Endpoint endpoint, const ResponseIds& ids, bool chunk) {
  const char* object = endpoint == Endpoint::ChatCompletions ? (chunk ? "chat.completion.chunk" : "chat.completion")
                                                             : "text_completion";
  return {{"id", ids.id}, {"object", object}, {"created", ids.created}, {"model", ids.model}};
}

json finish(const CompletionResult* r) { return r ? json(r->finish_reason) : json(nullptr); }

}  // namespace

ResponseIds new_response_ids(Endpoint endpoint, const std::string& model) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng()));
  ResponseIds ids;
  ids.id = std::string(endpoint == Endpoint::ChatCompletions ? "chatcmpl-" : "cmpl-") + hex;
  ids.created = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ids.model = model;
  return ids;
}

json completion_body(Endpoint endpoint, const ResponseIds& ids, const std::string& text, const CompletionResult& result,
                     const std::vector<ToolCall>& calls) {
  json body = envelope(endpoint, ids, false);
  json choice = {{"index", 0}, {"finish_reason", result.finish_reason}, {"logprobs", nullptr}};
  if (endpoint == Endpoint::ChatCompletions) {
    choice["message"] = {{"role", "assistant"}, {"content", text.empty() && !calls.empty() ? json(nullptr) : json(text)}};
    if (!calls.empty()) {
      json list = json::array();
      for (const ToolCall& c : calls)
        list.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
      choice["message"]["tool_calls"] = list;
    }
  } else {
    choice["text"] = text;
  }
  body["choices"] = json::array({choice});
  body["usage"] = usage(result);
  body["timings"] = timings(result);
  return body;
}

json completion_chunk(Endpoint endpoint, const ResponseIds& ids, const std::string& text, const CompletionResult* result,
                      bool role_only) {
  json body = envelope(endpoint, ids, true);
  json choice = {{"index", 0}, {"finish_reason", finish(result)}, {"logprobs", nullptr}};
  if (endpoint == Endpoint::ChatCompletions) {
    if (role_only) choice["delta"] = {{"role", "assistant"}, {"content", ""}};
    else if (result) choice["delta"] = json::object();
    else choice["delta"] = {{"content", text}};
  } else {
    choice["text"] = text;
  }
  body["choices"] = json::array({choice});
  if (result) {
    body["usage"] = usage(*result);
    body["timings"] = timings(*result);
  }
  return body;
}

std::vector<json> tool_call_chunks(const ResponseIds& ids, const std::vector<ToolCall>& calls) {
  std::vector<json> chunks;
  const auto chunk = [&](json call) {
    json body = envelope(Endpoint::ChatCompletions, ids, true);
    body["choices"] = json::array({{{"index", 0},
                                    {"finish_reason", nullptr},
                                    {"logprobs", nullptr},
                                    {"delta", {{"tool_calls", json::array({std::move(call)})}}}}});
    chunks.push_back(std::move(body));
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    chunk({{"index", i}, {"id", calls[i].id}, {"type", "function"}, {"function", {{"name", calls[i].name}, {"arguments", ""}}}});
    chunk({{"index", i}, {"function", {{"arguments", calls[i].arguments}}}});
  }
  return chunks;
}

json error_body(int status, const std::string& message, const std::string& param) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 404 ? "not_found_error"
                     : status == 503 ? "unavailable_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  return {{"error",
           {{"message", message}, {"type", type}, {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", status}}}};
}

std::string json_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace kiln
