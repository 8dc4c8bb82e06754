// What a chat request hands its template: the messages as the template reads
// them (an assistant's tool_calls with object arguments, a tool result's
// tool_call_id and name) and the `tools` variable. For a template with no
// tool format of its own (ToolCallFormat::Generic) the tools are described
// in the system prompt instead, and earlier calls are written as the JSON
// the model is asked to answer with.
#pragma once

#include <memory>

#include "engine/chat/value.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/tool_call_format.hpp"

namespace kiln {

chat::Array template_messages(const CompletionRequest& r, ToolCallFormat format);

// The variables beside `messages`: the request's chat_template_kwargs, and
// `tools` when the request offers tools, its tool_choice is not none and the
// template writes them itself; nullptr when there are none.
std::shared_ptr<chat::Object> template_variables(const CompletionRequest& r, ToolCallFormat format);

// Whether the request's tools are in play: offered, and tool_choice not none.
bool uses_tools(const CompletionRequest& r);

}  // namespace kiln
