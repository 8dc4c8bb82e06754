// An independent check of a JSON value against a JSON schema, for the
// keywords kiln's schema -> grammar conversion supports (type, enum, const,
// anyOf/oneOf, $ref, properties/required/additionalProperties, string
// lengths in code points, pattern by std::regex's ECMAScript (ASCII text),
// the formats date, time, date-time, uuid, number bounds, items/minItems/
// maxItems). Written from the JSON Schema specification, not from the
// converter, so that the tests judge the converter by it; one difference:
// without additionalProperties, no other property is valid (what the
// converter generates, as llama-server does; the specification allows any).
#pragma once

#include <nlohmann/json.hpp>

namespace kiln::test {

bool satisfies(const nlohmann::ordered_json& schema, const nlohmann::ordered_json& value);

}  // namespace kiln::test
