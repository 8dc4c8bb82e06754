// The grammar of a reply that must call a tool (tool_choice required or a
// named function): a well-formed call in the template's format whose
// arguments satisfy the function's parameters schema, one call or, with
// parallel_tool_calls, several. In the generic format the whole reply is
// JSON, so it has a grammar with tool_choice auto too: a call or
// {"response": "..."}.
#pragma once

#include <string>

#include "apps/server/openai_request.hpp"
#include "apps/server/tool_call_format.hpp"

namespace kiln {

// The GBNF for the request's tools, or "" when its tool_choice leaves the
// reply free. Throws kiln::Error for a schema the grammar cannot enforce.
std::string tool_call_gbnf(const CompletionRequest& r, ToolCallFormat format);

// With tool_choice auto, in a format whose calls open with a marker
// (tool_call_marker): the GBNF of the calls from the marker on, which a
// call the model starts then follows; "" otherwise.
std::string started_call_gbnf(const CompletionRequest& r, ToolCallFormat format);

// Sets r.grammar to tool_call_gbnf's grammar, if any, else r.call_grammar
// and r.call_trigger to started_call_gbnf's. Throws RequestError (400): a
// schema that cannot be enforced, or a forced call in a request that also
// has its own grammar, json_schema or response_format.
void apply_tool_grammar(CompletionRequest& r, ToolCallFormat format);

}  // namespace kiln
