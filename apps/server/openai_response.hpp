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
#include "apps/server/token_scores.hpp"

namespace kiln {

// What every chunk and answer of one request repeats.
struct ResponseIds {
  std::string id;       // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // Unix time
  std::string model;
};

ResponseIds new_response_ids(Endpoint endpoint, const std::string& model);

// One choice of an answer (n of them with n > 1): its text, how it ended,
// with logprobs its tokens' scores, the tool calls read from it and, for a
// chat, its reasoning.
struct ChoiceText {
  std::string text;
  std::string reasoning;  // a chat's reasoning_content; empty: none
  std::vector<TokenScore> scores;
  std::string finish_reason;
  std::vector<ToolCall> calls;
};

// The usage of a request's n choices: the prompt once (as the first choice
// computed it), the generated tokens and times of all of them.
CompletionResult combined_usage(const std::vector<CompletionResult>& choices);

// The whole answer of a request that did not stream; `logprobs`: each
// choice's scores are reported (else its logprobs are null). A chat choice
// with calls has `tool_calls` (and null content if it has none).
nlohmann::json completion_body(Endpoint endpoint, const ResponseIds& ids, const std::vector<ChoiceText>& choices,
                               bool logprobs, const CompletionResult& usage);

// What one chunk of a stream says about choice `index`: a piece of text
// and of reasoning (with its tokens' scores, if asked for), or its finish_reason. For chats,
// `role_only` is a choice's first chunk, which names the assistant role (as
// OpenAI sends it).
struct ChunkChoice {
  int index = 0;
  std::string text;
  std::string reasoning;  // a chat's reasoning_content delta; empty: none
  const std::vector<TokenScore>* scores = nullptr;  // nullptr: logprobs null
  std::string finish_reason;                        // empty: not finished
  bool role_only = false;
};
// One chunk of a stream; the very last one also has `usage`.
nlohmann::json completion_chunk(Endpoint endpoint, const ResponseIds& ids, const ChunkChoice& choice,
                                const CompletionResult* usage = nullptr);

// The chunks of a stream that carry the tool calls of chat choice `index`,
// as OpenAI streams them: for each call, its index, id, type and name with
// empty arguments, then its arguments.
std::vector<nlohmann::json> tool_call_chunks(const ResponseIds& ids, int index, const std::vector<ToolCall>& calls);

// {"error": {"message", "type", "param", "code"}}.
nlohmann::json error_body(int status, const std::string& message, const std::string& param = "");

// JSON text as sent: bytes that are not UTF-8 become U+FFFD instead of failing.
std::string json_text(const nlohmann::json& j);

}  // namespace kiln
