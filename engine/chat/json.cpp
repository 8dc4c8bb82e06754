#include "engine/chat/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/chat/escapes.hpp"
#include "engine/error.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln::chat {

namespace {

constexpr int kMaxDepth = 512;  // deeper documents are refused rather than overflowing the stack

class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw Error("JSON: " + what + " at line " + std::to_string(line) + ", column " + std::to_string(column));
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool consume(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end of input");
    const char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(Text(string()));
    if (consume("true")) return Value(true);
    if (consume("false")) return Value(false);
    if (consume("null")) return Value::none();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + c + "'");
  }

  Value object(int depth) {
    ++pos_;
    auto obj = make_object();
    skip_space();
    if (consume("}")) return Value(obj);
    while (true) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
      std::string key = string();
      skip_space();
      if (!consume(":")) fail("expected ':'");
      obj->set(key, value(depth + 1));
      skip_space();
      if (consume("}")) return Value(obj);
      if (!consume(",")) fail("expected ',' or '}'");
    }
  }

  Value array(int depth) {
    ++pos_;
    Array items;
    skip_space();
    if (consume("]")) return Value(std::move(items));
    while (true) {
      items.push_back(value(depth + 1));
      skip_space();
      if (consume("]")) return Value(std::move(items));
      if (!consume(",")) fail("expected ',' or ']'");
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
    uint32_t v = 0;
    const auto r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, v, 16);
    if (r.ptr != s_.data() + pos_ + 4) fail("bad \\u escape");
    pos_ += 4;
    return v;
  }

  std::string string() {
    ++pos_;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      if (++pos_ >= s_.size()) fail("unterminated escape");
      const char e = s_[pos_++];
      if (const std::optional<char> c = shared_escape(e)) {
        out += *c;
        continue;
      }
      switch (e) {
        case '/': out += '/'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
            const size_t before = pos_;
            pos_ += 2;
            const uint32_t low = hex4();
            if (low >= 0xDC00 && low < 0xE000) cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            else pos_ = before;
          }
          // A lone surrogate cannot be UTF-8; it becomes U+FFFD.
          append_utf8(cp >= 0xD800 && cp < 0xE000 ? kReplacementChar : cp, out);
          break;
        }
        default: fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  Value number() {
    const size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    bool integral = true;
    while (pos_ < s_.size() && ((s_[pos_] >= '0' && s_[pos_] <= '9') || s_[pos_] == '.' || s_[pos_] == 'e' ||
                                s_[pos_] == 'E' || s_[pos_] == '+' || s_[pos_] == '-')) {
      if (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E') integral = false;
      ++pos_;
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + pos_;
    if (integral) {
      int64_t i = 0;
      const auto r = std::from_chars(first, last, i);
      if (r.ec == std::errc() && r.ptr == last) return Value(i);
    }
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec != std::errc() || r.ptr != last) fail("bad number '" + std::string(first, last) + "'");
    return Value(d);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

void write_string(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    char buf[16];
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      ++i;
    } else if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
      ++i;
    } else {
      const Utf8Unit u = next_utf8_unit(std::string_view(s).substr(i));
      uint32_t cp = u.code_point;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      }
      out += buf;
      i += std::max<size_t>(1, u.length);
    }
  }
  out += '"';
}

void write(const Value& v, const JsonStyle& style, int level, std::string& out) {
  const bool pretty = style.indent >= 0;
  const auto newline = [&](int l) {
    out += '\n';
    out.append(static_cast<size_t>(style.indent) * static_cast<size_t>(l), ' ');
  };
  const char* item_separator = pretty ? "," : ", ";
  switch (v.kind()) {
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: {
      const double d = v.as_float();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : float_repr(d);
      return;
    }
    case Value::Kind::String: write_string(v.as_text().str(), style.ensure_ascii, out); return;
    case Value::Kind::List: {
      const Array& a = v.as_array();
      if (a.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += item_separator;
        if (pretty) newline(level + 1);
        write(a[i], style, level + 1, out);
      }
      if (pretty) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::Object: {
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : v.as_object().items) items.push_back(&kv);
      if (items.empty()) {
        out += "{}";
        return;
      }
      if (style.sort_keys)
        std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_separator;
        if (pretty) newline(level + 1);
        write_string(items[i]->first, style.ensure_ascii, out);
        out += ": ";
        write(items[i]->second, style, level + 1, out);
      }
      if (pretty) newline(level);
      out += '}';
      return;
    }
    case Value::Kind::Undefined:
    case Value::Kind::Callable: break;
  }
  throw ValueError("Object of type " + v.type_name() + " is not JSON serializable");
}

}  // namespace

Value parse_json(std::string_view text) { return JsonReader(text).document(); }

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  write(v, style, 0, out);
  return out;
}

}  // namespace kiln::chat
