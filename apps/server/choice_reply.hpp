// One choice's reply on the request's thread, as its text arrives: the
// reasoning told apart from the content (reasoning_reply.hpp) when the
// template shows reasoning and the request's reasoning_format asks for it,
// and the content's tool calls held back and read at the end (tool_reply.hpp)
// when the request's tools are in play; calls are read only after the
// reasoning, also with reasoning_format none. Plain completions pass through.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "apps/server/completion.hpp"
#include "apps/server/reasoning_block.hpp"
#include "apps/server/reasoning_reply.hpp"
#include "apps/server/tool_reply.hpp"

namespace kiln {

struct FinishedReply {
  ReplyParts text;  // what was held back
  std::vector<ToolCall> calls;
};

class ChoiceReply {
 public:
  // `job.request.reasoning_format` is set (the server's default applied).
  ChoiceReply(const Job& job, ToolCallFormat tool_format, const ReasoningSyntax& reasoning);

  // What can be sent now of the next piece.
  ReplyParts push(const std::string& piece);
  // At the end: the rest, and the calls; `result.finish_reason` becomes
  // "tool_calls" if there are any and the reply was not cut ("length" stays).
  FinishedReply finish(CompletionResult& result);

 private:
  // reasoning_format none with tools: the reasoning goes out as written.
  ReplyParts push_written(const std::string& piece);

  std::optional<ReasoningReply> reasoning_;
  std::optional<ToolReply> tools_;
  std::optional<ReasoningBlock> written_block_;  // reasoning_format none with tools: where the calls may start
  std::string written_;                          // ... the reply so far
  size_t passed_ = 0;                            // ... its bytes sent as reasoning or given to tools_
};

}  // namespace kiln
