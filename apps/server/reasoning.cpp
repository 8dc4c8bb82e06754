#include "apps/server/reasoning.hpp"

namespace kiln {

std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name) {
  if (name == "none") return ReasoningFormat::None;
  if (name == "auto") return ReasoningFormat::Auto;
  if (name == "deepseek") return ReasoningFormat::Deepseek;
  if (name == "deepseek-legacy") return ReasoningFormat::DeepseekLegacy;
  return std::nullopt;
}

const char* reasoning_format_name(ReasoningFormat format) {
  switch (format) {
    case ReasoningFormat::None: return "none";
    case ReasoningFormat::Deepseek: return "deepseek";
    case ReasoningFormat::DeepseekLegacy: return "deepseek-legacy";
    case ReasoningFormat::Auto: break;
  }
  return "auto";
}

ReasoningSyntax detect_reasoning_syntax(std::string_view source) {
  const auto has = [&](std::string_view marker) { return source.find(marker) != std::string_view::npos; };
  // gpt-oss: the analysis message runs to <|end|>; an answer after it comes
  // as a new message on the final channel, whose header is no content.
  if (has("<|channel|>"))
    return {"<|channel|>analysis<|message|>", "<|end|>", {"<|start|>assistant", "<|channel|>final<|message|>"},
            {"<|channel|>", "<|message|>", "<|start|>", "<|end|>"}, ""};
  if (has("<|channel>")) return {"<|channel>thought", "<channel|>", {}, {"<|channel>", "<channel|>"}, ""};  // Gemma 4
  // A vocabulary may have them as control tokens too.
  if (has("<think>"))
    return {"<think>", "</think>", {}, {"<think>", "</think>"}, has("<function=") ? "<tool_call>" : ""};
  return {};
}

ReplyStart reply_start(const ReasoningSyntax& syntax, std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const std::string_view rest = first == std::string_view::npos ? "" : text.substr(first);
  if (syntax.open.starts_with(rest)) return {};
  return {true, rest.starts_with(syntax.open) ? first + syntax.open.size() : std::string_view::npos};
}

bool starts_in_reasoning(const ReasoningSyntax& syntax, std::string_view prompt) {
  if (syntax.empty()) return false;
  const size_t end = prompt.find_last_not_of(" \t\r\n");
  return end != std::string_view::npos && prompt.substr(0, end + 1).ends_with(syntax.open);
}

}  // namespace kiln
