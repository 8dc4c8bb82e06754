// The parsed template: expressions and statements, each with its position.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/chat/template_lexer.hpp"
#include "engine/chat/value.hpp"

namespace kiln::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,    // value
    Name,       // name
    List,       // items; name "tuple" for a tuple
    Dict,       // items: key, value, key, value, ...
    Attribute,  // a.name
    Subscript,  // a[b]
    Slice,      // a[b:c:d]; absent parts are null
    Call,       // a(items..., named...)
    Filter,     // a | name(items..., named...)
    Test,       // a is name(items...), negated: a is not name
    Unary,      // name ("-", "+", "not") a
    Binary,     // a name b: + - * / // % ** ~ and or
    Compare,    // a name b: == != < <= > >= in, "not in"
    Ternary,    // b if a else c
  };
  Kind kind;
  SourcePos pos;
  Value value;
  std::string name;
  bool negated = false;
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> named;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    Text,      // text
    Output,    // {{ expr }}
    If,        // conditions[i] → bodies[i]; a last body without a condition is the else
    For,       // for targets in expr [if filter]: bodies[0], else bodies[1]
    Set,       // set targets = expr, or set targets[0].attribute = expr
    SetBlock,  // set targets[0] %}bodies[0]{% endset
    Macro,     // macro name(params = defaults): bodies[0]
    Break,
    Continue,
    Block,     // bodies[0] as it is ({% generation %}, which only marks text for training tools)
    FilterBlock,  // filter expr-chain applied to the output of bodies[0]: expr is the filter with a null input
  };
  Kind kind;
  SourcePos pos;
  std::string text;
  std::string name;
  std::string attribute;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<std::string> targets;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  std::vector<std::pair<std::string, ExprPtr>> params;  // defaults may be null
};

}  // namespace kiln::chat
