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

void Conversation::add_message(const std::string& role, const std::string& content) {
  auto m = make_object();
  m->set("role", Value(role));
  m->set("content", Value(content));
  messages_.emplace_back(m);
}

ChatInputs Conversation::inputs() const {
  ChatInputs in;
  in.messages = Value(messages_);
  in.add_generation_prompt = true;
  in.bos_token = tok_.bos() >= 0 ? std::string(tok_.piece(tok_.bos())) : "";
  in.eos_token = tok_.eos() >= 0 ? std::string(tok_.piece(tok_.eos())) : "";
  in.now = now_;
  return in;
}

const std::vector<int32_t>& Conversation::prompt_for_reply() {
  const Text rendered = template_.render(inputs());
  const size_t before = tokens_.size();
  if (!tokens_.empty() && rendered.size() > text_.size() && rendered.str().starts_with(text_)) {
    const std::vector<int32_t> more = tokenize_rendered(tok_, rendered.substr(text_.size()), false, true);
    tokens_.insert(tokens_.end(), more.begin(), more.end());
    last_tokenized_ = static_cast<int>(tokens_.size() - before);
  } else {
    tokens_ = tokenize_rendered(tok_, rendered, true);
    last_tokenized_ = static_cast<int>(tokens_.size());
  }
  text_ = rendered.str();
  return tokens_;
}

void Conversation::add_reply(std::span<const int32_t> tokens, const std::string& text) {
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  text_ += text;
  add_message("assistant", text);
}

}  // namespace kiln::chat
