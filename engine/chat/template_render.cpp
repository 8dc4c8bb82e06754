#include "engine/chat/template_render.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "engine/chat/template_builtins.hpp"
#include "engine/error/error.hpp"

namespace kiln::chat {

namespace {

// Limits that make a hostile template fail with an error naming the limit
// instead of overflowing the stack, exhausting memory or hanging.
constexpr int kMaxCallDepth = 100;  // macro calls inside one another
// Statements and expressions evaluated inside one another, macro bodies
// included: what bounds the renderer's stack.
constexpr int kMaxRenderDepth = 500;
// Statements, expressions and loop iterations one render may evaluate (real
// templates take a hundred or so per message, a few hundred per tool): a
// template that loops for ever, even over an empty body, fails in well under
// a second instead of hanging.
constexpr long long kMaxSteps = 1'000'000;
// Bytes of strings, lists and dicts the expressions of one render may build,
// all together: what bounds its memory (one string is bounded by
// kMaxTextBytes, one list by kMaxListItems).
constexpr size_t kMaxBuiltBytes = size_t{256} << 20;

struct Scope {
  std::map<std::string, Value, std::less<>> vars;
  Scope* parent = nullptr;
};

enum class Flow { Normal, Break, Continue };

class Renderer {
 public:
  Renderer(const std::string& name, const std::shared_ptr<Object>& globals) : name_(name), globals_(globals) {}

  Text run(const Body& body) {
    Text out;
    if (exec(body, root_, out) != Flow::Normal) fail({1, 1}, "'break' or 'continue' outside a loop");
    return out;
  }

 private:
  [[noreturn]] void fail(const SourcePos& p, const std::string& what) const {
    throw Error(name_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": " + what);
  }

  Value lookup(const std::string& n, const Scope& scope) const {
    for (const Scope* s = &scope; s != nullptr; s = s->parent)
      if (auto it = s->vars.find(n); it != s->vars.end()) return it->second;
    if (const Value* v = globals_->find(n)) return *v;
    return Value::undefined(n);
  }

  // Counts one level of statements or expressions inside one another while alive.
  struct Nested {
    Nested(Renderer& r, const SourcePos& p) : r_(r) {
      if (++r_.nesting_ > kMaxRenderDepth)
        r_.fail(p, "statements, expressions and macro calls nested deeper than " + std::to_string(kMaxRenderDepth) +
                       " levels (the renderer's limit)");
    }
    ~Nested() { --r_.nesting_; }
    Renderer& r_;
  };

  Flow exec(const Body& body, Scope& scope, Text& out) {
    for (const NodePtr& n : body) {
      const Flow f = exec(*n, scope, out);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  void count_step(const SourcePos& p) {
    if (++steps_ > kMaxSteps)
      fail(p, "the template did not finish within " + std::to_string(kMaxSteps) + " steps (the renderer's limit)");
  }

  // What an expression built: its bytes count against kMaxBuiltBytes, and it
  // may nest no deeper than kMaxValueDepth.
  void account(const Expr& e, const Value& v) {
    if (v.depth() > kMaxValueDepth)
      fail(e.pos, "a value nested deeper than " + std::to_string(kMaxValueDepth) + " levels (the renderer's limit)");
    switch (e.kind) {
      case Expr::Kind::List:
      case Expr::Kind::Dict:
      case Expr::Kind::Binary:
      case Expr::Kind::Slice:
      case Expr::Kind::Call:
      case Expr::Kind::Filter: break;
      default: return;  // a value looked up or passed on, not built
    }
    if (v.is_string()) built_ += v.as_text().size();
    else if (v.is_array()) built_ += v.as_array().size() * sizeof(Value);
    else if (v.is_object()) built_ += v.as_object().items.size() * sizeof(std::pair<std::string, Value>);
    if (built_ > kMaxBuiltBytes)
      fail(e.pos, "the template built more than " + std::to_string(kMaxBuiltBytes >> 20) +
                      " MiB of strings and lists (the renderer's limit)");
  }

  Flow exec(const Node& n, Scope& scope, Text& out) {
    const Nested nested(*this, n.pos);
    count_step(n.pos);
    try {
      return exec_unchecked(n, scope, out);
    } catch (const ValueError& err) {  // from writing the output: expressions report their own
      fail(n.pos, err.what());
    }
  }

  Flow exec_unchecked(const Node& n, Scope& scope, Text& out) {
    switch (n.kind) {
      case Node::Kind::Text: out.append(n.text); return Flow::Normal;
      case Node::Kind::Output: out.append(to_text(eval(*n.expr, scope))); return Flow::Normal;
      case Node::Kind::If:
        for (size_t i = 0; i < n.bodies.size(); ++i) {
          if (i >= n.conditions.size() || eval(*n.conditions[i], scope).truthy()) return exec(n.bodies[i], scope, out);
        }
        return Flow::Normal;
      case Node::Kind::For: return exec_for(n, scope, out);
      case Node::Kind::Set: {
        Value v = eval(*n.expr, scope);
        if (!n.attribute.empty()) {
          const Value target = lookup(n.targets[0], scope);
          if (!target.is_object() || !target.as_object().is_namespace)
            fail(n.pos, "cannot assign attribute on non-namespace object '" + n.targets[0] + "'");
          check_namespace_item(v);
          target.mutable_object().set(n.attribute, std::move(v));
        } else {
          assign(n, n.targets, v, scope);
        }
        return Flow::Normal;
      }
      case Node::Kind::SetBlock: {
        Text captured;
        exec(n.bodies[0], scope, captured);
        scope.vars[n.targets[0]] = Value(captured);
        return Flow::Normal;
      }
      case Node::Kind::Macro: scope.vars[n.name] = macro(n); return Flow::Normal;
      case Node::Kind::Break: return Flow::Break;
      case Node::Kind::Continue: return Flow::Continue;
      case Node::Kind::Block: return exec(n.bodies[0], scope, out);
      case Node::Kind::FilterBlock: {
        Text captured;
        exec(n.bodies[0], scope, captured);
        const Value saved = filter_input_;
        filter_input_ = Value(captured);
        out.append(to_text(eval(*n.expr, scope)));
        filter_input_ = saved;
        return Flow::Normal;
      }
    }
    return Flow::Normal;
  }

  // set a = v, or set a, b = v (unpacking).
  void assign(const Node& n, const std::vector<std::string>& targets, const Value& v, Scope& scope) {
    if (targets.size() == 1) {
      scope.vars[targets[0]] = v;
      return;
    }
    const std::vector<Value> items = unpackable(n, v);
    if (items.size() != targets.size())
      fail(n.pos, "cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(targets.size()) + " names");
    for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = items[i];
  }

  std::vector<Value> unpackable(const Node& n, const Value& v) {
    try {
      return iterate(v);
    } catch (const ValueError& e) {
      fail(n.pos, e.what());
    }
  }

  Flow exec_for(const Node& n, Scope& scope, Text& out) {
    std::vector<Value> items = unpackable(n, eval(*n.expr, scope));
    if (n.filter) {  // for x in xs if cond: the loop (and loop.length) sees only what passes
      std::vector<Value> kept;
      for (const Value& item : items) {
        Scope s{{}, &scope};
        assign(n, n.targets, item, s);
        if (eval(*n.filter, s).truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) return n.bodies.size() > 1 ? exec(n.bodies[1], scope, out) : Flow::Normal;
    const int64_t length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      count_step(n.pos);  // an iteration costs a step even when its body is empty
      Scope s{{}, &scope};
      assign(n, n.targets, items[static_cast<size_t>(i)], s);
      // Built whole each iteration (a template may keep it); its keys are distinct, so no look-ups.
      auto loop = make_object();
      const auto item = [&](const char* key, Value v) { loop->items.emplace_back(key, std::move(v)); };
      loop->items.reserve(12);
      item("index0", Value(i));
      item("index", Value(i + 1));
      item("revindex0", Value(length - i - 1));
      item("revindex", Value(length - i));
      item("first", Value(i == 0));
      item("last", Value(i == length - 1));
      item("length", Value(length));
      item("depth", Value(1));
      item("depth0", Value(0));
      item("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("previtem"));
      item("nextitem", i + 1 < length ? items[static_cast<size_t>(i + 1)] : Value::undefined("nextitem"));
      item("cycle", Value(Function([i](const Args& a) {
        if (a.positional.empty()) throw ValueError("loop.cycle() needs at least one value");
        return a.positional[static_cast<size_t>(i) % a.positional.size()];
      })));
      s.vars["loop"] = Value(loop);
      if (exec(n.bodies[0], s, out) == Flow::Break) break;
    }
    return Flow::Normal;
  }

  Value macro(const Node& n) {
    return Value(Function([this, &n](const Args& a) {
      if (a.positional.size() > n.params.size())
        throw ValueError("macro '" + n.name + "' takes " + std::to_string(n.params.size()) + " arguments, got " +
                         std::to_string(a.positional.size()));
      if (depth_ >= kMaxCallDepth) throw ValueError("macro calls nested deeper than " + std::to_string(kMaxCallDepth));
      Scope s{{}, &root_};
      for (size_t i = 0; i < n.params.size(); ++i) {
        const auto& [param, dflt] = n.params[i];
        if (const Value* v = a.get(i, param)) s.vars[param] = *v;
        else s.vars[param] = dflt ? eval(*dflt, s) : Value::undefined(param);
      }
      for (const auto& [k, v] : a.named) {
        bool known = false;
        for (const auto& p : n.params) known = known || p.first == k;
        if (!known) throw ValueError("macro '" + n.name + "' has no argument '" + k + "'");
      }
      ++depth_;
      Text out;
      exec(n.bodies[0], s, out);
      --depth_;
      return Value(out);
    }));
  }

  Args arguments(const Expr& e, Scope& scope) {
    Args a;
    for (const ExprPtr& x : e.items) a.positional.push_back(eval(*x, scope));
    for (const auto& [k, x] : e.named) a.named.emplace_back(k, eval(*x, scope));
    return a;
  }

  Value eval(const Expr& e, Scope& scope) {
    const Nested nested(*this, e.pos);
    count_step(e.pos);
    Value v;
    try {
      v = eval_unchecked(e, scope);
    } catch (const ValueError& err) {
      fail(e.pos, err.what());
    }
    account(e, v);
    return v;
  }

  static std::optional<long long> slice_part(const Value& v) {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    return int_arg(v, "slice");
  }

  Value eval_unchecked(const Expr& e, Scope& scope) {
    switch (e.kind) {
      case Expr::Kind::Literal: return e.value;
      case Expr::Kind::Name: return lookup(e.name, scope);
      case Expr::Kind::List: {
        Array items;
        for (const ExprPtr& x : e.items) items.push_back(eval(*x, scope));
        return e.name == "tuple" ? Value::tuple(std::move(items)) : Value(std::move(items));
      }
      case Expr::Kind::Dict: {
        auto obj = make_object();
        for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
          const Value key = eval(*e.items[i], scope);
          if (!key.is_string()) throw ValueError("dict keys must be strings in kiln's template renderer");
          obj->set(key.as_text().str(), eval(*e.items[i + 1], scope));
        }
        return Value(obj);
      }
      case Expr::Kind::Attribute: return get_attribute(eval(*e.a, scope), e.name);
      case Expr::Kind::Subscript: {
        const Value target = eval(*e.a, scope);  // before the index, as Jinja
        return get_item(target, eval(*e.b, scope));
      }
      case Expr::Kind::Slice: {
        const Value target = eval(*e.a, scope);
        std::optional<long long> parts[3];
        for (int i = 0; i < 3; ++i)
          if (e.items[static_cast<size_t>(i)]) parts[i] = slice_part(eval(*e.items[static_cast<size_t>(i)], scope));
        return get_slice(target, parts[0], parts[1], parts[2].value_or(1));
      }
      case Expr::Kind::Call: {
        const Value callee = eval(*e.a, scope);
        const Args args = arguments(e, scope);
        if (callee.is_undefined()) throw ValueError("'" + callee.undefined_name() + "' is undefined");
        if (!callee.is_function()) throw ValueError("'" + callee.type_name() + "' object is not callable");
        return callee.as_function()(args);
      }
      case Expr::Kind::Filter: {
        const Value input = e.a ? eval(*e.a, scope) : filter_input_;
        return apply_filter(e.name, input, arguments(e, scope));
      }
      case Expr::Kind::Test: {
        const Value input = eval(*e.a, scope);
        if (e.name == "defined" || e.name == "undefined") return Value(apply_test(e.name, input, {}) != e.negated);
        return Value(apply_test(e.name, input, arguments(e, scope)) != e.negated);
      }
      case Expr::Kind::Unary: {
        const Value v = eval(*e.a, scope);
        if (e.name == "not") return Value(!v.truthy());
        if (v.is_undefined()) throw ValueError("'" + v.undefined_name() + "' is undefined");
        if (!v.is_number()) throw ValueError("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
        if (e.name == "+") return v;
        return v.is_int() ? Value(-v.as_int()) : Value(-v.as_float());
      }
      case Expr::Kind::Binary: {
        if (e.name == "and" || e.name == "or") {
          Value left = eval(*e.a, scope);
          if (left.truthy() == (e.name == "or")) return left;
          return eval(*e.b, scope);
        }
        // Left operand first, as Jinja does (a function's arguments have no order in C++).
        const Value a = eval(*e.a, scope);
        const Value b = eval(*e.b, scope);
        return binary(e.name, a, b);
      }
      case Expr::Kind::Compare: {
        const Value a = eval(*e.a, scope);
        const Value b = eval(*e.b, scope);
        if (e.name == "==") return Value(equal(a, b));
        if (e.name == "!=") return Value(!equal(a, b));
        if (e.name == "<") return Value(less(a, b));
        if (e.name == ">") return Value(less(b, a));
        if (e.name == "<=") return Value(!less(b, a));
        if (e.name == ">=") return Value(!less(a, b));
        if (e.name == "in") return Value(contains(b, a));
        return Value(!contains(b, a));  // not in
      }
      case Expr::Kind::Ternary:
        if (eval(*e.a, scope).truthy()) return eval(*e.b, scope);
        return e.c ? eval(*e.c, scope) : Value::undefined("else");
    }
    return Value();
  }

  static Value binary(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") {
      Text t = to_text(a);
      t.append(to_text(b));
      return Value(t);
    }
    if (a.is_undefined()) throw ValueError("'" + a.undefined_name() + "' is undefined");
    if (b.is_undefined()) throw ValueError("'" + b.undefined_name() + "' is undefined");
    const auto unsupported = [&]() -> Value {
      throw ValueError("unsupported operand types for " + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
    };
    if (op == "+") {
      if (a.is_string() && b.is_string()) {
        Text t = a.as_text();
        t.append(b.as_text());
        return Value(t);
      }
      if (a.is_array() && b.is_array()) {
        check_list_size(a.as_array().size() + b.as_array().size());
        Array items = a.as_array();
        items.insert(items.end(), b.as_array().begin(), b.as_array().end());
        return Value(std::move(items));
      }
    }
    if (op == "*" && (a.is_string() || a.is_array()) && b.is_int()) return repeat(a, b.as_int());
    if (op == "*" && a.is_int() && (b.is_string() || b.is_array())) return repeat(b, a.as_int());
    if (op == "%" && a.is_string()) throw ValueError("printf-style string formatting is not supported by kiln's template renderer");
    if (!a.is_number() || !b.is_number()) return unsupported();
    if (a.is_int() && b.is_int()) return integer_op(op, a.as_int(), b.as_int());
    const double x = a.as_float(), y = b.as_float();
    if (op == "+") return Value(x + y);
    if (op == "-") return Value(x - y);
    if (op == "*") return Value(x * y);
    if (op == "**") return Value(std::pow(x, y));
    if (y == 0) throw ValueError("division by zero");
    if (op == "/") return Value(x / y);
    if (op == "//") return Value(std::floor(x / y));
    const double m = std::fmod(x, y);  // Python's %: the sign of the divisor
    return Value(m != 0 && ((m < 0) != (y < 0)) ? m + y : m);
  }

  // s * n or list * n, refused before anything is built if the result would pass its limit.
  static Value repeat(const Value& v, int64_t n) {
    const size_t count = n > 0 ? static_cast<size_t>(n) : 0;
    const size_t unit = v.is_string() ? v.as_text().size() : v.as_array().size();
    const size_t limit = v.is_string() ? kMaxTextBytes : kMaxListItems;
    const size_t total = unit > 0 && count > limit / unit ? limit + 1 : unit * count;
    if (v.is_string()) {
      check_text_size(total);
      Text t;
      for (size_t i = 0; i < count; ++i) t.append(v.as_text());
      return Value(t);
    }
    check_list_size(total);
    Array items;
    items.reserve(total);
    for (size_t i = 0; i < count; ++i) items.insert(items.end(), v.as_array().begin(), v.as_array().end());
    return Value(std::move(items));
  }

  static Value integer_op(const std::string& op, int64_t x, int64_t y) {
    int64_t r = 0;
    const auto overflow = [] { return ValueError("integer overflow"); };
    if (op == "+") {
      if (__builtin_add_overflow(x, y, &r)) throw overflow();
      return Value(r);
    }
    if (op == "-") {
      if (__builtin_sub_overflow(x, y, &r)) throw overflow();
      return Value(r);
    }
    if (op == "*") {
      if (__builtin_mul_overflow(x, y, &r)) throw overflow();
      return Value(r);
    }
    if (op == "**") {
      if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      r = 1;
      for (int64_t base = x; y > 0; y >>= 1) {  // by squaring: at most 63 steps
        if ((y & 1) && __builtin_mul_overflow(r, base, &r)) throw overflow();
        if (y > 1 && __builtin_mul_overflow(base, base, &base)) throw overflow();
      }
      return Value(r);
    }
    if (y == 0) throw ValueError("division by zero");
    if (op == "/") return Value(static_cast<double>(x) / static_cast<double>(y));
    if (x == std::numeric_limits<int64_t>::min() && y == -1) throw overflow();
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors
      --q;
      m += y;
    }
    return Value(op == "//" ? q : m);
  }

  const std::string& name_;
  std::shared_ptr<Object> globals_;
  Scope root_;
  Value filter_input_;
  int depth_ = 0;    // macro calls
  int nesting_ = 0;  // statements and expressions (Nested)
  long long steps_ = 0;
  size_t built_ = 0;  // bytes, see account()
};

}  // namespace

Text render_template(const Body& body, const std::string& name, const std::shared_ptr<Object>& globals) {
  return Renderer(name, globals).run(body);
}

}  // namespace kiln::chat
