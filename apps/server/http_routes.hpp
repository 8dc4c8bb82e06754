// The HTTP face of the server: the chat page at /, OpenAI's endpoints and
// llama-server's /health, /props and (with --metrics) /metrics on an httplib
// server, JSON errors for every failure, and server-sent events for streams;
// and what the connection layer (connection_layer.hpp) asks of a request's
// head before its body: the API key, and whether the route reads a body.
#pragma once

#include <string>

#include "apps/server/reasoning.hpp"
#include "apps/server/request_head.hpp"
#include "apps/server/tool_call_format.hpp"

namespace httplib {
class Server;
}

namespace kiln {

class Model;
class ServerMetrics;
class SlotScheduler;
namespace chat {
class ChatTemplate;
}

struct ServerContext {
  const Model& model;
  SlotScheduler& scheduler;
  const chat::ChatTemplate& chat_template;  // chats are rendered with it on the request's thread
  std::string model_id;       // "model" in responses and /v1/models
  std::string template_name;  // the chat template in use, for /props
  std::string api_key;        // --api-key; empty: no key asked for
  const ServerMetrics* metrics;  // --metrics: what GET /metrics reports; nullptr: no /metrics (404)
  ToolCallFormat tool_format;  // how the template's model writes tool calls
  ReasoningSyntax reasoning;   // how it marks its reasoning (empty: it does not)
  ReasoningFormat reasoning_format;  // --reasoning-format: what requests that name none get
  std::string chat_template_kwargs;  // --chat-template-kwargs (and --reasoning-budget 0): every chat's template variables
  int reasoning_budget;                  // --reasoning-budget above 0 (0 is enable_thinking false): for requests that give none
  std::string reasoning_budget_message;  // --reasoning-budget-message: likewise
};

void add_routes(httplib::Server& server, const ServerContext& context);

// "Authorization: Bearer KEY" or "X-Api-Key: KEY", as llama-server takes it;
// /health needs none.
bool key_accepted(const ServerContext& context, const RequestHead& head);
// A completion: read whole and served on a handler thread. Every other route
// answers at once and reads no body.
bool takes_body(const RequestHead& head);

}  // namespace kiln
