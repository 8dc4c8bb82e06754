// Reading a request body's fields: what is there, of which type, and the 400
// that names the field when it is not as OpenAI's API has it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kiln {

// Request bodies keep their keys' order, so that tools' schemas reach the
// template (and properties the grammar) in the order the client wrote them.
using RequestJson = nlohmann::ordered_json;

// Throws RequestError (400) "'<param>' <rule>".
[[noreturn]] void reject(const std::string& param, const std::string& rule);

// The field `key` if `body` has it and it is not null.
const RequestJson* field(const RequestJson& body, const char* key);

// v as a string; else a 400 naming `name`.
std::string string_field(const RequestJson& v, const std::string& name);

}  // namespace kiln
