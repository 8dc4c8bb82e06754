// libFuzzer target for the server's request parser: the input is a request
// body, for /v1/chat/completions when its first byte is odd and for
// /v1/completions otherwise. Anything the parser cannot serve must be a
// RequestError with a 4xx status; a crash, a sanitizer report or another
// exception is a bug. A request that parses has its tools' grammar made in
// every tool-call format (the same rule), and the body is read as a reply
// in each (which must never throw).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "apps/server/openai_request.hpp"
#include "apps/server/tool_call_grammar.hpp"
#include "apps/server/tool_call_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto endpoint = size > 0 && (data[0] & 1) ? kiln::Endpoint::ChatCompletions : kiln::Endpoint::Completions;
  using kiln::ToolCallFormat;
  constexpr ToolCallFormat kFormats[] = {ToolCallFormat::Generic, ToolCallFormat::Hermes, ToolCallFormat::QwenXml,
                                         ToolCallFormat::Llama31, ToolCallFormat::Mistral, ToolCallFormat::Harmony,
                                         ToolCallFormat::Gemma4};
  try {
    const kiln::CompletionRequest r = kiln::parse_completion_request(body, endpoint);
    for (const ToolCallFormat format : kFormats) {
      kiln::CompletionRequest with_grammar = r;
      kiln::apply_tool_grammar(with_grammar, format);
      kiln::parse_tool_calls(format, body, r.tools);
    }
  } catch (const kiln::RequestError& e) {
    if (e.status < 400 || e.status > 499) std::abort();  // the client's fault must be answered as such
  }
  return 0;
}
