// libFuzzer target for the server's request parser: the input is a request
// body, for /v1/chat/completions when its first byte is odd and for
// /v1/completions otherwise. Anything the parser cannot serve must be a
// RequestError with a 4xx status; a crash, a sanitizer report or another
// exception is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "apps/server/openai_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto endpoint = size > 0 && (data[0] & 1) ? kiln::Endpoint::ChatCompletions : kiln::Endpoint::Completions;
  try {
    kiln::parse_completion_request(body, endpoint);
  } catch (const kiln::RequestError& e) {
    if (e.status < 400 || e.status > 499) std::abort();  // the client's fault must be answered as such
  }
  return 0;
}
