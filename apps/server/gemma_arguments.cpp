#include "apps/server/gemma_arguments.hpp"

namespace kiln {

namespace {

constexpr int kMaxDepth = 64;  // a reply nesting deeper is not read (and cannot exhaust the stack)

std::optional<RequestJson> value(std::string_view text, size_t& at, int depth);

// The items of a {...} (keyed) or [...] after its opening bracket, up to and past the closing one.
std::optional<RequestJson> items(std::string_view text, size_t& at, int depth, bool keyed) {
  const char close = keyed ? '}' : ']';
  RequestJson out = keyed ? RequestJson::object() : RequestJson::array();
  if (at < text.size() && text[at] == close) {
    ++at;
    return out;
  }
  for (;;) {
    std::string key;
    if (keyed) {
      if (text.substr(at).starts_with(kGemmaQuote)) {
        const std::optional<RequestJson> k = value(text, at, depth);
        if (!k) return std::nullopt;
        key = k->get<std::string>();
      } else {
        const size_t colon = text.find(':', at);
        if (colon == std::string_view::npos) return std::nullopt;
        key = text.substr(at, colon - at);
        at = colon;
      }
      if (at >= text.size() || text[at] != ':') return std::nullopt;
      ++at;
    }
    std::optional<RequestJson> v = value(text, at, depth);
    if (!v) return std::nullopt;
    if (keyed) out[key] = std::move(*v);
    else out.push_back(std::move(*v));
    if (at < text.size() && text[at] == ',') {
      ++at;
      continue;
    }
    if (at >= text.size() || text[at] != close) return std::nullopt;
    ++at;
    return out;
  }
}

std::optional<RequestJson> value(std::string_view text, size_t& at, int depth) {
  if (depth > kMaxDepth || at >= text.size()) return std::nullopt;
  if (text.substr(at).starts_with(kGemmaQuote)) {
    const size_t begin = at + kGemmaQuote.size();
    const size_t end = text.find(kGemmaQuote, begin);
    if (end == std::string_view::npos) return std::nullopt;
    at = end + kGemmaQuote.size();
    return RequestJson(std::string(text.substr(begin, end - begin)));
  }
  if (text[at] == '{' || text[at] == '[') {
    const bool keyed = text[at] == '{';
    ++at;
    return items(text, at, depth + 1, keyed);
  }
  // A number, true, false or null: JSON's spelling, up to the next delimiter.
  const size_t end = text.find_first_of(",}]<", at);
  const std::string_view scalar = text.substr(at, end == std::string_view::npos ? end : end - at);
  try {
    RequestJson v = RequestJson::parse(scalar);
    if (v.is_structured() || v.is_string()) return std::nullopt;
    at += scalar.size();
    return v;
  } catch (const RequestJson::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<RequestJson> read_gemma_value(std::string_view text, size_t& at) { return value(text, at, 0); }

}  // namespace kiln
