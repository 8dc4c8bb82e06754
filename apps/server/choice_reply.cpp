#include "apps/server/choice_reply.hpp"

#include "apps/server/tool_prompt.hpp"

namespace kiln {

ChoiceReply::ChoiceReply(const Job& job, ToolCallFormat tool_format, const ReasoningSyntax& reasoning) {
  const CompletionRequest& r = job.request;
  const ReasoningFormat format = r.reasoning_format.value_or(ReasoningFormat::Auto);
  if (r.endpoint == Endpoint::ChatCompletions && !reasoning.empty() && format != ReasoningFormat::None)
    reasoning_.emplace(reasoning, starts_in_reasoning(reasoning, job.prompt.rendered.str()),
                       format == ReasoningFormat::DeepseekLegacy);
  if (uses_tools(r)) tools_.emplace(tool_format, r.tools);
}

ReplyParts ChoiceReply::push(const std::string& piece) {
  ReplyParts parts = reasoning_ ? reasoning_->push(piece) : ReplyParts{"", piece};
  if (tools_) parts.content = tools_->push(parts.content);
  return parts;
}

FinishedReply ChoiceReply::finish(CompletionResult& result) {
  FinishedReply out;
  if (reasoning_) out.text = reasoning_->finish();
  if (!tools_) return out;
  out.text.content = tools_->push(out.text.content);
  ParsedReply calls = tools_->finish();
  out.text.content += calls.content;
  out.calls = std::move(calls.calls);
  if (!out.calls.empty() && result.finish_reason == "stop") result.finish_reason = "tool_calls";
  return out;
}

}  // namespace kiln
