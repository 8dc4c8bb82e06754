// Jinja's tests: `x is defined`, `x is string`, `x is divisibleby 3`, ...
#include <cmath>

#include "engine/chat/template_builtins.hpp"
#include "engine/chat/string_ops.hpp"

namespace kiln::chat {

namespace {

bool all_chars(const Text& s, bool want_upper) {
  // Jinja's lower/upper tests: str(value) == str(value).lower() / .upper().
  return (want_upper ? upper(s) : lower(s)).str() == s.str();
}

}  // namespace

bool apply_test(const std::string& name, const Value& v, const Args& a) {
  using K = Value::Kind;
  const auto other = [&]() -> const Value& { return require_arg(a, 0, "other", name); };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.kind() == K::Int;
  if (name == "float") return v.kind() == K::Float;
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_object() && !v.as_object().is_namespace;
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_array() || (v.is_object() && !v.as_object().is_namespace);
  if (name == "sequence") return v.is_undefined() || v.is_string() || v.is_array() || (v.is_object() && !v.as_object().is_namespace);
  if (name == "callable") return v.is_function();
  if (name == "sameas") {
    const Value& o = other();
    if (v.kind() != o.kind()) return false;
    if (v.is_none() || v.is_undefined()) return true;
    if (v.is_bool()) return v.as_bool() == o.as_bool();
    return equal(v, o) && (v.is_int() || v.is_string());  // small ints and interned strings; others are distinct objects
  }
  if (name == "eq" || name == "equalto" || name == "==") return equal(v, other());
  if (name == "ne" || name == "!=") return !equal(v, other());
  if (name == "lt" || name == "lessthan" || name == "<") return less(v, other());
  if (name == "le" || name == "<=") return !less(other(), v);
  if (name == "gt" || name == "greaterthan" || name == ">") return less(other(), v);
  if (name == "ge" || name == ">=") return !less(v, other());
  if (name == "in") return contains(other(), v);
  if (name == "odd" || name == "even" || name == "divisibleby") {
    const long long x = int_arg(v, name);
    if (name == "divisibleby") {
      const long long d = int_arg(require_arg(a, 0, "num", name), name);
      if (d == 0) throw ValueError("divisibleby: division by zero");
      return x % d == 0;
    }
    return (std::llabs(x) % 2 == 1) == (name == "odd");
  }
  if (name == "lower" || name == "upper") return all_chars(to_text(v), name == "upper");
  if (name == "escaped") return false;
  throw ValueError("test '" + name + "' is not supported by kiln's template renderer");
}

}  // namespace kiln::chat
