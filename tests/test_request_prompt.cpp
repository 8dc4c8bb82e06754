// The server's prompt of a request (apps/server/request_prompt.hpp): where
// conversations that share a chat's system prompt part from it, the point a
// model with sliding-window rings keeps a window checkpoint at.
#include <doctest/doctest.h>

#include <string>

#include "apps/server/openai_request.hpp"
#include "apps/server/request_prompt.hpp"
#include "engine/chat/chat_template.hpp"
#include "engine/session/session_state.hpp"
#include "kiln_test_synth_gemma3.hpp"
#include "kiln_test_synth_qwen3.hpp"

using namespace kiln;

namespace {

// ChatML, as Qwen's templates write it.
constexpr const char* kChatMl =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

RequestPrompt prompt_of(const Model& model, const std::string& messages) {
  const chat::ChatTemplate chat_template(kChatMl, "chatml");
  const CompletionRequest r =
      parse_completion_request(R"({"messages": )" + messages + "}", Endpoint::ChatCompletions);
  return request_prompt(model, chat_template, ToolCallFormat::Generic, r);
}

std::string conversation(const std::string& question) {
  return R"([{"role": "system", "content": "Be brief."},)"
         R"( {"role": "user", "content": ")" + question + R"("}])";
}

}  // namespace

TEST_CASE("a chat's branch point is where its system prompt ends, in a model whose sliding layers keep a ring") {
  const auto gemma3 = models::kiln_test_synth_gemma3::load();
  const RequestPrompt a = prompt_of(*gemma3, conversation("Two plus two?"));
  const RequestPrompt b = prompt_of(*gemma3, conversation("Sky colour?"));
  const size_t shared = common_prefix_length(a.tokens, b.tokens);
  // The system turn and the user turn's header: everything but the question.
  CHECK(a.branch_point > 30);
  CHECK(a.branch_point <= shared);
  CHECK(b.branch_point <= shared);
  CHECK(shared - a.branch_point <= 2);  // at most the question's first characters, where they tokenize alike

  // No system prompt: nothing to share; a plain completion: no messages.
  CHECK(prompt_of(*gemma3, R"([{"role": "user", "content": "Hi"}])").branch_point == 0);
  // A model whose every layer keeps every position needs no checkpoint.
  const auto qwen3 = models::kiln_test_synth_qwen3::load();
  CHECK(prompt_of(*qwen3, conversation("Two plus two?")).branch_point == 0);
}
