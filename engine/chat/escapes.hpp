// The backslash escapes JSON and Python string literals share.
#pragma once

#include <optional>

namespace kiln::chat {

// The character `\<c>` stands for, when c is one of \ " b f n r t.
inline std::optional<char> shared_escape(char c) {
  switch (c) {
    case '\\': return '\\';
    case '"': return '"';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return std::nullopt;
  }
}

}  // namespace kiln::chat
