// A model's reasoning, as its chat template shows the model writes it, and
// what a request asks to be done with it (llama-server's `reasoning_format`):
// Qwen3, Qwen3.5, SmolLM3 and DeepSeek-R1 think between <think> and
// </think>, gpt-oss on harmony's analysis channel, Gemma 4 on its thought
// channel.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// llama-server's names. None leaves the reasoning in the content; Deepseek
// moves it to `reasoning_content`; DeepseekLegacy fills `reasoning_content`
// and leaves the content as written, markers included; Auto is Deepseek.
enum class ReasoningFormat { None, Auto, Deepseek, DeepseekLegacy };

// "none", "auto", "deepseek" or "deepseek-legacy"; nullopt for anything else.
std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name);
const char* reasoning_format_name(ReasoningFormat format);

// How the template's model marks its reasoning: the text between `open` and
// `close`. `dropped` are a format's message headers that are neither
// reasoning nor content (harmony's final channel's); `tokens` the control
// tokens they are written with, whose text decoding would drop, so the
// reply keeps them. `call_closes`: a tool call's marker that also ends the
// reasoning and begins the content (Qwen3-Coder and Qwen3.5's <tool_call>,
// as llama.cpp reads their replies); empty for others, whose calls wait for
// the close. Empty `open`: the template shows no reasoning.
struct ReasoningSyntax {
  std::string open;
  std::string close;
  std::vector<std::string> dropped;
  std::vector<std::string> tokens;
  std::string call_closes;
  bool empty() const { return open.empty(); }
};

// Told from the template's text, as detect_tool_call_format tells calls.
ReasoningSyntax detect_reasoning_syntax(std::string_view template_source);

// How a reply that starts with `text` begins: not yet known while `text`,
// after whitespace, may still become the open marker; else whether it opens
// the block (the block opens only at the reply's start, as llama-server reads
// it; later its marker is text), and where the reasoning then starts.
struct ReplyStart {
  bool known = false;
  size_t reasoning_from = std::string_view::npos;  // known: after the open marker; npos: no block
};
ReplyStart reply_start(const ReasoningSyntax& syntax, std::string_view text);

// Whether a reply to `prompt` starts inside the reasoning: the template
// opened the block at the end of the prompt (DeepSeek-R1, Qwen3.5) and left
// it to the model to close.
bool starts_in_reasoning(const ReasoningSyntax& syntax, std::string_view prompt);

}  // namespace kiln
