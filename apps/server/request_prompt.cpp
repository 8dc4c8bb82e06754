#include "apps/server/request_prompt.hpp"

#include "engine/chat/chat_prompt.hpp"
#include "engine/error.hpp"
#include "engine/session/session.hpp"
#include "apps/cli_chat.hpp"

namespace kiln {

RequestPrompt request_prompt(const Model& model, const chat::ChatTemplate& chat_template, const CompletionRequest& r) {
  const Tokenizer& tok = model.tokenizer();
  RequestPrompt p;
  if (r.endpoint == Endpoint::ChatCompletions) {
    chat::Array messages;
    for (const ChatMessage& m : r.messages) messages.push_back(chat::chat_message(m.role, m.content));
    try {
      p.rendered = chat_template.render(chat::reply_inputs(tok, std::move(messages), local_now()));
    } catch (const Error& e) {  // the template refused the conversation (raise_exception) or could not render it
      throw RequestError(400, std::string("the chat template cannot render these messages: ") + e.what(), "messages");
    }
    p.tokens = chat::tokenize_rendered(tok, p.rendered, /*add_special=*/true);
  } else {
    p.tokens = tok.encode(r.prompt, /*add_special=*/true, /*parse_special=*/true);
  }
  if (p.tokens.empty()) throw RequestError(400, "the prompt encodes to no tokens", "prompt");
  check_request_fits(model, r, p.tokens.size());
  return p;
}

void check_request_fits(const Model& model, const CompletionRequest& r, size_t n_tokens) {
  try {
    check_prompt_fits(model, n_tokens);
  } catch (const Error& e) {
    throw RequestError(400, e.what(), r.endpoint == Endpoint::ChatCompletions ? "messages" : "prompt");
  }
}

}  // namespace kiln
