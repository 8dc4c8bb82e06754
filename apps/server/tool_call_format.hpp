// How a model writes a tool call, told from its chat template's text (the
// way llama-server picks a format: by the markers the template writes), and
// the control tokens whose text must stay in the reply for the call to be read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class ToolCallFormat {
  // No format of its own (ChatML, SmolLM3, Granite, ...): the
  // tools are described in the system prompt and the reply is one JSON
  // object, {"tool_call": {"name", "arguments"}}, {"tool_calls": [...]} or
  // {"response": "..."}.
  Generic,
  Hermes,    // Hermes 2/3, Qwen2.5, Qwen3: <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>
  QwenXml,   // Qwen3-Coder, Qwen3.5: <tool_call>\n<function=NAME>\n<parameter=P>\nvalue\n</parameter>\n</function>\n</tool_call>
  Llama31,   // Llama 3.1/3.2/3.3: {"name": ..., "parameters": {...}} as the whole reply
  Mistral,   // Mistral Small 3.2, Devstral: [TOOL_CALLS]NAME[ARGS]{...} (or [TOOL_CALLS][{"name", "arguments"}])
  // gpt-oss's harmony: messages on channels, a call being one addressed to
  // the function: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}
  Harmony,
  // Gemma 4: <|tool_call>call:NAME{key:value,...}<tool_call|>, strings between <|"|> marks
  Gemma4,
};

ToolCallFormat detect_tool_call_format(std::string_view template_source);
const char* tool_call_format_name(ToolCallFormat format);

// The text that opens a call ("<tool_call>", "[TOOL_CALLS]", "to=functions.", "<|tool_call>"); empty for
// formats whose call is the whole reply (Llama 3.1, generic).
std::string_view tool_call_marker(ToolCallFormat format);

// Control tokens (whose text decoding drops) that a reply in this format
// writes as part of a call: kept in the text, and allowed by grammars.
std::vector<std::string> tool_call_tokens(ToolCallFormat format);

}  // namespace kiln
