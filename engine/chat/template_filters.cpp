// Jinja's filters: `x | trim`, `x | tojson(indent=4)`, `xs | selectattr("role", "equalto", "user")`, ...
#include <algorithm>
#include <charconv>
#include <cmath>

#include "engine/chat/json.hpp"
#include "engine/chat/string_ops.hpp"
#include "engine/chat/template_builtins.hpp"

namespace kiln::chat {

namespace {

// The attribute a filter's `attribute=` names ("a.b" and "0" allowed), as Jinja's make_attrgetter.
Value attribute_of(const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    int64_t index = 0;
    const bool numeric_index =
        numeric && std::from_chars(part.data(), part.data() + part.size(), index).ec == std::errc();
    v = numeric_index ? get_item(v, Value(index)) : get_item(v, Value(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

Args rest_args(const Args& a, size_t from) {
  Args rest;
  for (size_t i = from; i < a.positional.size(); ++i) rest.positional.push_back(a.positional[i]);
  return rest;
}

// select / reject / selectattr / rejectattr.
Value select(const Value& input, const Args& a, bool by_attribute, bool keep) {
  std::string attr;
  size_t first = 0;
  if (by_attribute) attr = string_arg(require_arg(a, 0, "attribute", "selectattr"), "selectattr");
  if (by_attribute) first = 1;
  const Value* test = a.get(first, "");
  const Args test_args = rest_args(a, first + 1);
  Array out;
  for (const Value& item : iterate(input)) {
    const Value v = by_attribute ? attribute_of(item, attr) : item;
    const bool pass = test ? apply_test(string_arg(*test, "test name"), v, test_args) : v.truthy();
    if (pass == keep) out.push_back(item);
  }
  return Value(std::move(out));
}

Value join(const Value& input, const Args& a) {
  a.check("join", 2, {"d", "attribute"});
  const Value* sep = a.get(0, "d");
  const Value* attr = a.get(1, "attribute");
  const Text separator = sep ? to_text(*sep) : Text();
  Text out;
  bool first = true;
  for (const Value& item : iterate(input)) {
    if (!first) out.append(separator);
    out.append(to_text(attr ? attribute_of(item, string_arg(*attr, "attribute")) : item));
    first = false;
  }
  return Value(out);
}

// Hugging Face's tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value tojson(const Value& input, const Args& a) {
  a.check("tojson", 4, {"ensure_ascii", "indent", "separators", "sort_keys"});
  if (const Value* sep = a.get(2, "separators"); sep && !sep->is_none())
    throw ValueError("tojson: separators= is not supported by kiln's template renderer");
  JsonStyle style;
  if (const Value* e = a.get(0, "ensure_ascii")) style.ensure_ascii = e->truthy();
  if (const Value* indent = a.get(1, "indent"); indent && !indent->is_none()) style.indent = static_cast<int>(int_arg(*indent, "indent"));
  if (const Value* s = a.get(3, "sort_keys")) style.sort_keys = s->truthy();
  return Value(Text::marked(to_json(input, style), has_user_content(input)));
}

Value indent(const Value& input, const Args& a) {
  a.check("indent", 3, {"width", "first", "blank"});
  const Value* w = a.get(0, "width");
  const Text pad = w && w->is_string() ? w->as_text() : Text(std::string(w ? static_cast<size_t>(int_arg(*w, "width")) : 4, ' '));
  const bool first = a.get(1, "first") && a.get(1, "first")->truthy();
  const bool blank = a.get(2, "blank") && a.get(2, "blank")->truthy();
  const Text s = to_text(input);
  std::vector<Text> lines = split(s, std::string("\n"), -1);
  Text out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out.append("\n");
    const bool indent_line = (i > 0 || first) && (blank || !strip(lines[i], std::nullopt, true, true).empty());
    if (indent_line) out.append(pad);
    out.append(lines[i]);
  }
  return Value(out);
}

Value sorted(const Value& input, const Args& a, bool unique_only) {
  a.check(unique_only ? "unique" : "sort", unique_only ? 1 : 3, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = !unique_only && a.get(0, "reverse") && a.get(0, "reverse")->truthy();
  const Value* case_sensitive = a.get(unique_only ? 0 : 1, "case_sensitive");
  const bool fold = !(case_sensitive && case_sensitive->truthy());
  const Value* attr = a.get(unique_only ? 1 : 2, "attribute");
  const auto key = [&](const Value& v) {
    Value k = attr ? attribute_of(v, string_arg(*attr, "attribute")) : v;
    return fold && k.is_string() ? Value(lower(k.as_text())) : k;
  };
  std::vector<Value> items = iterate(input);
  if (unique_only) {
    Array out;
    std::vector<Value> seen;
    for (const Value& v : items) {
      const Value k = key(v);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, k); })) {
        seen.push_back(k);
        out.push_back(v);
      }
    }
    return Value(std::move(out));
  }
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    return reverse ? less(key(y), key(x)) : less(key(x), key(y));
  });
  return Value(Array(std::move(items)));
}

// Jinja's dictsort(case_sensitive=False, by="key", reverse=False): the dict's
// (key, value) pairs sorted by key or by value, strings compared lowercased
// unless case_sensitive.
Value dictsort(const Value& input, const Args& a) {
  a.check("dictsort", 3, {"case_sensitive", "by", "reverse"});
  if (!input.is_object()) throw ValueError("dictsort: expected a mapping, got " + input.type_name());
  const Value* case_sensitive = a.get(0, "case_sensitive");
  const bool fold = !(case_sensitive && case_sensitive->truthy());
  const Value* by = a.get(1, "by");
  const std::string by_what = by ? string_arg(*by, "by") : "key";
  if (by_what != "key" && by_what != "value") throw ValueError("dictsort: 'by' must be 'key' or 'value'");
  const size_t part = by_what == "key" ? 0 : 1;
  const bool reverse = a.get(2, "reverse") && a.get(2, "reverse")->truthy();
  const auto key = [&](const Value& pair) {
    const Value& k = pair.as_array()[part];
    return fold && k.is_string() ? Value(lower(k.as_text())) : k;
  };
  std::vector<Value> pairs = iterate(get_attribute(input, "items").as_function()(Args{}));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    return reverse ? less(key(y), key(x)) : less(key(x), key(y));
  });
  return Value(Array(std::move(pairs)));
}

Value minmax(const Value& input, const Args& a, bool want_max) {
  a.check(want_max ? "max" : "min", 2, {"case_sensitive", "attribute"});
  std::vector<Value> items = iterate(input);
  if (items.empty()) return Value::undefined(want_max ? "max" : "min");
  const Value* attr = a.get(1, "attribute");
  const auto key = [&](const Value& v) { return attr ? attribute_of(v, string_arg(*attr, "attribute")) : v; };
  Value best = items[0];
  for (const Value& v : items)
    if (want_max ? less(key(best), key(v)) : less(key(v), key(best))) best = v;
  return best;
}

Value to_number(const Value& input, const Args& a, bool want_float) {
  a.check(want_float ? "float" : "int", 1, {"default", "base"});
  const Value* dflt = a.get(0, "default");
  const Value fallback = dflt ? *dflt : want_float ? Value(0.0) : Value(int64_t{0});
  if (input.is_number()) return want_float ? Value(input.as_float()) : Value(static_cast<int64_t>(input.kind() == Value::Kind::Float ? std::trunc(input.as_float()) : input.as_int()));
  if (!input.is_string()) return fallback;
  const std::string s = strip(input.as_text(), std::nullopt, true, true).str();
  try {
    size_t used = 0;
    if (want_float) {
      const double d = std::stod(s, &used);
      return used == s.size() ? Value(d) : fallback;
    }
    const long long i = std::stoll(s, &used);
    if (used == s.size()) return Value(static_cast<int64_t>(i));
    const double d = std::stod(s, &used);  // Jinja's int filter also reads "3.7" as 3
    return used == s.size() ? Value(static_cast<int64_t>(std::trunc(d))) : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

Value apply_filter(const std::string& name, const Value& v, const Args& a) {
  if (name == "default" || name == "d") {
    a.check(name, 2, {"default_value", "boolean"});
    const Value* dflt = a.get(0, "default_value");
    const Value* boolean = a.get(1, "boolean");
    const bool use_default = v.is_undefined() || (boolean && boolean->truthy() && !v.truthy());
    return use_default ? (dflt ? *dflt : Value("")) : v;
  }
  if (name == "length" || name == "count") {
    if (v.is_string()) return Value(static_cast<int64_t>(length(v.as_text())));
    if (v.is_object() && !v.as_object().is_namespace) return Value(static_cast<int64_t>(v.as_object().items.size()));
    if (v.is_array()) return Value(static_cast<int64_t>(v.as_array().size()));
    if (v.is_undefined()) return Value(int64_t{0});
    throw ValueError("object of type '" + v.type_name() + "' has no len()");
  }
  if (name == "trim") {
    a.check(name, 1, {"chars"});
    const Value* chars = a.get(0, "chars");
    return Value(strip(to_text(v), chars && !chars->is_none() ? std::optional(string_arg(*chars, "trim")) : std::nullopt, true, true));
  }
  if (name == "upper") return Value(upper(to_text(v)));
  if (name == "lower") return Value(lower(to_text(v)));
  if (name == "capitalize") return Value(capitalize(to_text(v)));
  if (name == "title") return Value(title(to_text(v)));
  if (name == "string") return Value(to_text(v));
  if (name == "safe") return v;
  if (name == "replace") {
    a.check(name, 3, {"count"});
    const Value* count = a.get(2, "count");
    return Value(replace(to_text(v), to_text(require_arg(a, 0, "old", name)).str(), to_text(require_arg(a, 1, "new", name)),
                         count && !count->is_none() ? int_arg(*count, "count") : -1));
  }
  if (name == "join") return join(v, a);
  if (name == "tojson") return tojson(v, a);
  if (name == "first" || name == "last") {
    std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined(name);
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value(Array(iterate(v)));
  if (name == "items") {
    if (v.is_undefined()) return Value(Array{});
    if (!v.is_object()) throw ValueError("items: expected a mapping, got " + v.type_name());
    return get_attribute(v, "items").as_function()(Args{});
  }
  if (name == "reverse") {
    if (v.is_string()) return Value(slice(v.as_text(), std::nullopt, std::nullopt, -1));
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(Array(std::move(items)));
  }
  if (name == "select" || name == "reject") return select(v, a, false, name == "select");
  if (name == "selectattr" || name == "rejectattr") return select(v, a, true, name == "selectattr");
  if (name == "map") {
    Array out;
    const Value* attr = a.keyword("attribute");
    const Value* dflt = a.keyword("default");
    for (const Value& item : iterate(v)) {
      if (attr) {
        Value x = attribute_of(item, string_arg(*attr, "attribute"));
        out.push_back(x.is_undefined() && dflt ? *dflt : x);
      } else {
        out.push_back(apply_filter(string_arg(require_arg(a, 0, "filter", "map"), "map"), item, rest_args(a, 1)));
      }
    }
    return Value(std::move(out));
  }
  if (name == "attr") return get_attribute(v, string_arg(require_arg(a, 0, "name", name), name));
  if (name == "sort") return sorted(v, a, false);
  if (name == "dictsort") return dictsort(v, a);
  if (name == "unique") return sorted(v, a, true);
  if (name == "min" || name == "max") return minmax(v, a, name == "max");
  if (name == "sum") {
    Value total(int64_t{0});
    const Value* attr = a.get(0, "attribute");
    for (const Value& item : iterate(v)) {
      const Value x = attr ? attribute_of(item, string_arg(*attr, "attribute")) : item;
      if (!x.is_number()) throw ValueError("sum: cannot add " + x.type_name());
      total = total.is_int() && x.is_int() ? Value(total.as_int() + x.as_int()) : Value(total.as_float() + x.as_float());
    }
    return total;
  }
  if (name == "abs") {
    if (v.is_int()) return Value(static_cast<int64_t>(std::llabs(v.as_int())));
    if (v.is_number()) return Value(std::fabs(v.as_float()));
    throw ValueError("bad operand type for abs(): '" + v.type_name() + "'");
  }
  if (name == "int") return to_number(v, a, false);
  if (name == "float") return to_number(v, a, true);
  if (name == "round") {
    a.check(name, 2, {"precision", "method"});
    const Value* p = a.get(0, "precision");
    const double scale = std::pow(10.0, p ? static_cast<double>(int_arg(*p, "precision")) : 0.0);
    if (!v.is_number()) throw ValueError("round: expected a number, got " + v.type_name());
    return Value(std::round(v.as_float() * scale) / scale);
  }
  if (name == "indent") return indent(v, a);
  throw ValueError("filter '" + name + "' is not supported by kiln's template renderer");
}

}  // namespace kiln::chat
