// Jinja source → tokens, with Jinja's whitespace rules applied to the text
// between tags as Hugging Face configures them: trim_blocks (the newline after
// a block or comment tag is dropped), lstrip_blocks (spaces before a block or
// comment tag at the start of a line are dropped), `-` / `+` on a tag, and
// the single trailing newline of the source dropped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::chat {

// Where something is in the template: 1-based line and column (in characters).
struct SourcePos {
  int line = 0;
  int column = 0;
};

enum class TokenKind {
  Text,        // literal output between tags
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,
  String,      // value: the decoded literal
  Integer,
  Float,
  Operator,    // + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  End,         // end of the template
};

struct Token {
  TokenKind kind;
  std::string text;  // Text, Name, String (decoded), Operator
  SourcePos pos;
  int64_t integer = 0;
  double number = 0;
};

// Throws kiln::Error "<name>:<line>:<column>: <problem>" for an unterminated
// tag, comment or string, an unbalanced bracket or a character Jinja does not
// accept, and "<name>: ..." for a template longer than 1 MiB.
std::vector<Token> lex_template(std::string_view source, const std::string& name);

}  // namespace kiln::chat
