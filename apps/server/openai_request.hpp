// The body of an OpenAI completion or chat completion request, read and
// checked: every field kiln uses, with its type and range, and a RequestError
// (HTTP 400, naming the field) for anything it cannot serve.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.hpp"
#include "engine/session/sampler.hpp"
#include "apps/server/reasoning.hpp"

namespace kiln {

// An error the client caused: the HTTP status and the field it concerns.
class RequestError : public std::runtime_error {
 public:
  RequestError(int http_status, const std::string& message, std::string field = "")
      : std::runtime_error(message), status(http_status), param(std::move(field)) {}
  int status;
  std::string param;  // the request field, or empty
};

enum class Endpoint { Completions, ChatCompletions };

// A function call in an assistant message, or one the model made.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // a JSON object's text
};

struct ChatMessage {
  std::string role;  // system, developer, user, assistant or tool
  std::string content;
  std::string reasoning_content;     // assistant: its reasoning, for templates that show it (Qwen3, Gemma 4)
  std::vector<ToolCall> tool_calls;  // assistant: the calls it made
  std::string tool_call_id;          // tool: the call it answers
  std::string name;                  // tool: the function's name, if given
};

// A function the model may call: `tools[i].function`.
struct Tool {
  std::string name;
  std::string parameters;  // its arguments' JSON schema, as JSON text
  std::string json;        // the whole {"type": "function", "function": {...}} entry, for the template
};

enum class ToolChoice { Auto, None, Required, Named };

inline constexpr int kMaxChoices = 16;               // n
inline constexpr int kMaxTopLogprobsChat = 20;       // top_logprobs, as OpenAI
inline constexpr int kMaxTopLogprobsCompletion = 5;  // a completion's logprobs, as OpenAI

struct CompletionRequest {
  Endpoint endpoint = Endpoint::Completions;
  std::string prompt;                 // /v1/completions
  std::vector<int32_t> prompt_tokens;  // /v1/completions: the prompt as token ids (then `prompt` is empty)
  std::vector<ChatMessage> messages;  // /v1/chat/completions
  int max_tokens = -1;                // -1: until an end-of-generation token or a full context
  SamplerParams sampling;             // llama.cpp's defaults where the request says nothing
  std::vector<std::string> stop;      // the text ends before the first of these
  bool stream = false;
  int n = 1;              // choices, each sampled on its own (seeds seed, seed + 1, ... when given)
  bool logprobs = false;  // each generated token's log-probability (engine/session/token_logprobs.hpp)
  int top_logprobs = 0;   // and this many of the likeliest tokens at its position
  bool echo = false;      // /v1/completions: the prompt before the text, its tokens scored too with logprobs
  // What the output must follow (grammar, json_schema, response_format, or
  // a tool call that tool_choice forces), or none.
  std::shared_ptr<const grammar::Grammar> grammar;
  std::vector<Tool> tools;                 // empty: none offered
  ToolChoice tool_choice = ToolChoice::Auto;
  std::string forced_function;             // ToolChoice::Named: the function's name
  bool parallel_tool_calls = true;         // more than one call per reply
  // tool_choice auto: once the reply writes `call_trigger` (the format's
  // opening marker), the rest of it, from the marker on, follows `call_grammar`.
  std::shared_ptr<const grammar::Grammar> call_grammar;
  std::string call_trigger;
  // Chats: what to do with the model's reasoning (nullopt: the server's
  // --reasoning-format), and more template variables (a JSON object's text;
  // empty: none), such as {"enable_thinking": false}.
  std::optional<ReasoningFormat> reasoning_format;
  std::string chat_template_kwargs;
  // Chats: tokens of reasoning after which the reply is made to end it
  // (llama-server's reasoning_budget_tokens; -1: the server's
  // --reasoning-budget), and the text written before its close marker then
  // (nullopt: the server's --reasoning-budget-message).
  int reasoning_budget = -1;
  std::optional<std::string> reasoning_budget_message;
};

// Throws RequestError (400) for malformed JSON, a missing or mistyped field,
// a value out of range, and for tools that are not a list of named functions
// or a tool_choice naming none of them. Fields it does not know are ignored, as
// OpenAI clients send more than every server reads.
CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint);

}  // namespace kiln
