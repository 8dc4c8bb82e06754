// The JSON bodies the server answers with, in OpenAI's shapes: a whole
// completion, the chunks of a stream, and errors. `usage` is in every answer
// (in a stream, in its last chunk), with the prompt tokens the KV cache
// already held as usage.prompt_tokens_details.cached_tokens, and llama-server's
// `timings` beside it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/server/completion.hpp"
#include "apps/server/openai_request.hpp"

namespace kiln {

// What every chunk and answer of one request repeats.
struct ResponseIds {
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // Unix time
  std::string model;
};

ResponseIds new_response_ids(Endpoint endpoint, const std::string& model);

// The whole answer of a request that did not stream; a chat's message has
// `tool_calls` when there are calls (and null content if it has none).
nlohmann::json completion_body(Endpoint endpoint, const ResponseIds& ids, const std::string& text,
                               const CompletionResult& result, const std::vector<ToolCall>& calls = {});
// One chunk of a stream: a piece of text, or (with `result`) the last one,
// with its finish_reason and usage. For chats, `role_only` is the first
// chunk, which names the assistant role (as OpenAI sends it).
nlohmann::json completion_chunk(Endpoint endpoint, const ResponseIds& ids, const std::string& text,
                                const CompletionResult* result, bool role_only = false);

// The chunks of a stream that carry a chat's tool calls, as OpenAI streams
// them: for each call, its index, id, type and name with empty arguments,
// then its arguments.
std::vector<nlohmann::json> tool_call_chunks(const ResponseIds& ids, const std::vector<ToolCall>& calls);

// {"error": {"message", "type", "param", "code"}}.
nlohmann::json error_body(int status, const std::string& message, const std::string& param = "");

// JSON text as sent: bytes that are not UTF-8 become U+FFFD instead of failing.
std::string json_text(const nlohmann::json& j);

}  // namespace kiln
