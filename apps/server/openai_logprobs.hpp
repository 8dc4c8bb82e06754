// Token scores (apps/server/token_scores.hpp) in OpenAI's two shapes: a
// chat's `logprobs.content` list and a completion's legacy columns.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "apps/server/openai_request.hpp"
#include "apps/server/token_scores.hpp"

namespace kiln {

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}]}.
// Completion: {"tokens", "token_logprobs", "top_logprobs" (a {token: logprob} object each), "text_offset"},
// null where a token is unscored (an echoed prompt's first).
nlohmann::json logprobs_json(Endpoint endpoint, const std::vector<TokenScore>& scores);

}  // namespace kiln
