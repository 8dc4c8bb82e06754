// Runs a parsed template: statements, scopes, loops, macros, expressions.
#pragma once

#include <memory>
#include <string>

#include "engine/chat/template_ast.hpp"
#include "engine/chat/value.hpp"

namespace kiln::chat {

// Renders `body` with `globals` as the outermost variables. Throws
// kiln::Error "<name>:<line>:<column>: <problem>" for any failure, including
// a template's own raise_exception ("... raise_exception: <message>").
Text render_template(const Body& body, const std::string& name, const std::shared_ptr<Object>& globals);

}  // namespace kiln::chat
