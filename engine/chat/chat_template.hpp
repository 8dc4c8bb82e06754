// A model's chat template (the Jinja text in GGUF's tokenizer.chat_template),
// rendered by kiln's own renderer for the subset of Jinja real templates use,
// in the environment Hugging Face's transformers gives them: trim_blocks and
// lstrip_blocks, break/continue, raise_exception(), strftime_now(), tojson
// keeping non-ASCII characters.
#pragma once

#include <ctime>
#include <memory>
#include <string>

#include "engine/chat/template_ast.hpp"
#include "engine/chat/text.hpp"
#include "engine/chat/value.hpp"

namespace kiln::chat {

struct ChatInputs {
  Value messages;  // a list of {"role": ..., "content": ...} objects (any JSON values)
  bool add_generation_prompt = true;
  std::string bos_token;
  std::string eos_token;
  std::shared_ptr<Object> extra;  // more variables (tools, enable_thinking, ...); may be null
  std::tm now{};                  // the date strftime_now() formats
};

class ChatTemplate {
 public:
  // Parses `source`; `name` prefixes error positions ("<name>:<line>:<column>").
  // Throws kiln::Error for a syntax error or an unsupported statement.
  ChatTemplate(std::string_view source, std::string name);

  // The prompt the template writes for `inputs`. Every string of
  // `inputs.messages` (and of `extra`) is user content: the result marks
  // which bytes came from it (see Text). Throws kiln::Error with the position
  // for anything that fails, including the template's raise_exception.
  Text render(const ChatInputs& inputs) const;

  const std::string& name() const { return name_; }
  // The template's text (the server tells a model's tool-call format from it).
  const std::string& source() const { return source_; }

 private:
  std::string name_;
  std::string source_;
  std::shared_ptr<const Body> body_;
};

// ChatML, the fallback for a model whose GGUF has no chat template (as
// llama.cpp's default): <|im_start|>role\ncontent<|im_end|>\n per message.
extern const char* const kChatMlTemplate;

}  // namespace kiln::chat
