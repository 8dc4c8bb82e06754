// A chunked request body (RFC 9112 7.1) decoded as it arrives, a piece at a
// time, bounded: the body's size, each size or trailer line, and the
// trailers all have limits, so a client cannot make the server hold more
// than the body limit whatever it sends. Trailer fields are read and dropped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln {

class ChunkedDecoder {
 public:
  explicit ChunkedDecoder(size_t max_body) : max_body_(max_body) {}

  // Appends the data of `in` to `body` and returns how many bytes of `in` it
  // read (all of them, unless the body ended inside `in`: what follows is
  // the next request). Throws RequestError: 413 when the body would exceed
  // max_body, 400 when the framing is malformed.
  size_t feed(std::string_view in, std::string& body);
  bool done() const { return state_ == State::Done; }

 private:
  enum class State { Size, Data, DataEnd, Trailer, Done };
  // A line of the framing has ended: `line_` holds it without CR LF.
  void end_line(const std::string& body);

  size_t max_body_;
  State state_ = State::Size;
  std::string line_;        // the size or trailer line read so far
  size_t remaining_ = 0;    // Data: bytes of the chunk still to come
  size_t trailer_bytes_ = 0;
};

}  // namespace kiln
