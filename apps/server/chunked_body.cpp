#include "apps/server/chunked_body.hpp"

#include <algorithm>
#include <charconv>

#include "apps/server/openai_request.hpp"

namespace kiln {

namespace {

// A size line is hex digits and extensions, which are ignored; a trailer
// section is fields like a head's.
constexpr size_t kMaxLine = 4096;
constexpr size_t kMaxTrailers = 16384;

}  // namespace

size_t ChunkedDecoder::feed(std::string_view in, std::string& body) {
  size_t at = 0;
  while (at < in.size() && state_ != State::Done) {
    if (state_ == State::Data) {
      const size_t n = std::min(remaining_, in.size() - at);
      body.append(in.substr(at, n));
      at += n;
      remaining_ -= n;
      if (remaining_ == 0) state_ = State::DataEnd;
      continue;
    }
    const char c = in[at++];
    if (c != '\n') {
      if (line_.size() >= kMaxLine) throw RequestError(400, "a line of the chunked body is over " + std::to_string(kMaxLine) + " bytes");
      line_.push_back(c);
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    end_line(body);
    line_.clear();
  }
  return at;
}

void ChunkedDecoder::end_line(const std::string& body) {
  switch (state_) {
    case State::Size: {
      const std::string_view digits(line_.data(), std::min(line_.find_first_of("; \t"), line_.size()));
      size_t size = 0;
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
      if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
        throw RequestError(400, "malformed chunk size in the chunked body");
      if (size > max_body_ - body.size())
        throw RequestError(413, "the request body is over " + std::to_string(max_body_) + " bytes");
      remaining_ = size;
      state_ = size == 0 ? State::Trailer : State::Data;
      return;
    }
    case State::DataEnd:
      if (!line_.empty()) throw RequestError(400, "a chunk of the chunked body is longer than its size");
      state_ = State::Size;
      return;
    case State::Trailer:
      trailer_bytes_ += line_.size() + 2;
      if (trailer_bytes_ > kMaxTrailers) throw RequestError(400, "the chunked body's trailers are over " + std::to_string(kMaxTrailers) + " bytes");
      if (line_.empty()) state_ = State::Done;
      return;
    case State::Data:
    case State::Done:
      return;
  }
}

}  // namespace kiln
