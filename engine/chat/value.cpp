#include "engine/chat/value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/tokenizer/unicode_utf8.hpp"

namespace kiln::chat {

const Value* Object::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Object::set(const std::string& key, Value v) {
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(key, std::move(v));
}

const Value* Args::get(size_t index, std::string_view name) const {
  if (index < positional.size()) return &positional[index];
  return keyword(name);
}

const Value* Args::keyword(std::string_view name) const {
  for (const auto& [k, v] : named)
    if (k == name) return &v;
  return nullptr;
}

void Args::check(std::string_view function, size_t max_positional, std::initializer_list<std::string_view> names) const {
  if (positional.size() > max_positional)
    throw ValueError(std::string(function) + "() takes at most " + std::to_string(max_positional) +
                     " positional arguments, got " + std::to_string(positional.size()));
  for (const auto& [k, v] : named)
    if (std::find(names.begin(), names.end(), k) == names.end())
      throw ValueError(std::string(function) + "() got an unexpected keyword argument '" + k + "'");
}

std::shared_ptr<Object> make_object() { return std::make_shared<Object>(); }

void check_namespace_item(const Value& v) {
  if (v.holds_namespace())
    throw ValueError("a namespace cannot hold a namespace, itself or another (values that could contain "
                     "themselves are refused)");
}

void check_list_size(size_t n) {
  if (n > kMaxListItems) throw ValueError("list longer than " + std::to_string(kMaxListItems) + " items (the renderer's limit)");
}

Value::Value(Array a) : v_(std::make_shared<const Array>(std::move(a))) {
  for (const Value& x : as_array()) {
    depth_ = std::max(depth_, x.depth_);
    holds_namespace_ = holds_namespace_ || x.holds_namespace_;
  }
  ++depth_;
}

Value::Value(std::shared_ptr<Object> o) : v_(std::move(o)) {
  holds_namespace_ = as_object().is_namespace;
  for (const auto& [k, x] : as_object().items) {
    depth_ = std::max(depth_, x.depth_);
    holds_namespace_ = holds_namespace_ || x.holds_namespace_;
  }
  ++depth_;
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_float() != 0.0;
    case Kind::String: return !as_text().empty();
    case Kind::List: return !as_array().empty();
    case Kind::Object: return !as_object().items.empty();
    case Kind::Callable: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return "list";
    case Kind::Object: return as_object().is_namespace ? "Namespace" : "dict";
    case Kind::Callable: return "function";
  }
  return "?";
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest digits that read back as d, placed as Python's repr places
  // them: positional for exponents -4..15, scientific otherwise.
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);
  const size_t e = sci.find('e');
  const bool negative = sci[0] == '-';
  std::string digits = sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1);
    }
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp;
  }
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exponent - 1), '0');
    return out.append(digits);
  }
  const size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    out.append(digits);
    out.append(int_digits - digits.size(), '0');
    return out.append(".0");
  }
  out.append(digits, 0, int_digits);
  out += '.';
  return out.append(digits, int_digits);
}

namespace {

std::string string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const char quote = has_single && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else out += static_cast<char>(c);
  }
  return out + quote;
}

}  // namespace

std::string repr(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String: return string_repr(v.as_text().str());
    case Value::Kind::List: {
      std::string out = v.is_tuple() ? "(" : "[";
      for (size_t i = 0; i < v.as_array().size(); ++i) out += (i ? ", " : "") + repr(v.as_array()[i]);
      if (v.is_tuple()) return out + (v.as_array().size() == 1 ? ",)" : ")");
      return out + "]";
    }
    case Value::Kind::Object: {
      if (v.as_object().is_namespace) return "<Namespace>";
      std::string out = "{";
      bool first = true;
      for (const auto& [k, item] : v.as_object().items) {
        out += (first ? "" : ", ") + string_repr(k) + ": " + repr(item);
        first = false;
      }
      return out + "}";
    }
    default: return to_text(v).str();
  }
}

Text to_text(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return Text();
    case Value::Kind::None: return Text("None");
    case Value::Kind::Bool: return Text(v.as_bool() ? "True" : "False");
    case Value::Kind::Int: return Text(std::to_string(v.as_int()));
    case Value::Kind::Float: return Text(float_repr(v.as_float()));
    case Value::Kind::String: return v.as_text();
    case Value::Kind::Callable: return Text("<function>");
    case Value::Kind::List:
    case Value::Kind::Object: return Text::marked(repr(v), has_user_content(v));
  }
  return Text();
}

bool has_user_content(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String: return v.as_text().any_user();
    case Value::Kind::List:
      return std::any_of(v.as_array().begin(), v.as_array().end(), [](const Value& x) { return has_user_content(x); });
    case Value::Kind::Object:
      return v.as_object().keys_from_user ||
             std::any_of(v.as_object().items.begin(), v.as_object().items.end(),
                         [](const auto& kv) { return has_user_content(kv.second); });
    default: return false;
  }
}

Value mark_user_content(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::String: return Text::from_user(v.as_text().str());
    case Value::Kind::List: {
      Array out;
      for (const Value& x : v.as_array()) out.push_back(mark_user_content(x));
      return out;
    }
    case Value::Kind::Object: {
      auto out = make_object();
      out->keys_from_user = true;
      for (const auto& [k, x] : v.as_object().items) out->items.emplace_back(k, mark_user_content(x));
      return out;
    }
    default: return v;
  }
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_float() == b.as_float();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.as_text().str() == b.as_text().str();
    case Value::Kind::List:
      return std::equal(a.as_array().begin(), a.as_array().end(), b.as_array().begin(), b.as_array().end(), equal);
    case Value::Kind::Object: {
      const Object& x = a.as_object();
      const Object& y = b.as_object();
      if (x.is_namespace || y.is_namespace) return &x == &y;
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* other = y.find(k);
        if (other == nullptr || !equal(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::Callable: return &a.as_function() == &b.as_function();
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
    return a.as_float() < b.as_float();
  }
  if (a.is_string() && b.is_string()) return a.as_text().str() < b.as_text().str();  // UTF-8 sorts by code point
  if (a.is_array() && b.is_array()) {
    return std::lexicographical_compare(a.as_array().begin(), a.as_array().end(), b.as_array().begin(),
                                        b.as_array().end(), less);
  }
  throw ValueError("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

std::vector<size_t> code_point_offsets(const std::string& s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (size_t i = 0; i < s.size();) {
    offsets.push_back(i);
    const Utf8Unit u = next_utf8_unit(std::string_view(s).substr(i));
    i += std::max<size_t>(1, u.length);
  }
  offsets.push_back(s.size());
  return offsets;
}

}  // namespace kiln::chat
