// Tokens → the statement tree (Jinja's grammar and operator precedence).
#pragma once

#include <string>
#include <vector>

#include "engine/chat/template_ast.hpp"

namespace kiln::chat {

// Throws kiln::Error "<name>:<line>:<column>: <problem>" for a syntax error or
// a statement the renderer does not support (include, extends, call, ...).
Body parse_template(const std::vector<Token>& tokens, const std::string& name);

}  // namespace kiln::chat
