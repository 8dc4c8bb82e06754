// The template variables a chat adds beside `messages` and `tools`, as
// llama-server takes them: the server's --chat-template-kwargs (with
// --reasoning-budget 0, enable_thinking false under them), and a request's
// chat_template_kwargs over those, key by key.
#pragma once

#include <string>

namespace kiln {

// The server's variables as a JSON object's text ("" for none). Throws
// kiln::Error naming --chat-template-kwargs if `flag` is not a JSON object.
std::string server_template_kwargs(const std::string& flag, int reasoning_budget);

// `server`'s variables with `request`'s over them (both a JSON object's text or "").
std::string merged_template_kwargs(const std::string& server, const std::string& request);

}  // namespace kiln
