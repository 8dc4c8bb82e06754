#include "apps/server/request_head.hpp"

#include <algorithm>
#include <charconv>

#include "apps/server/openai_request.hpp"

namespace kiln {

namespace {

// RFC 9110's token characters: what method and field names are made of.
bool token_char(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), token_char); }

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether the comma-separated list `value` has `token` (case-insensitive).
bool lists(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (same_field_name(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// The head's lines, without their CRLF or LF; the blank line ends them.
std::vector<std::string_view> lines_of(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const size_t lf = head.find('\n');
    std::string_view line = head.substr(0, lf);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    lines.push_back(line);
    if (lf == std::string_view::npos) break;
    head.remove_prefix(lf + 1);
  }
  return lines;
}

void read_request_line(std::string_view line, RequestHead& head) {
  const size_t first = line.find(' ');
  const size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) throw RequestError(400, "malformed request line");
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, last - first - 1);
  const std::string_view version = line.substr(last + 1);
  if (!is_token(method)) throw RequestError(400, "malformed request method");
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) { return c <= ' ' || c == 0x7f; }))
    throw RequestError(400, "malformed request target");
  if (version == "HTTP/1.1") head.minor_version = 1;
  else if (version == "HTTP/1.0") head.minor_version = 0;
  else if (version.starts_with("HTTP/")) throw RequestError(505, "only HTTP/1.0 and HTTP/1.1 are served");
  else throw RequestError(400, "malformed request line");
  head.method = method;
  head.target = target;
  head.path = target.substr(0, target.find('?'));
}

HeaderField read_field(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') throw RequestError(400, "folded header lines are not accepted");
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
    throw RequestError(400, "malformed header line");
  const std::string_view value = trim(line.substr(colon + 1));
  if (std::any_of(value.begin(), value.end(), [](char c) { return (c >= 0 && c < ' ' && c != '\t') || c == 0x7f; }))
    throw RequestError(400, "a control character in header " + std::string(line.substr(0, colon)));
  return {std::string(line.substr(0, colon)), std::string(value)};
}

size_t content_length(std::string_view value) {
  size_t n = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || value.front() == '-' || value.front() == '+' || error != std::errc() ||
      end != value.data() + value.size())
    throw RequestError(400, "Content-Length is not a byte count: '" + std::string(value.substr(0, 32)) + "'");
  return n;
}

}  // namespace

bool same_field_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

const std::string* RequestHead::field(std::string_view name) const {
  for (const HeaderField& f : fields)
    if (same_field_name(f.name, name)) return &f.value;
  return nullptr;
}

size_t find_head_end(std::string_view bytes, size_t searched) {
  // The last newline looked at may be the first of the pair that ends the head.
  for (size_t i = searched > 2 ? searched - 2 : 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    if (i + 1 < bytes.size() && bytes[i + 1] == '\n') return i + 2;
    if (i + 2 < bytes.size() && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') return i + 3;
  }
  return 0;
}

RequestHead parse_request_head(std::string_view text) {
  // Clients may send empty lines before a request (RFC 9112 2.2).
  while (text.starts_with("\r\n") || text.starts_with("\n")) text.remove_prefix(text.front() == '\r' ? 2 : 1);
  const std::vector<std::string_view> lines = lines_of(text);
  if (lines.empty()) throw RequestError(400, "empty request");
  RequestHead head;
  read_request_line(lines[0], head);
  bool close = false, keep_alive = false, transfer_encoding = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    HeaderField f = read_field(lines[i]);
    if (same_field_name(f.name, "Content-Length")) {
      const size_t n = content_length(f.value);
      if (head.content_length && *head.content_length != n) throw RequestError(400, "conflicting Content-Length fields");
      head.content_length = n;
    } else if (same_field_name(f.name, "Transfer-Encoding")) {
      if (transfer_encoding || !same_field_name(f.value, "chunked"))
        throw RequestError(501, "the only transfer coding served is chunked, not '" + f.value.substr(0, 32) + "'");
      transfer_encoding = head.chunked = true;
    } else if (same_field_name(f.name, "Connection")) {
      close = close || lists(f.value, "close");
      keep_alive = keep_alive || lists(f.value, "keep-alive");
    } else if (same_field_name(f.name, "Expect")) {
      if (!same_field_name(f.value, "100-continue")) throw RequestError(417, "only 'Expect: 100-continue' is served");
      head.expect_continue = true;
    }
    head.fields.push_back(std::move(f));
  }
  if (head.chunked && head.content_length)
    throw RequestError(400, "a request has either Content-Length or Transfer-Encoding, not both");
  head.keep_alive = !close && (head.minor_version == 1 || keep_alive);
  return head;
}

}  // namespace kiln
