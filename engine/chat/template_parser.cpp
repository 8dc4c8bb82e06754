#include "engine/chat/template_parser.hpp"

#include <algorithm>
#include <initializer_list>

#include "engine/error/error.hpp"

namespace kiln::chat {

namespace {

constexpr int kMaxNesting = 200;  // deeper expressions or blocks are refused rather than overflowing the stack

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& name) : t_(tokens), name_(name) {}

  Body document() {
    std::string end;
    Body body = statements({}, end);
    return body;
  }

 private:
  [[noreturn]] void fail(const SourcePos& p, const std::string& what) const {
    throw Error(name_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail(peek().pos, what); }

  const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  const Token& next() { return t_[i_ < t_.size() - 1 ? i_++ : i_]; }
  bool at_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Operator && peek(ahead).text == op;
  }
  bool at_name(std::string_view n, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::Name && peek(ahead).text == n;
  }
  bool skip_op(std::string_view op) {
    if (!at_op(op)) return false;
    ++i_;
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!at_name(n)) return false;
    ++i_;
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case TokenKind::End: return "end of template";
      case TokenKind::VarEnd: return "'}}'";
      case TokenKind::BlockEnd: return "'%}'";
      case TokenKind::Text: return "text";
      case TokenKind::String: return "a string";
      default: return "'" + t.text + "'";
    }
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail("expected '" + std::string(op) + "', found " + describe(peek()));
  }
  std::string expect_name() {
    if (peek().kind != TokenKind::Name) fail("expected a name, found " + describe(peek()));
    return next().text;
  }
  void expect_block_end() {
    if (peek().kind != TokenKind::BlockEnd) fail("expected '%}', found " + describe(peek()));
    ++i_;
  }

  // Statements up to one of the tags in `ends` ({% endif %}, {% else %}, ...),
  // whose name is returned in `found` with the tag's name read (not its end).
  Body statements(std::initializer_list<std::string_view> ends, std::string& found) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::End) {
        if (ends.size() == 0) return body;
        fail("unexpected end of template: missing {% " + std::string(*ends.begin()) + " %}");
      }
      if (t.kind == TokenKind::Text) {
        auto n = node(Node::Kind::Text, t.pos);
        n->text = t.text;
        body.push_back(std::move(n));
        ++i_;
      } else if (t.kind == TokenKind::VarBegin) {
        ++i_;
        auto n = node(Node::Kind::Output, t.pos);
        n->expr = tuple_expression();
        if (peek().kind != TokenKind::VarEnd) fail("expected '}}', found " + describe(peek()));
        ++i_;
        body.push_back(std::move(n));
      } else if (t.kind == TokenKind::BlockBegin) {
        ++i_;
        const Token& tag = peek();
        if (tag.kind != TokenKind::Name) fail("expected a statement name, found " + describe(tag));
        if (std::find(ends.begin(), ends.end(), tag.text) != ends.end()) {
          found = tag.text;
          ++i_;
          return body;
        }
        body.push_back(statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  static NodePtr node(Node::Kind k, SourcePos p) {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->pos = p;
    return n;
  }

  NodePtr statement() {
    const Nested nested(*this);
    const Token& tag = next();
    const std::string& s = tag.text;
    if (s == "if") return if_statement(tag.pos);
    if (s == "for") return for_statement(tag.pos);
    if (s == "set") return set_statement(tag.pos);
    if (s == "macro") return macro_statement(tag.pos);
    if (s == "break" || s == "continue") {
      expect_block_end();
      return node(s == "break" ? Node::Kind::Break : Node::Kind::Continue, tag.pos);
    }
    if (s == "generation") {
      expect_block_end();
      auto n = node(Node::Kind::Block, tag.pos);
      std::string found;
      n->bodies.push_back(statements({"endgeneration"}, found));
      expect_block_end();
      return n;
    }
    if (s == "filter") {
      auto n = node(Node::Kind::FilterBlock, tag.pos);
      n->expr = filter_chain(nullptr);
      expect_block_end();
      std::string found;
      n->bodies.push_back(statements({"endfilter"}, found));
      expect_block_end();
      return n;
    }
    fail(tag.pos, "'" + s + "' statements are not supported by kiln's template renderer");
  }

  NodePtr if_statement(SourcePos p) {
    auto n = node(Node::Kind::If, p);
    n->conditions.push_back(tuple_expression());
    expect_block_end();
    while (true) {
      std::string found;
      n->bodies.push_back(statements({"elif", "else", "endif"}, found));
      if (found == "elif") {
        n->conditions.push_back(tuple_expression());
        expect_block_end();
      } else if (found == "else") {
        expect_block_end();
        n->bodies.push_back(statements({"endif"}, found));
        expect_block_end();
        return n;
      } else {
        expect_block_end();
        return n;
      }
    }
  }

  NodePtr for_statement(SourcePos p) {
    auto n = node(Node::Kind::For, p);
    do {
      n->targets.push_back(expect_name());
    } while (skip_op(","));
    if (!skip_name("in")) fail("expected 'in' in a for loop, found " + describe(peek()));
    n->expr = tuple_expression(/*ternary=*/false);
    if (skip_name("if")) n->filter = expression();
    if (at_name("recursive")) fail("recursive loops are not supported by kiln's template renderer");
    expect_block_end();
    std::string found;
    n->bodies.push_back(statements({"else", "endfor"}, found));
    if (found == "else") {
      expect_block_end();
      n->bodies.push_back(statements({"endfor"}, found));
    }
    expect_block_end();
    return n;
  }

  NodePtr set_statement(SourcePos p) {
    auto n = node(Node::Kind::Set, p);
    n->targets.push_back(expect_name());
    if (skip_op(".")) {
      n->attribute = expect_name();
    } else {
      while (skip_op(",")) n->targets.push_back(expect_name());
    }
    if (peek().kind == TokenKind::BlockEnd && n->targets.size() == 1 && n->attribute.empty()) {
      ++i_;
      n->kind = Node::Kind::SetBlock;
      std::string found;
      n->bodies.push_back(statements({"endset"}, found));
      expect_block_end();
      return n;
    }
    expect_op("=");
    n->expr = tuple_expression();
    expect_block_end();
    return n;
  }

  NodePtr macro_statement(SourcePos p) {
    auto n = node(Node::Kind::Macro, p);
    n->name = expect_name();
    expect_op("(");
    while (!skip_op(")")) {
      if (!n->params.empty()) expect_op(",");
      if (skip_op(")")) break;
      std::string param = expect_name();
      ExprPtr def;
      if (skip_op("=")) def = expression();
      n->params.emplace_back(std::move(param), std::move(def));
    }
    expect_block_end();
    std::string found;
    n->bodies.push_back(statements({"endmacro"}, found));
    if (peek().kind == TokenKind::Name) ++i_;  // {% endmacro name %}
    expect_block_end();
    return n;
  }

  // --- expressions ---------------------------------------------------------

  static ExprPtr expr(Expr::Kind k, SourcePos p) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->pos = p;
    return e;
  }

  // An expression, or several separated by commas (a tuple, read as a list).
  ExprPtr tuple_expression(bool ternary = true) {
    const SourcePos p = peek().pos;
    ExprPtr first = ternary ? expression() : or_expression();
    if (!at_op(",")) return first;
    auto list = expr(Expr::Kind::List, p);
    list->name = "tuple";
    list->items.push_back(std::move(first));
    while (skip_op(",")) {
      if (peek().kind == TokenKind::BlockEnd || peek().kind == TokenKind::VarEnd || at_op(")")) break;
      list->items.push_back(ternary ? expression() : or_expression());
    }
    return list;
  }

  ExprPtr expression() {
    const Nested nested(*this);
    ExprPtr e = or_expression();
    while (at_name("if")) {
      const SourcePos p = next().pos;
      auto t = expr(Expr::Kind::Ternary, p);
      t->a = or_expression();
      t->b = std::move(e);
      if (skip_name("else")) t->c = expression();
      e = std::move(t);
    }
    return e;
  }

  ExprPtr binary(ExprPtr left, const Token& op, ExprPtr right, Expr::Kind k = Expr::Kind::Binary) {
    auto e = expr(k, op.pos);
    e->name = op.text;
    e->a = std::move(left);
    e->b = std::move(right);
    return e;
  }

  // One level of left-associative binary operators: `next` operands joined by any of `ops`
  // (operator tokens, or names such as "and").
  ExprPtr left_associative(ExprPtr (Parser::*next)(), std::initializer_list<std::string_view> ops) {
    ExprPtr e = (this->*next)();
    while (true) {
      const Token& t = peek();
      const bool is_op = (t.kind == TokenKind::Operator || t.kind == TokenKind::Name) &&
                         std::find(ops.begin(), ops.end(), t.text) != ops.end();
      if (!is_op) return e;
      ++i_;
      e = binary(std::move(e), t, (this->*next)());
    }
  }

  ExprPtr or_expression() { return left_associative(&Parser::and_expression, {"or"}); }
  ExprPtr and_expression() { return left_associative(&Parser::not_expression, {"and"}); }

  ExprPtr not_expression() {
    const Nested nested(*this);
    if (at_name("not")) {
      const SourcePos p = next().pos;
      auto e = expr(Expr::Kind::Unary, p);
      e->name = "not";
      e->a = not_expression();
      return e;
    }
    return compare_expression();
  }

  ExprPtr compare_expression() {
    ExprPtr e = additive();
    static constexpr std::string_view kOps[] = {"==", "!=", "<", "<=", ">", ">="};
    ExprPtr chain;  // a < b < c: (a < b) and (b < c)
    while (true) {
      const Token& op = peek();
      std::string name;
      if (op.kind == TokenKind::Operator && std::find(std::begin(kOps), std::end(kOps), op.text) != std::end(kOps)) {
        name = op.text;
        ++i_;
      } else if (at_name("in")) {
        name = "in";
        ++i_;
      } else if (at_name("not") && at_name("in", 1)) {
        name = "not in";
        i_ += 2;
      } else {
        break;
      }
      ExprPtr right = additive();
      const Expr* left = chain ? chain->kind == Expr::Kind::Compare ? chain->b.get() : chain->b->b.get() : e.get();
      auto cmp = expr(Expr::Kind::Compare, op.pos);
      cmp->name = name;
      cmp->a = chain ? clone(*left) : std::move(e);
      cmp->b = std::move(right);
      if (!chain) {
        chain = std::move(cmp);
      } else {
        Token and_op{TokenKind::Name, "and", op.pos};
        chain = binary(std::move(chain), and_op, std::move(cmp));
      }
    }
    return chain ? std::move(chain) : std::move(e);
  }

  static ExprPtr clone(const Expr& e) {
    auto c = std::make_unique<Expr>();
    c->kind = e.kind;
    c->pos = e.pos;
    c->value = e.value;
    c->name = e.name;
    c->negated = e.negated;
    if (e.a) c->a = clone(*e.a);
    if (e.b) c->b = clone(*e.b);
    if (e.c) c->c = clone(*e.c);
    for (const auto& i : e.items) c->items.push_back(i ? clone(*i) : nullptr);
    for (const auto& [k, v] : e.named) c->named.emplace_back(k, clone(*v));
    return c;
  }

  ExprPtr additive() { return left_associative(&Parser::concat, {"+", "-"}); }
  ExprPtr concat() { return left_associative(&Parser::multiplicative, {"~"}); }
  ExprPtr multiplicative() { return left_associative(&Parser::power, {"*", "/", "//", "%"}); }
  ExprPtr power() { return left_associative(&Parser::operand, {"**"}); }
  ExprPtr operand() { return unary(true); }

  ExprPtr unary(bool with_filters) {
    const Nested nested(*this);
    ExprPtr e;
    if (at_op("-") || at_op("+")) {
      const Token& op = next();
      e = expr(Expr::Kind::Unary, op.pos);
      e->name = op.text;
      e->a = unary(false);
    } else {
      e = primary();
    }
    e = postfix(std::move(e));
    if (with_filters) e = filters_and_tests(std::move(e));
    return e;
  }

  ExprPtr primary() {
    const Token& t = next();
    switch (t.kind) {
      case TokenKind::Name: {
        if (t.text == "true" || t.text == "True") return literal(Value(true), t.pos);
        if (t.text == "false" || t.text == "False") return literal(Value(false), t.pos);
        if (t.text == "none" || t.text == "None") return literal(Value::none(), t.pos);
        auto e = expr(Expr::Kind::Name, t.pos);
        e->name = t.text;
        return e;
      }
      case TokenKind::String: {
        std::string s = t.text;
        while (peek().kind == TokenKind::String) s += next().text;  // adjacent literals join
        return literal(Value(std::move(s)), t.pos);
      }
      case TokenKind::Integer: return literal(Value(t.integer), t.pos);
      case TokenKind::Float: return literal(Value(t.number), t.pos);
      case TokenKind::Operator:
        if (t.text == "(") {
          if (skip_op(")")) {
            auto empty = expr(Expr::Kind::List, t.pos);
            empty->name = "tuple";
            return empty;
          }
          ExprPtr e = tuple_expression();
          expect_op(")");
          return e;
        }
        if (t.text == "[") {
          auto e = expr(Expr::Kind::List, t.pos);
          while (!skip_op("]")) {
            if (!e->items.empty()) expect_op(",");
            if (skip_op("]")) break;
            e->items.push_back(expression());
          }
          return e;
        }
        if (t.text == "{") {
          auto e = expr(Expr::Kind::Dict, t.pos);
          while (!skip_op("}")) {
            if (!e->items.empty()) expect_op(",");
            if (skip_op("}")) break;
            e->items.push_back(expression());
            expect_op(":");
            e->items.push_back(expression());
          }
          return e;
        }
        break;
      default: break;
    }
    fail(t.pos, "unexpected " + describe(t));
  }

  static ExprPtr literal(Value v, SourcePos p) {
    auto e = expr(Expr::Kind::Literal, p);
    e->value = std::move(v);
    return e;
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (at_op(".")) {
        const SourcePos p = next().pos;
        auto a = expr(Expr::Kind::Attribute, p);
        if (peek().kind == TokenKind::Integer) {  // a.0 is a[0]
          a->kind = Expr::Kind::Subscript;
          a->b = literal(Value(next().integer), p);
        } else {
          a->name = expect_name();
        }
        a->a = std::move(e);
        e = std::move(a);
      } else if (at_op("[")) {
        e = subscript(std::move(e));
      } else if (at_op("(")) {
        e = call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr subscript(ExprPtr target) {
    const SourcePos p = next().pos;  // '['
    ExprPtr parts[3];
    int colons = 0;
    while (!at_op("]")) {
      if (skip_op(":")) {
        if (++colons > 2) fail("a slice has at most two ':'");
        continue;
      }
      if (parts[colons]) fail("expected ':' or ']', found " + describe(peek()));
      parts[colons] = expression();
    }
    ++i_;
    auto e = expr(colons ? Expr::Kind::Slice : Expr::Kind::Subscript, p);
    if (!colons && !parts[0]) fail(p, "empty subscript");
    e->a = std::move(target);
    if (colons) {
      e->items.push_back(std::move(parts[0]));
      e->items.push_back(std::move(parts[1]));
      e->items.push_back(std::move(parts[2]));
    } else {
      e->b = std::move(parts[0]);
    }
    return e;
  }

  // Arguments in parentheses: positional into items, keywords into named.
  void arguments(Expr& e) {
    expect_op("(");
    while (!skip_op(")")) {
      if (!e.items.empty() || !e.named.empty()) expect_op(",");
      if (skip_op(")")) break;
      if (at_op("*") || at_op("**")) fail("*args and **kwargs are not supported by kiln's template renderer");
      if (peek().kind == TokenKind::Name && at_op("=", 1)) {
        std::string key = next().text;
        ++i_;
        e.named.emplace_back(std::move(key), expression());
      } else {
        if (!e.named.empty()) fail("a positional argument follows a keyword argument");
        e.items.push_back(expression());
      }
    }
  }

  ExprPtr call(ExprPtr callee) {
    auto e = expr(Expr::Kind::Call, peek().pos);
    e->a = std::move(callee);
    arguments(*e);
    return e;
  }

  // name(.name)* and optional arguments, applied to `input` (null: the body of a filter block).
  ExprPtr filter(ExprPtr input) {
    auto f = expr(Expr::Kind::Filter, peek().pos);
    f->name = expect_name();
    while (skip_op(".")) f->name += "." + expect_name();
    if (at_op("(")) arguments(*f);
    f->a = std::move(input);
    return f;
  }

  ExprPtr filter_chain(ExprPtr input) {
    do {
      input = filter(std::move(input));
    } while (skip_op("|"));
    return input;
  }

  ExprPtr filters_and_tests(ExprPtr e) {
    while (true) {
      if (skip_op("|")) {
        e = filter(std::move(e));
      } else if (at_name("is")) {
        const SourcePos p = next().pos;
        auto t = expr(Expr::Kind::Test, p);
        t->negated = skip_name("not");
        t->name = expect_name();
        while (skip_op(".")) t->name += "." + expect_name();
        if (at_op("(")) {
          arguments(*t);
        } else if ((peek().kind == TokenKind::Name || peek().kind == TokenKind::String ||
                    peek().kind == TokenKind::Integer || peek().kind == TokenKind::Float || at_op("(") || at_op("[") ||
                    at_op("{")) &&
                   !at_name("else") && !at_name("or") && !at_name("and")) {
          t->items.push_back(postfix(primary()));
        }
        t->a = std::move(e);
        e = std::move(t);
      } else if (at_op("(")) {
        e = call(std::move(e));
      } else {
        return e;
      }
    }
  }

  // Counts one level of nesting while alive.
  struct Nested {
    explicit Nested(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) p_.fail("nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ~Nested() { --p_.depth_; }
    Parser& p_;
  };

  const std::vector<Token>& t_;
  const std::string& name_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse_template(const std::vector<Token>& tokens, const std::string& name) {
  return Parser(tokens, name).document();
}

}  // namespace kiln::chat
