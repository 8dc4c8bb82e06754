// An HTTP/1.x request head as the connection layer (connection_layer.hpp)
// reads it from a client that may be hostile: where it ends, its request line
// and fields, and what the layer must know before any handler runs (the path,
// how the body is framed, whether the connection stays open, the API key's
// fields). Anything malformed is a RequestError with the status to answer.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct HeaderField {
  std::string name;
  std::string value;  // without surrounding spaces
};

struct RequestHead {
  std::string method;
  std::string target;  // as sent
  std::string path;    // the target up to '?'
  int minor_version = 1;  // HTTP/1.x
  std::vector<HeaderField> fields;
  std::optional<size_t> content_length;
  bool chunked = false;          // Transfer-Encoding: chunked
  bool keep_alive = true;        // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "keep-alive"
  bool expect_continue = false;  // "Expect: 100-continue"

  // The first field of that name (case-insensitive), or nullptr.
  const std::string* field(std::string_view name) const;
  bool has_body() const { return chunked || content_length.value_or(0) > 0; }
};

// Whether two field names are the same (ASCII, case-insensitive).
bool same_field_name(std::string_view a, std::string_view b);

// The offset just past the blank line that ends the head in `bytes` (CRLF or
// bare LF lines), or 0 while it has not arrived. Bytes before `searched`
// were looked at already: a search over a head that arrives a byte at a time
// resumes there, so it costs linear time in the head's size, not quadratic.
size_t find_head_end(std::string_view bytes, size_t searched);

// Parses a whole head, up to and including its blank line. Throws
// RequestError: 400 for a malformed line or field (conflicting or invalid
// Content-Length, obsolete line folding, a field without a name, both
// Content-Length and Transfer-Encoding), 501 for a transfer coding other than
// chunked, 505 for a version other than HTTP/1.0 and 1.1, 417 for an
// expectation other than 100-continue.
RequestHead parse_request_head(std::string_view head);

}  // namespace kiln
