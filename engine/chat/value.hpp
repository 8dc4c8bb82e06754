// The values a chat template computes with: Python's data model as Jinja sees
// it (undefined, None, booleans, integers, floats, strings, lists, dicts,
// callables), with strings as chat::Text so that user content stays marked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/chat/text.hpp"

namespace kiln::chat {

class Value;
using Array = std::vector<Value>;

// The most levels of lists and dicts inside one another a template may build
// (JSON input nests at most 512, engine/chat/json.cpp): deeper values are
// refused, so that printing, comparing and freeing them cannot overflow the
// stack. Enforced by the renderer, with the template's position.
inline constexpr int kMaxValueDepth = 1000;
// The most items a list built by a template may hold (repetition, range(),
// concatenation, the characters or parts of a string).
inline constexpr size_t kMaxListItems = size_t{1} << 20;
// Throws ValueError if a list of `n` items would be longer than kMaxListItems.
void check_list_size(size_t n);

// A dict keeps its insertion order, as Python's does.
struct Object {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;  // namespace(): the one kind `set obj.attr` may change
  bool keys_from_user = false;

  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value v);
};

// Arguments of a call: positional, then keyword.
struct Args {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> named;

  // The argument at `index` or named `name`, or nullptr.
  const Value* get(size_t index, std::string_view name) const;
  // The keyword argument `name` (one that cannot be given by position), or nullptr.
  const Value* keyword(std::string_view name) const;
  // Throws if more than `max_positional` positional arguments or a keyword not in `names` were given.
  void check(std::string_view function, size_t max_positional, std::initializer_list<std::string_view> names) const;
};

using Function = std::function<Value(const Args&)>;

struct Undefined {
  std::string name;  // what was looked up, for the error message
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Object, Callable };

  Value() : v_(Undefined{}) {}
  static Value undefined(std::string name) { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(nullptr); }
  Value(bool b) : v_(b) {}
  Value(int64_t i) : v_(i) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(Text t) : v_(std::move(t)) {}
  Value(std::string s) : v_(Text(std::move(s))) {}
  Value(const char* s) : v_(Text(s)) {}
  Value(Array a);
  // A list that Python would hold as a tuple (a literal "(a, b)", dict.items()):
  // the same in every way except how it prints.
  static Value tuple(Array a) {
    Value v(std::move(a));
    v.tuple_ = true;
    return v;
  }
  bool is_tuple() const { return tuple_; }
  Value(std::shared_ptr<Object> o);
  Value(Function f) : v_(std::make_shared<const Function>(std::move(f))) {}

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int || kind() == Kind::Bool; }  // Python: bool is an int
  bool is_number() const { return is_int() || kind() == Kind::Float; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_array() const { return kind() == Kind::List; }
  bool is_object() const { return kind() == Kind::Object; }
  bool is_function() const { return kind() == Kind::Callable; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return is_bool() ? int64_t{as_bool()} : std::get<int64_t>(v_); }
  double as_float() const { return kind() == Kind::Float ? std::get<double>(v_) : static_cast<double>(as_int()); }
  const Text& as_text() const { return std::get<Text>(v_); }
  const Array& as_array() const { return *std::get<std::shared_ptr<const Array>>(v_); }
  const Object& as_object() const { return *std::get<std::shared_ptr<Object>>(v_); }
  Object& mutable_object() const { return *std::get<std::shared_ptr<Object>>(v_); }
  const Function& as_function() const { return *std::get<std::shared_ptr<const Function>>(v_); }
  const std::string& undefined_name() const { return std::get<Undefined>(v_).name; }

  // Levels of lists and dicts inside one another (0: not a list or dict),
  // measured when the value was made. A namespace changed since may be
  // deeper than this says, but a namespace holds no namespace (the renderer
  // refuses it), so any value is at most kMaxValueDepth deeper than it says.
  int depth() const { return depth_; }
  // Whether the value is a namespace or holds one; such a value may not go
  // into a namespace, which keeps values from containing themselves.
  bool holds_namespace() const { return holds_namespace_; }

  // Python's truth value.
  bool truthy() const;
  // Python's name for the type, for error messages ("str", "list", ...).
  std::string type_name() const;

 private:
  explicit Value(Undefined u) : v_(std::move(u)) {}
  explicit Value(std::nullptr_t) : v_(nullptr) {}

  std::variant<Undefined, std::nullptr_t, bool, int64_t, double, Text, std::shared_ptr<const Array>,
               std::shared_ptr<Object>, std::shared_ptr<const Function>>
      v_;
  bool tuple_ = false;
  bool holds_namespace_ = false;
  int depth_ = 0;
};

std::shared_ptr<Object> make_object();

// Throws ValueError if `v` may not go into a namespace: a namespace, or a
// value holding one. Namespaces are the only values a template can change,
// so without one inside another no value can come to contain itself.
void check_namespace_item(const Value& v);

// str(v) as Python (and Jinja's output) writes it: undefined is empty, None
// "None", floats as repr, lists and dicts as their repr. Marked as user
// content if any part of v is.
Text to_text(const Value& v);
// repr(v) (strings quoted).
std::string repr(const Value& v);
// Python's repr of a float ("1.0", "0.1", "1e-05", "inf").
std::string float_repr(double d);
// Whether any string in v (or a dict key) is user content.
bool has_user_content(const Value& v);
// v with every string in it (and every dict key) marked as user content.
Value mark_user_content(const Value& v);

// Python's ==, and <, which throws ValueError for types it cannot order.
bool equal(const Value& a, const Value& b);
bool less(const Value& a, const Value& b);

// The characters of a string as byte offsets: offsets[i] is where code point i
// starts, offsets.back() == s.size().
std::vector<size_t> code_point_offsets(const std::string& s);

}  // namespace kiln::chat
