#include "apps/server/request_prompt.hpp"

#include <algorithm>
#include <optional>

#include "engine/chat/chat_prompt.hpp"
#include "engine/error/error.hpp"
#include "engine/session/session.hpp"
#include "apps/cli_chat.hpp"
#include "apps/server/tool_prompt.hpp"

namespace kiln {

namespace {

const char* prompt_field(const CompletionRequest& r) {
  return r.endpoint == Endpoint::ChatCompletions ? "messages" : "prompt";
}

chat::Text render_chat(const chat::ChatTemplate& chat_template, const Tokenizer& tok, ToolCallFormat format,
                       const CompletionRequest& r) {
  chat::ChatInputs inputs = chat::reply_inputs(tok, template_messages(r, format), local_now());
  inputs.extra = template_variables(r, format);
  return chat_template.render(inputs);
}

bool is_system(const ChatMessage& m) { return m.role == "system" || m.role == "developer"; }

// Where conversations that share this one's system prompt part from it: the
// tokens its rendering shares with the same conversation whose first other
// message is empty. 0 without a system prompt, or where a model keeps every
// position anyway (Model::kv_ring_rows: the point is a window checkpoint).
size_t system_prompt_end(const Model& model, const chat::ChatTemplate& chat_template, ToolCallFormat format,
                         const CompletionRequest& r, const std::vector<int32_t>& tokens) {
  const auto first_other = std::find_if_not(r.messages.begin(), r.messages.end(), is_system);
  if (model.kv_ring_rows() == 0 || first_other == r.messages.begin() || first_other == r.messages.end()) return 0;
  CompletionRequest without = r;
  without.messages[size_t(first_other - r.messages.begin())].content.clear();
  try {
    const chat::Text rendered = render_chat(chat_template, model.tokenizer(), format, without);
    const std::optional<std::vector<int32_t>> other =
        chat::tokenize_rendered_at_most(tokens.size(), model.tokenizer(), rendered, /*add_special=*/true);
    return other ? common_prefix_length(*other, tokens) : 0;
  } catch (const Error&) {  // a template that refuses an empty message: no checkpoint
    return 0;
  }
}

}  // namespace

RequestPrompt request_prompt(const Model& model, const chat::ChatTemplate& chat_template, ToolCallFormat format,
                             const CompletionRequest& r) {
  const Tokenizer& tok = model.tokenizer();
  const size_t n_ctx = static_cast<size_t>(model.n_ctx());
  RequestPrompt p;
  std::optional<std::vector<int32_t>> tokens;
  // Tokenizing gives up as soon as the prompt is known not to fit.
  if (r.endpoint == Endpoint::ChatCompletions) {
    try {
      p.rendered = render_chat(chat_template, tok, format, r);
    } catch (const Error& e) {  // the template refused the conversation (raise_exception) or could not render it
      throw RequestError(400, std::string("the chat template cannot render these messages: ") + e.what(), "messages");
    }
    tokens = chat::tokenize_rendered_at_most(n_ctx, tok, p.rendered, /*add_special=*/true);
  } else {
    tokens = tok.encode_at_most(n_ctx, r.prompt, /*add_special=*/true, /*parse_special=*/true);
  }
  if (!tokens) throw RequestError(400, prompt_longer_than_context(model), prompt_field(r));
  p.tokens = std::move(*tokens);
  if (p.tokens.empty()) throw RequestError(400, "the prompt encodes to no tokens", "prompt");
  if (r.endpoint == Endpoint::ChatCompletions) p.branch_point = system_prompt_end(model, chat_template, format, r, p.tokens);
  return p;
}

void check_request_fits(const Model& model, const CompletionRequest& r, size_t n_tokens) {
  try {
    check_prompt_fits(model, n_tokens);
  } catch (const Error& e) {
    throw RequestError(400, e.what(), prompt_field(r));
  }
}

}  // namespace kiln
