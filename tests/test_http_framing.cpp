// The connection layer's readers of hostile bytes (apps/server/request_head,
// chunked_body): a head's end found however it arrives, its fields and
// framing read or refused with the right status, and a chunked body decoded
// across any split, bounded, and refused when malformed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "apps/server/chunked_body.hpp"
#include "apps/server/openai_request.hpp"
#include "apps/server/request_head.hpp"

using kiln::ChunkedDecoder;
using kiln::find_head_end;
using kiln::parse_request_head;
using kiln::RequestError;

namespace {

int refusal(const std::string& head) {
  try {
    parse_request_head(head);
  } catch (const RequestError& e) {
    return e.status;
  }
  return 0;
}

// The body `bytes` decodes to when fed `step` bytes at a time; what
// follows it is left unread.
std::string decoded(const std::string& bytes, size_t step, size_t max_body = 1000, size_t* used = nullptr) {
  ChunkedDecoder decoder(max_body);
  std::string body;
  size_t at = 0;
  while (at < bytes.size() && !decoder.done()) at += decoder.feed(std::string_view(bytes).substr(at, step), body);
  CHECK(decoder.done());
  if (used) *used = at;
  return body;
}

}  // namespace

TEST_CASE("a head's end is found whether it arrives whole or a byte at a time") {
  const std::string head = "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /next";
  CHECK(find_head_end(head, 0) == head.find("GET /next"));
  size_t searched = 0, end = 0;
  for (size_t n = 1; n <= head.size() && end == 0; ++n) {
    end = find_head_end(std::string_view(head).substr(0, n), searched);
    searched = n;
  }
  CHECK(end == head.find("GET /next"));
  CHECK(find_head_end("GET / HTTP/1.1\nHost: x\n\n", 0) == 24);
  CHECK(find_head_end("GET / HTTP/1.1\r\nHost: x\r\n", 0) == 0);
}

TEST_CASE("a request head: its path, framing and connection") {
  const auto head = parse_request_head(
      "POST /v1/completions?x=1 HTTP/1.1\r\nHost: x\r\ncontent-length:  12 \r\nAuthorization: Bearer k\r\n\r\n");
  CHECK(head.method == "POST");
  CHECK(head.path == "/v1/completions");
  CHECK(head.target == "/v1/completions?x=1");
  CHECK(head.content_length == 12u);
  CHECK(head.keep_alive);
  CHECK(*head.field("AUTHORIZATION") == "Bearer k");
  CHECK(head.field("X-Api-Key") == nullptr);
  const auto chunked = parse_request_head("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n");
  CHECK(chunked.chunked);
  CHECK_FALSE(chunked.keep_alive);
  CHECK(chunked.has_body());
  CHECK_FALSE(parse_request_head("GET / HTTP/1.0\r\n\r\n").keep_alive);
  CHECK(parse_request_head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
  CHECK(parse_request_head("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n").expect_continue);
}

TEST_CASE("malformed heads are refused with the status that says why") {
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n") == 501);
  CHECK(refusal("GET / HTTP/2.0\r\n\r\n") == 505);
  CHECK(refusal("GET /\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\n: empty name\r\n\r\n") == 400);
  CHECK(refusal("GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n") == 400);
  CHECK(refusal("G(T / HTTP/1.1\r\n\r\n") == 400);
  CHECK(refusal("POST / HTTP/1.1\r\nExpect: something\r\n\r\n") == 417);
  CHECK(refusal("\r\n\r\n") == 400);
}

TEST_CASE("a chunked body decodes the same across any split, and what follows it is left") {
  const std::string bytes = "5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nGET /next";
  for (size_t step : {1u, 2u, 3u, 7u, 1000u}) {
    CAPTURE(step);
    size_t used = 0;
    CHECK(decoded(bytes, step, 1000, &used) == "hello 0123456789");
    CHECK(bytes.substr(used) == "GET /next");
  }
  CHECK(decoded("0\n\n", 1) == "");
}

TEST_CASE("a chunked body over the limit is refused with 413 as soon as a chunk's size says so") {
  ChunkedDecoder decoder(10);
  std::string body;
  decoder.feed("8\r\n12345678\r\n", body);
  try {
    decoder.feed("3\r\n", body);
    FAIL("not refused");
  } catch (const RequestError& e) {
    CHECK(e.status == 413);
  }
  CHECK(body.size() == 8);
  ChunkedDecoder huge(10);
  CHECK_THROWS_AS(huge.feed("ffffffffffffffffff\r\n", body), RequestError);
}

TEST_CASE("malformed chunked bodies are refused with 400") {
  for (const std::string& bytes : std::vector<std::string>{"x\r\n", "\r\n", "3\r\nabcd\r\n", std::string(5000, '1'),
                                                            "0\r\n" + std::string(20000, 'a')}) {
    ChunkedDecoder decoder(1 << 20);
    std::string body;
    try {
      decoder.feed(bytes, body);
      FAIL("not refused: " << bytes.substr(0, 20));
    } catch (const RequestError& e) {
      CHECK(e.status == 400);
    }
  }
}
