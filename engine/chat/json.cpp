#include "engine/chat/json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/error/error.hpp"
#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln::chat {

namespace {

// An object's keys in their order, as Python's json.loads keeps them.
using Json = nlohmann::ordered_json;

// Deeper documents are refused: to_value recurses once per level, and
// template values nest at most kMaxValueDepth (value.hpp).
constexpr int kMaxDepth = 512;

// Called by the parser at each event; `depth` is the number of lists and
// objects open around the one starting.
bool limit_depth(int depth, Json::parse_event_t event, Json&) {
  if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) && depth >= kMaxDepth)
    throw Error("JSON: lists and objects nested deeper than " + std::to_string(kMaxDepth) + " levels");
  return true;
}

Value to_value(const Json& j) {
  if (j.is_null()) return Value::none();
  if (j.is_boolean()) return Value(j.get<bool>());
  // Integers above int64's range become floats, as the template values hold no wider integer.
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    return Value(j.get<double>());
  if (j.is_number_integer()) return Value(j.get<int64_t>());
  if (j.is_number_float()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  if (j.is_array()) {
    Array items;
    items.reserve(j.size());
    for (const Json& item : j) items.push_back(to_value(item));
    return Value(std::move(items));
  }
  auto obj = make_object();  // parsing makes no other kind
  for (const auto& [key, value] : j.items()) obj->set(key, to_value(value));
  return Value(obj);
}

// Writing is kiln's own, not nlohmann-json's: `tojson` must give what
// Python's json.dumps gives, byte for byte (", " and ": " between items,
// NaN and Infinity, floats as repr() prints them, sort_keys, ensure_ascii's
// escapes), and the templates' prompts depend on it.
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

Value parse_json(std::string_view text) {
  try {
    return to_value(Json::parse(text, limit_depth));
  } catch (const Json::exception& e) {
    // Its parse errors (with a line and column) and out_of_range for a number
    // beyond double's (1E400); what() starts with "[json.exception.<kind>.<id>] ".
    const std::string_view what = e.what();
    const size_t end_of_id = what.find("] ");
    throw Error("JSON: " + std::string(end_of_id == std::string_view::npos ? what : what.substr(end_of_id + 2)));
  }
}

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  write(v, style, 0, out);
  return out;
}

}  // namespace kiln::chat
