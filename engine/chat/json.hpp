// JSON in and out of template values: reading conversations (and the
// conformance cases) with nlohmann-json, and the `tojson` filter, which writes
// what Python's json.dumps writes with non-ASCII characters kept as they are.
#pragma once

#include <string>
#include <string_view>

#include "engine/chat/value.hpp"

namespace kiln::chat {

// Parses one JSON document (objects keep their key order; integers that fit
// in 64 bits stay integers). Throws kiln::Error "JSON: <problem>", which
// names the line and column of a syntax error.
Value parse_json(std::string_view text);

struct JsonStyle {
  int indent = -1;  // < 0: one line, ", " and ": " between items (json.dumps' default)
  bool sort_keys = false;
  bool ensure_ascii = false;
};

// Throws ValueError for what JSON cannot hold (undefined, functions).
std::string to_json(const Value& v, const JsonStyle& style = {});

}  // namespace kiln::chat
