#include "apps/server/openai_logprobs.hpp"

namespace kiln {

namespace {

using nlohmann::json;

json bytes(const std::string& text) {
  json out = json::array();
  for (const char c : text) out.push_back(static_cast<unsigned char>(c));
  return out;
}

json chat_entry(const ScoredText& t) { return {{"token", t.text}, {"logprob", t.logprob}, {"bytes", bytes(t.text)}}; }

json chat_logprobs(const std::vector<TokenScore>& scores) {
  json content = json::array();
  for (const TokenScore& s : scores) {
    json entry = chat_entry(s.token);
    entry["top_logprobs"] = json::array();
    for (const ScoredText& t : s.top) entry["top_logprobs"].push_back(chat_entry(t));
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}};
}

json completion_logprobs(const std::vector<TokenScore>& scores) {
  json tokens = json::array(), token_logprobs = json::array(), top = json::array(), offsets = json::array();
  for (const TokenScore& s : scores) {
    tokens.push_back(s.token.text);
    offsets.push_back(s.text_offset);
    if (!s.scored) {
      token_logprobs.push_back(nullptr);
      top.push_back(nullptr);
      continue;
    }
    token_logprobs.push_back(s.token.logprob);
    json alternatives = json::object();
    for (const ScoredText& t : s.top)
      if (!alternatives.contains(t.text)) alternatives[t.text] = t.logprob;  // two tokens of one text: the likelier
    top.push_back(std::move(alternatives));
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace

json logprobs_json(Endpoint endpoint, const std::vector<TokenScore>& scores) {
  return endpoint == Endpoint::ChatCompletions ? chat_logprobs(scores) : completion_logprobs(scores);
}

}  // namespace kiln
