// JSON schema -> GBNF: the grammar of the JSON documents a schema allows, for
// OpenAI's `response_format` and llama-server's `json_schema`.
//
// Covered: type (one or a list, "null" for nullable; `nullable: true`),
// object properties with `required`, additionalProperties (false, true or
// a schema; absent means none, as llama-server), enum and const, strings
// with minLength/maxLength, a `pattern` subset or a `format` (date, time,
// date-time, uuid), integers with minimum/maximum and their exclusive
// forms (exactly), numbers with integer-valued minimum/maximum (exactly),
// arrays with items/minItems/maxItems, anyOf and oneOf (as anyOf), $ref to
// "#", $defs and definitions, recursion included. A keyword the grammar
// cannot enforce is an error naming it and where it is; annotations (title,
// description, examples, default, $schema, $id, $comment, ...) are ignored.
//
// The grammar produces one spelling of each document (properties in the
// schema's order, whitespace limited), so every document it produces is
// valid; not every valid spelling is produced.
#pragma once

#include <string>
#include <string_view>

namespace kiln::grammar {

// Throws kiln::Error ("JSON schema at /properties/a: ...") for a schema
// that is not JSON, uses an unsupported keyword or value, or nests deeper
// than 64.
std::string json_schema_to_gbnf(std::string_view schema);

// The rules of a schema for a grammar that holds several (the arguments of
// each function a tool call may name): every rule's name starts with
// `prefix`, `start` is the one for the whole document. They use the shared
// JSON rules (json_common_gbnf()), which the grammar must hold once.
struct SchemaRules {
  std::string start;
  std::string rules;
};
SchemaRules json_schema_rules(std::string_view schema, const std::string& prefix);
// The JSON rules every converted schema may use (ws, string, value, object, ...).
std::string json_common_gbnf();

// Any JSON object: `response_format: {"type": "json_object"}`.
std::string json_object_gbnf();

}  // namespace kiln::grammar
