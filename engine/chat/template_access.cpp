#include "engine/chat/template_builtins.hpp"

#include "engine/chat/string_ops.hpp"

namespace kiln::chat {

namespace {

[[noreturn]] void undefined_error(const Value& v) {
  throw ValueError("'" + v.undefined_name() + "' is undefined");
}

std::optional<std::string> optional_string(const Args& a, size_t i, std::string_view name) {
  const Value* v = a.get(i, name);
  if (v == nullptr || v->is_none()) return std::nullopt;
  return string_arg(*v, name);
}

// Whether `s` starts (or ends) with `affix`, or one of a list of them.
bool has_affix(const Text& s, const Value& affix, bool at_start) {
  if (affix.is_array()) {
    for (const Value& a : affix.as_array())
      if (has_affix(s, a, at_start)) return true;
    return false;
  }
  const std::string x = string_arg(affix, at_start ? "startswith" : "endswith");
  const std::string& str = s.str();
  if (x.size() > str.size()) return false;
  return at_start ? str.compare(0, x.size(), x) == 0 : str.compare(str.size() - x.size(), x.size(), x) == 0;
}

Value string_method(const Text& s, const std::string& name) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    return Function([s, name](const Args& a) {
      a.check(name, 1, {"chars"});
      return Value(strip(s, optional_string(a, 0, "chars"), name != "rstrip", name != "lstrip"));
    });
  }
  if (name == "split") {
    return Function([s](const Args& a) {
      a.check("split", 2, {"sep", "maxsplit"});
      const Value* m = a.get(1, "maxsplit");
      Array parts;
      for (Text& t : split(s, optional_string(a, 0, "sep"), m ? int_arg(*m, "maxsplit") : -1)) parts.emplace_back(std::move(t));
      return Value(std::move(parts));
    });
  }
  if (name == "startswith" || name == "endswith") {
    return Function([s, name](const Args& a) {
      a.check(name, 1, {});
      return Value(has_affix(s, require_arg(a, 0, "prefix", name), name == "startswith"));
    });
  }
  if (name == "replace") {
    return Function([s](const Args& a) {
      a.check("replace", 3, {"count"});
      const Value& to = require_arg(a, 1, "new", "replace");
      if (!to.is_string()) throw ValueError("replace() argument 2 must be str, not " + to.type_name());
      const Value* count = a.get(2, "count");
      return Value(replace(s, string_arg(require_arg(a, 0, "old", "replace"), "replace"), to.as_text(),
                           count ? int_arg(*count, "count") : -1));
    });
  }
  if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
    return Function([s, name](const Args& a) {
      a.check(name, 0, {});
      if (name == "upper") return Value(upper(s));
      if (name == "lower") return Value(lower(s));
      if (name == "capitalize") return Value(capitalize(s));
      return Value(title(s));
    });
  }
  if (name == "find" || name == "rfind" || name == "count") {
    return Function([s, name](const Args& a) {
      a.check(name, 1, {});
      const std::string sub = string_arg(require_arg(a, 0, "sub", name), name);
      const std::string& str = s.str();
      if (name == "count") {
        if (sub.empty()) return Value(static_cast<int64_t>(length(s) + 1));
        int64_t n = 0;
        for (size_t at = str.find(sub); at != std::string::npos; at = str.find(sub, at + sub.size())) ++n;
        return Value(n);
      }
      const size_t at = name == "find" ? str.find(sub) : str.rfind(sub);
      if (at == std::string::npos) return Value(int64_t{-1});
      return Value(static_cast<int64_t>(length(s.substr(0, at))));
    });
  }
  if (name == "join") {
    return Function([s](const Args& a) {
      a.check("join", 1, {});
      Text out;
      bool first = true;
      for (const Value& item : iterate(require_arg(a, 0, "iterable", "join"))) {
        if (!item.is_string()) throw ValueError("join() expects strings, found " + item.type_name());
        if (!first) out.append(s);
        out.append(item.as_text());
        first = false;
      }
      return Value(out);
    });
  }
  if (name == "isdigit" || name == "isspace" || name == "isalpha" || name == "isalnum") {
    return Function([s, name](const Args& a) {
      a.check(name, 0, {});
      const std::string& str = s.str();
      if (str.empty()) return Value(false);
      for (unsigned char c : str) {
        const bool ok = name == "isdigit" ? (c >= '0' && c <= '9')
                        : name == "isspace" ? (c == ' ' || (c >= 9 && c <= 13))
                        : name == "isalpha" ? std::isalpha(c) != 0
                                            : std::isalnum(c) != 0;
        if (!ok) return Value(false);  // ASCII only; other characters count as not matching
      }
      return Value(true);
    });
  }
  return Value::undefined(name);
}

Value dict_method(const Value& obj, const std::string& name) {
  if (name == "items" || name == "keys" || name == "values") {
    return Function([obj, name](const Args& a) {
      a.check(name, 0, {});
      Array out;
      const Object& o = obj.as_object();
      for (const auto& [k, v] : o.items) {
        Value key = Text::marked(k, o.keys_from_user);
        if (name == "items") out.push_back(Value::tuple(Array{key, v}));
        else out.push_back(name == "keys" ? key : v);
      }
      return Value(std::move(out));
    });
  }
  if (name == "get") {
    return Function([obj](const Args& a) {
      a.check("get", 2, {});
      const std::string key = string_arg(require_arg(a, 0, "key", "get"), "get");
      if (const Value* v = obj.as_object().find(key)) return *v;
      const Value* dflt = a.get(1, "default");
      return dflt ? *dflt : Value::none();
    });
  }
  return Value::undefined(name);
}

}  // namespace

const Value& require_arg(const Args& args, size_t index, std::string_view name, std::string_view function) {
  const Value* v = args.get(index, name);
  if (v == nullptr) throw ValueError(std::string(function) + "() missing required argument '" + std::string(name) + "'");
  return *v;
}

std::string string_arg(const Value& v, std::string_view what) {
  if (!v.is_string()) throw ValueError(std::string(what) + ": expected a string, got " + v.type_name());
  return v.as_text().str();
}

long long int_arg(const Value& v, std::string_view what) {
  if (!v.is_int()) throw ValueError(std::string(what) + ": expected an integer, got " + v.type_name());
  return v.as_int();
}

Value get_attribute(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::Undefined: undefined_error(obj);
    case Value::Kind::String: return string_method(obj.as_text(), name);
    case Value::Kind::Object: {
      if (!obj.as_object().is_namespace) {
        Value method = dict_method(obj, name);
        if (!method.is_undefined()) return method;
      }
      if (const Value* v = obj.as_object().find(name)) return *v;
      return Value::undefined(name);
    }
    default: return Value::undefined(name);
  }
}

Value get_item(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case Value::Kind::Undefined: undefined_error(obj);
    case Value::Kind::List: {
      if (!key.is_int()) return Value::undefined(repr(key));
      const Array& a = obj.as_array();
      long long i = key.as_int();
      if (i < 0) i += static_cast<long long>(a.size());
      if (i < 0 || i >= static_cast<long long>(a.size())) return Value::undefined(repr(key));
      return a[static_cast<size_t>(i)];
    }
    case Value::Kind::String: {
      if (!key.is_int()) return Value::undefined(repr(key));
      const long long n = static_cast<long long>(length(obj.as_text()));
      long long i = key.as_int();
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::undefined(repr(key));
      return Value(slice(obj.as_text(), i, i + 1, 1));
    }
    case Value::Kind::Object: {
      if (!key.is_string()) return Value::undefined(repr(key));
      if (const Value* v = obj.as_object().find(key.as_text().str())) return *v;
      return get_attribute(obj, key.as_text().str());
    }
    default: return Value::undefined(repr(key));
  }
}

Value get_slice(const Value& obj, std::optional<long long> start, std::optional<long long> stop, long long step) {
  if (obj.is_string()) return Value(slice(obj.as_text(), start, stop, step));
  if (obj.is_array()) {
    Array out;
    for (size_t i : slice_indices(obj.as_array().size(), start, stop, step)) out.push_back(obj.as_array()[i]);
    return Value(std::move(out));
  }
  if (obj.is_undefined()) undefined_error(obj);
  throw ValueError("'" + obj.type_name() + "' object is not subscriptable");
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return v.as_array();
    case Value::Kind::Object: {
      if (v.as_object().is_namespace) break;
      std::vector<Value> keys;
      for (const auto& [k, x] : v.as_object().items) keys.emplace_back(Text::marked(k, v.as_object().keys_from_user));
      return keys;
    }
    case Value::Kind::String: {
      std::vector<Value> chars;
      const std::vector<size_t> offsets = code_point_offsets(v.as_text().str());
      check_list_size(offsets.size() - 1);
      for (size_t i = 0; i + 1 < offsets.size(); ++i)
        chars.emplace_back(v.as_text().substr(offsets[i], offsets[i + 1] - offsets[i]));
      return chars;
    }
    default: break;
  }
  throw ValueError("'" + v.type_name() + "' object is not iterable");
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      throw ValueError("'in <string>' requires string as left operand, not " + item.type_name());
    return container.as_text().str().find(item.as_text().str()) != std::string::npos;
  }
  if (container.is_object() && !container.as_object().is_namespace)
    return item.is_string() && container.as_object().find(item.as_text().str()) != nullptr;
  for (const Value& x : iterate(container))
    if (equal(x, item)) return true;
  return false;
}

}  // namespace kiln::chat
