// libFuzzer target for the connection layer's readers of hostile bytes
// (apps/server/request_head, chunked_body): the input is what a client sends.
// Its head, once one ends, is parsed, and what follows it is decoded as a
// chunked body fed in pieces whose size the first byte picks; the head's end
// must be found the same whether searched at once or a piece at a time.
// Anything refused must be a RequestError with a 4xx or 5xx status; a
// crash, a sanitizer report, another exception or a body over its limit is
// a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "apps/server/chunked_body.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/request_head.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = data[0] % 17 + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t end = kiln::find_head_end(bytes, 0);
  size_t searched = 0, found = 0;
  for (size_t n = step; found == 0 && searched < bytes.size(); n += step) {
    found = kiln::find_head_end(bytes.substr(0, n), searched);
    searched = std::min(n, bytes.size());
  }
  if (found != end) std::abort();
  if (end == 0) return 0;
  try {
    kiln::parse_request_head(bytes.substr(0, end));
  } catch (const kiln::RequestError& e) {
    if (e.status < 400 || e.status > 599) std::abort();
  }
  constexpr size_t kMaxBody = 4096;
  kiln::ChunkedDecoder decoder(kMaxBody);
  std::string body;
  try {
    for (size_t at = end; at < bytes.size() && !decoder.done();) {
      const size_t used = decoder.feed(bytes.substr(at, step), body);
      if (used == 0 || used > step) std::abort();
      at += used;
    }
  } catch (const kiln::RequestError& e) {
    if (e.status != 400 && e.status != 413) std::abort();
  }
  if (body.size() > kMaxBody) std::abort();
  return 0;
}
