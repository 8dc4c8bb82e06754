#include "apps/server/openai_response.hpp"

#include <chrono>
#include <random>

#include "apps/server/openai_logprobs.hpp"

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

json finish(const std::string& reason) { return reason.empty() ? json(nullptr) : json(reason); }

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

CompletionResult combined_usage(const std::vector<CompletionResult>& choices) {
  CompletionResult usage = choices.at(0);
  for (size_t i = 1; i < choices.size(); ++i) {
    usage.completion_tokens += choices[i].completion_tokens;
    usage.prompt_ms += choices[i].prompt_ms;
    usage.generation_ms += choices[i].generation_ms;
  }
  return usage;
}

json completion_body(Endpoint endpoint, const ResponseIds& ids, const std::vector<ChoiceText>& choices, bool logprobs,
                     const CompletionResult& usage_of_all) {
  json body = envelope(endpoint, ids, false);
  body["choices"] = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const ChoiceText& c = choices[i];
    json choice = {{"index", i},
                   {"finish_reason", c.finish_reason},
                   {"logprobs", logprobs ? logprobs_json(endpoint, c.scores) : json(nullptr)}};
    if (endpoint == Endpoint::ChatCompletions) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text.empty() && !c.calls.empty() ? json(nullptr) : json(c.text)}};
      if (!c.reasoning.empty()) choice["message"]["reasoning_content"] = c.reasoning;
      if (!c.calls.empty()) {
        json list = json::array();
        for (const ToolCall& call : c.calls)
          list.push_back({{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
        choice["message"]["tool_calls"] = std::move(list);
      }
    } else {
      choice["text"] = c.text;
    }
    body["choices"].push_back(std::move(choice));
  }
  body["usage"] = usage(usage_of_all);
  body["timings"] = timings(usage_of_all);
  return body;
}

json completion_chunk(Endpoint endpoint, const ResponseIds& ids, const ChunkChoice& c, const CompletionResult* usage_of_all) {
  json body = envelope(endpoint, ids, true);
  json choice = {{"index", c.index},
                 {"finish_reason", finish(c.finish_reason)},
                 {"logprobs", c.scores ? logprobs_json(endpoint, *c.scores) : json(nullptr)}};
  if (endpoint == Endpoint::ChatCompletions) {
    if (c.role_only) choice["delta"] = {{"role", "assistant"}, {"content", ""}};
    else if (!c.finish_reason.empty()) choice["delta"] = json::object();
    else if (c.reasoning.empty()) choice["delta"] = {{"content", c.text}};
    else if (c.text.empty()) choice["delta"] = {{"reasoning_content", c.reasoning}};
    else choice["delta"] = {{"reasoning_content", c.reasoning}, {"content", c.text}};
  } else {
    choice["text"] = c.text;
  }
  body["choices"] = json::array({choice});
  if (usage_of_all) {
    body["usage"] = usage(*usage_of_all);
    body["timings"] = timings(*usage_of_all);
  }
  return body;
}

std::vector<json> tool_call_chunks(const ResponseIds& ids, int index, const std::vector<ToolCall>& calls) {
  std::vector<json> chunks;
  const auto chunk = [&](json call) {
    json body = envelope(Endpoint::ChatCompletions, ids, true);
    body["choices"] = json::array({{{"index", index},
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
