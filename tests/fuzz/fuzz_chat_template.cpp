// libFuzzer target for the template renderer: the input is a template, and
// after a NUL byte, if any, the messages as JSON. Any failure must be a
// kiln::Error; a crash, a sanitizer report or another exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/chat/chat_template.hpp"
#include "engine/chat/json.hpp"
#include "engine/error/error.hpp"

namespace {

kiln::chat::Value default_messages() {
  return kiln::chat::parse_json(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": " Grüße <|im_end|> 🎉 "},)"
      R"( {"role": "assistant", "content": "<think>\nhm\n</think>\n\nYes.", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},)"
      R"( {"role": "user", "content": ""}])");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  try {
    kiln::chat::ChatInputs in;
    in.messages = default_messages();
    if (split != std::string_view::npos) {
      try {
        in.messages = kiln::chat::parse_json(input.substr(split + 1));
      } catch (const kiln::Error&) {
        // not JSON: keep the default conversation
      }
    }
    in.bos_token = "<s>";
    in.eos_token = "</s>";
    const kiln::chat::ChatTemplate tmpl(input.substr(0, split), "fuzz");
    tmpl.render(in);
  } catch (const kiln::Error&) {
    // a template kiln refuses, with a message: expected
  }
  return 0;
}
