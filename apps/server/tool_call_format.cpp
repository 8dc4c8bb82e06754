#include "apps/server/tool_call_format.hpp"

namespace kiln {

ToolCallFormat detect_tool_call_format(std::string_view source) {
  const auto has = [&](std::string_view marker) { return source.find(marker) != std::string_view::npos; };
  if (has("<|channel|>")) return ToolCallFormat::Harmony;
  if (has("<|tool_call>")) return ToolCallFormat::Gemma4;
  if (has("<function=")) return ToolCallFormat::QwenXml;  // before <tool_call>, which these templates also write
  if (has("<tool_call>")) return ToolCallFormat::Hermes;
  if (has("[TOOL_CALLS]")) return ToolCallFormat::Mistral;
  if (has("<|start_header_id|>ipython") || has("<|python_tag|>")) return ToolCallFormat::Llama31;
  return ToolCallFormat::Generic;
}

const char* tool_call_format_name(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::Hermes: return "hermes";
    case ToolCallFormat::QwenXml: return "qwen-xml";
    case ToolCallFormat::Llama31: return "llama-3.1";
    case ToolCallFormat::Mistral: return "mistral";
    case ToolCallFormat::Harmony: return "harmony";
    case ToolCallFormat::Gemma4: return "gemma4";
    case ToolCallFormat::Generic: break;
  }
  return "generic";
}

std::string_view tool_call_marker(ToolCallFormat format) {
  if (format == ToolCallFormat::Hermes || format == ToolCallFormat::QwenXml) return "<tool_call>";
  if (format == ToolCallFormat::Mistral) return "[TOOL_CALLS]";
  if (format == ToolCallFormat::Harmony) return "to=functions.";
  if (format == ToolCallFormat::Gemma4) return "<|tool_call>";
  return "";
}

std::vector<std::string> tool_call_tokens(ToolCallFormat format) {
  if (format == ToolCallFormat::Mistral) return {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"};
  if (format == ToolCallFormat::Llama31) return {"<|python_tag|>"};
  if (format == ToolCallFormat::Harmony) return {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};
  if (format == ToolCallFormat::Gemma4) return {"<|tool_call>", "<tool_call|>", "<|\"|>"};
  return {};
}

}  // namespace kiln
