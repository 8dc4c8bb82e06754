#include "engine/chat/chat_prompt.hpp"

namespace kiln::chat {

std::optional<std::string> gguf_chat_template(const GgufFile& f) {
  const std::string key = "tokenizer.chat_template";
  if (f.find(key) == nullptr) return std::nullopt;
  return f.get_string(key);
}

std::vector<int32_t> tokenize_rendered(const Tokenizer& tok, const Text& text, bool add_special, bool continues) {
  return *tokenize_rendered_at_most(SIZE_MAX, tok, text, add_special, continues);
}

std::optional<std::vector<int32_t>> tokenize_rendered_at_most(size_t max_tokens, const Tokenizer& tok, const Text& text,
                                                              bool add_special, bool continues) {
  Text body = text;
  if (add_special && tok.adds_bos() && tok.bos() >= 0) {
    const std::string_view bos = tok.piece(tok.bos());
    if (!bos.empty() && text.str().starts_with(bos) && !text.is_user(0)) body = text.substr(bos.size());
  }
  const auto template_text = [&body](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      if (body.is_user(i)) return false;
    return true;
  };
  return tok.encode_at_most(max_tokens, body.str(), add_special, template_text, continues);
}

Conversation::Conversation(const Tokenizer& tok, ChatTemplate tmpl, std::tm now)
    : tok_(tok), template_(std::move(tmpl)), now_(now) {}

Value chat_message(const std::string& role, const std::string& content) {
  auto m = make_object();
  m->set("role", Value(role));
  m->set("content", Value(content));
  return Value(m);
}

ChatInputs reply_inputs(const Tokenizer& tok, Array messages, std::tm now) {
  ChatInputs in;
  in.messages = Value(std::move(messages));
  in.add_generation_prompt = true;
  in.bos_token = tok.bos() >= 0 ? std::string(tok.piece(tok.bos())) : "";
  in.eos_token = tok.eos() >= 0 ? std::string(tok.piece(tok.eos())) : "";
  in.now = now;
  return in;
}

void Conversation::add_message(const std::string& role, const std::string& content) {
  messages_.push_back(chat_message(role, content));
}

bool extends_text(const Text& rendered, const std::string& known_text) {
  return !known_text.empty() && rendered.size() > known_text.size() && rendered.str().starts_with(known_text);
}

std::optional<int> extend_rendered(const Tokenizer& tok, const Text& rendered, const std::string& known_text,
                                   std::vector<int32_t>& tokens, size_t max_tokens) {
  const bool extends = !tokens.empty() && extends_text(rendered, known_text);
  if (extends && tokens.size() > max_tokens) return std::nullopt;
  const std::optional<std::vector<int32_t>> more =
      extends ? tokenize_rendered_at_most(max_tokens - tokens.size(), tok, rendered.substr(known_text.size()), false, true)
              : tokenize_rendered_at_most(max_tokens, tok, rendered, true);
  if (!more) return std::nullopt;
  if (!extends) tokens.clear();
  tokens.insert(tokens.end(), more->begin(), more->end());
  return static_cast<int>(more->size());
}

std::optional<std::vector<int32_t>> Conversation::prompt_for_reply(size_t max_tokens) {
  const Text rendered = template_.render(reply_inputs(tok_, messages_, now_));
  const std::optional<int> tokenized = extend_rendered(tok_, rendered, text_, tokens_, max_tokens);
  if (!tokenized) {
    messages_.pop_back();
    return std::nullopt;
  }
  last_tokenized_ = *tokenized;
  text_ = rendered.str();
  return tokens_;
}

void Conversation::add_reply(std::span<const int32_t> tokens, const std::string& text) {
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  text_ += text;
  add_message("assistant", text);
}

}  // namespace kiln::chat
