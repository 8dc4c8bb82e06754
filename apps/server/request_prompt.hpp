// A request's prompt as tokens, made on the request's own HTTP thread before
// it waits for a slot, so that the worker thread does not stall the other
// slots' decoding on a long prompt and the scheduler can steer the request to
// the slot whose KV cache shares the most with it (apps/server/slot_scheduler.hpp).
// The tokenizer and the chat template are only read, so any number of
// threads may do this at once.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/chat/chat_template.hpp"
#include "engine/model/model.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/tool_call_format.hpp"

namespace kiln {

struct RequestPrompt {
  std::vector<int32_t> tokens;  // the whole prompt, tokenized afresh
  chat::Text rendered;          // a chat's text as the template wrote it; empty for /v1/completions
  // Where other conversations are likely to part from this one (the end of
  // its system prompt), for Session::ingest_prompt's window checkpoint; 0: none.
  size_t branch_point = 0;
};

// A chat is rendered with `chat_template` (its tools as `format` has them:
// apps/server/tool_prompt.hpp) and tokenized with special tokens
// only where the template wrote them; a plain prompt reads special-token text
// as those tokens (as llama.cpp and the program's -p do). Throws RequestError
// (400) for a conversation the template refuses, a prompt of no tokens or one
// longer than the context.
RequestPrompt request_prompt(const Model& model, const chat::ChatTemplate& chat_template, ToolCallFormat format,
                             const CompletionRequest& r);

// Throws RequestError (400) naming the request's prompt field if `n_tokens` do not fit in the context.
void check_request_fits(const Model& model, const CompletionRequest& r, size_t n_tokens);

}  // namespace kiln
