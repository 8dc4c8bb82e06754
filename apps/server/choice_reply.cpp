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
  if (tools_ && !reasoning_ && !reasoning.empty() && r.endpoint == Endpoint::ChatCompletions)
    written_block_.emplace(reasoning, starts_in_reasoning(reasoning, job.prompt.rendered.str()));
}

ReplyParts ChoiceReply::push_written(const std::string& piece) {
  written_ += piece;
  written_block_->update(written_);
  const size_t content_from = written_block_->content_from();
  // While the reply may still open the block, it waits; inside it, it goes.
  const size_t reasoning_end = content_from != std::string::npos ? content_from
                               : written_block_->inside()        ? written_block_->reasoning_known()
                                                                 : passed_;
  ReplyParts out;
  if (reasoning_end > passed_) {
    out.content = written_.substr(passed_, reasoning_end - passed_);
    passed_ = reasoning_end;
  }
  if (content_from == std::string::npos) return out;
  out.content += tools_->push(written_.substr(passed_));
  passed_ = written_.size();
  return out;
}

ReplyParts ChoiceReply::push(const std::string& piece) {
  if (written_block_) return push_written(piece);
  ReplyParts parts = reasoning_ ? reasoning_->push(piece) : ReplyParts{"", piece};
  if (tools_) parts.content = tools_->push(parts.content);
  return parts;
}

FinishedReply ChoiceReply::finish(CompletionResult& result) {
  FinishedReply out;
  if (reasoning_) out.text = reasoning_->finish();
  if (written_block_ && written_block_->content_from() == std::string::npos) {  // all reasoning: no calls
    out.text.content = written_.substr(passed_);
    return out;
  }
  if (!tools_) return out;
  out.text.content = tools_->push(out.text.content);
  ParsedReply calls = tools_->finish();
  out.text.content += calls.content;
  out.calls = std::move(calls.calls);
  if (!out.calls.empty() && result.finish_reason == "stop") result.finish_reason = "tool_calls";
  return out;
}

}  // namespace kiln
