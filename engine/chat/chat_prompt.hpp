// From a conversation to prompt tokens: which template a model uses, and
// tokenizing the rendered text so that special tokens come only from the
// template's own text, never from user content.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/chat/chat_template.hpp"
#include "engine/gguf/gguf.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace kiln::chat {

// tokenizer.chat_template of the file, if it has one.
std::optional<std::string> gguf_chat_template(const GgufFile& f);

// Tokens of rendered template text. Control tokens ("<|im_end|>") are read
// only where every byte of them is the template's own text; user content is
// plain text however it is spelled. add_special: BOS (and EOS) as the vocab
// asks, and then a BOS the template wrote at the very start is dropped so it
// is not there twice (as llama.cpp does). continues: see Tokenizer::encode.
std::vector<int32_t> tokenize_rendered(const Tokenizer& tok, const Text& text, bool add_special, bool continues = false);
// tokenize_rendered, giving up (nullopt) as soon as the text is known to need
// more than `max_tokens` tokens (Tokenizer::encode_at_most).
std::optional<std::vector<int32_t>> tokenize_rendered_at_most(size_t max_tokens, const Tokenizer& tok, const Text& text,
                                                              bool add_special, bool continues = false);

// A {"role": ..., "content": ...} message of a template's `messages` list.
Value chat_message(const std::string& role, const std::string& content);
// What a template gets to write the prompt for the assistant's next reply to
// `messages`: the vocabulary's BOS and EOS text, and `now` for its date.
ChatInputs reply_inputs(const Tokenizer& tok, Array messages, std::tm now);

// Whether `rendered` goes on from `known_text` (a non-empty text it starts
// with and is longer than): what extend_rendered keeps tokens for.
bool extends_text(const Text& rendered, const std::string& known_text);

// Makes `tokens` the tokens of `rendered`, given that they now stand for
// `known_text`: when `rendered` extends that text, they are kept and only the
// added text is tokenized (continuing them), so earlier tokens, generated
// replies included, stay as they were; otherwise all of `rendered` is
// tokenized afresh. Returns how many tokens were tokenized; nullopt, with
// `tokens` as they were, if they would be more than `max_tokens` in all.
std::optional<int> extend_rendered(const Tokenizer& tok, const Text& rendered, const std::string& known_text,
                                   std::vector<int32_t>& tokens, size_t max_tokens = SIZE_MAX);

// A conversation in a model's chat format, as the tokens of its KV context.
// Each turn's prompt keeps the tokens of earlier turns as they are (including
// the generated replies) and tokenizes only the text the template added since,
// so a session computes only the new tokens. When the template rewrites
// earlier text (e.g. drops an earlier reply's reasoning), the whole
// conversation is tokenized again and the session's prefix reuse keeps what
// still matches.
class Conversation {
 public:
  Conversation(const Tokenizer& tok, ChatTemplate tmpl, std::tm now);

  void add_message(const std::string& role, const std::string& content);
  // The context to generate the assistant's next reply from; nullopt if it
  // would be more than `max_tokens` tokens, and then the last message added
  // is dropped, which leaves the conversation as it was before it.
  std::optional<std::vector<int32_t>> prompt_for_reply(size_t max_tokens = SIZE_MAX);
  // The reply as generated: its tokens (without the end-of-generation token)
  // and their text, which becomes the assistant message.
  void add_reply(std::span<const int32_t> tokens, const std::string& text);

  // The text the template rendered for the last prompt.
  const std::string& rendered() const { return text_; }
  // How many tokens the last prompt_for_reply tokenized (the rest were kept).
  int last_tokenized() const { return last_tokenized_; }

 private:
  const Tokenizer& tok_;
  ChatTemplate template_;
  std::tm now_;
  Array messages_;
  std::vector<int32_t> tokens_;  // the context: prompts and replies
  std::string text_;             // the text tokens_ stand for
  int last_tokenized_ = 0;
};

}  // namespace kiln::chat
