// Whether a parameter's schema allows only strings: the tool-call formats
// that are not JSON (Qwen3-Coder's XML, Gemma 4's) write such values bare,
// so the grammar that writes them and the parser that reads them back must
// agree on which they are.
#pragma once

#include "apps/server/request_fields.hpp"

namespace kiln {

// "type": "string", or no type and an enum or const of strings only.
inline bool is_string_schema(const RequestJson& schema) {
  if (!schema.is_object()) return false;
  if (const RequestJson* type = field(schema, "type")) return *type == "string";
  const RequestJson* c = field(schema, "const");
  const RequestJson* e = field(schema, "enum");
  if (!c && !(e && e->is_array() && !e->empty())) return false;
  if (c && !c->is_string()) return false;
  if (e)
    for (const RequestJson& v : *e)
      if (!v.is_string()) return false;
  return true;
}

}  // namespace kiln
