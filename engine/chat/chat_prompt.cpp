#include "engine/chat/chat_prompt.hpp"

namespace kiln::chat {

std::optional<std::string> gguf_chat_template(const GgufFile& f) {
  const std::string key = "tokenizer.chat_template";
  if (f.find(key) == nullptr) return std::nullopt;
  return f.get_string(key);
}

std::vector<int32_t> tokenize_rendered(const Tokenizer& tok, const Text& text, bool add_special, bool continues) {
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
  return tok.encode(body.str(), add_special, template_text, continues);
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

int extend_rendered(const Tokenizer& tok, const Text& rendered, const std::string& known_text,
                    std::vector<int32_t>& tokens) {
  if (!tokens.empty() && extends_text(rendered, known_text)) {
    const std::vector<int32_t> more = tokenize_rendered(tok, rendered.substr(known_text.size()), false, true);
    tokens.insert(tokens.end(), more.begin(), more.end());
    return static_cast<int>(more.size());
  }
  tokens = tokenize_rendered(tok, rendered, true);
  return static_cast<int>(tokens.size());
}

const std::vector<int32_t>& Conversation::prompt_for_reply() {
  const Text rendered = template_.render(reply_inputs(tok_, messages_, now_));
  last_tokenized_ = extend_rendered(tok_, rendered, text_, tokens_);
  text_ = rendered.str();
  return tokens_;
}

void Conversation::add_reply(std::span<const int32_t> tokens, const std::string& text) {
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  text_ += text;
  add_message("assistant", text);
}

}  // namespace kiln::chat
