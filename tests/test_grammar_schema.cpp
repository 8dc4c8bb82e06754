// JSON schema -> GBNF: documents written by hand are accepted or refused as
// the schema says, documents drawn at random from the grammar all satisfy
// the schema (tests/support/json_schema_check.cpp), and what cannot be enforced is
// refused by name.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "engine/error/error.hpp"
#include "engine/grammar/grammar.hpp"
#include "engine/grammar/json_schema.hpp"
#include "engine/grammar/matcher.hpp"
#include "tests/support/json_schema_check.hpp"

using kiln::grammar::Matcher;
using Json = nlohmann::ordered_json;

namespace {

std::shared_ptr<const kiln::grammar::Grammar> compile(const std::string& schema) {
  const std::string gbnf = kiln::grammar::json_schema_to_gbnf(schema);
  INFO(gbnf);
  return kiln::grammar::parse_gbnf(gbnf);
}

bool accepts(const std::shared_ptr<const kiln::grammar::Grammar>& g, const std::string& doc) {
  Matcher m(g);
  return m.accept(doc) && m.can_end();
}

std::string conversion_error(const std::string& schema) {
  try {
    compile(schema);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

// A document drawn from the grammar: random printable ASCII bytes among
// those it allows, leaning towards closing ones as the text grows.
std::optional<std::string> random_document(const std::shared_ptr<const kiln::grammar::Grammar>& g, std::mt19937& rng) {
  Matcher m(g);
  std::string text;
  while (text.size() < 3000) {
    if (m.can_end() && (m.is_finished() || rng() % 4 == 0)) return text;
    std::vector<char> allowed;
    std::vector<char> closing;
    for (int b = 0x09; b < 0x7F; ++b) {
      if (b > 0x0A && b < 0x20) continue;
      if (!m.allows(std::string(1, static_cast<char>(b)))) continue;
      allowed.push_back(static_cast<char>(b));
      if (b == '"' || b == '}' || b == ']') closing.push_back(static_cast<char>(b));
    }
    if (allowed.empty()) return std::nullopt;
    const bool close = !closing.empty() && rng() % 1000 < std::min<size_t>(900, text.size() * 4);
    const std::vector<char>& pick = close ? closing : allowed;
    const char c = pick[rng() % pick.size()];
    REQUIRE(m.accept(std::string(1, c)));
    text += c;
  }
  return std::nullopt;
}

// Every random document parses as JSON and satisfies the schema.
void check_random_documents(const std::string& schema, int count = 40) {
  const auto g = compile(schema);
  const Json s = Json::parse(schema);
  std::mt19937 rng(7);
  int checked = 0;
  for (int i = 0; i < count * 3 && checked < count; ++i) {
    const auto doc = random_document(g, rng);
    if (!doc) continue;
    INFO(schema, "\n", *doc);
    Json v;
    REQUIRE_NOTHROW(v = Json::parse(*doc));
    CHECK(kiln::test::satisfies(s, v));
    ++checked;
  }
  CHECK(checked >= count / 2);
}

const char* kPerson = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 8},
    "age": {"type": "integer", "minimum": 0, "maximum": 130},
    "email": {"type": ["string", "null"], "pattern": "^[a-z]+@[a-z]+\\.(com|org)$"},
    "tags": {"type": "array", "items": {"enum": ["a", "b", 3, null]}, "minItems": 1, "maxItems": 3},
    "kind": {"const": "person"}
  },
  "required": ["name", "age"],
  "additionalProperties": false
})";

}  // namespace

TEST_CASE("objects: required and optional properties, in the schema's order") {
  const auto g = compile(kPerson);
  CHECK(accepts(g, R"({"name": "Al", "age": 42})"));
  CHECK(accepts(g, R"({"name":"Al","age":0,"email":null,"tags":["a",3,null],"kind":"person"})"));
  CHECK(accepts(g, "{\n  \"name\": \"Al\",\n  \"age\": 130,\n  \"email\": \"x@y.org\"\n}"));
  CHECK_FALSE(accepts(g, R"({"name": "Al"})"));                       // age is required
  CHECK_FALSE(accepts(g, R"({"age": 3, "name": "Al"})"));             // another order
  CHECK_FALSE(accepts(g, R"({"name": "", "age": 3})"));               // minLength
  CHECK_FALSE(accepts(g, R"({"name": "123456789", "age": 3})"));      // maxLength
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 131})"));           // maximum
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": -1})"));            // minimum
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 3, "x": 1})"));     // no other properties
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 3, "email": "x@y.net"})"));
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 3, "tags": []})"));
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 3, "tags": ["a","a","a","a"]})"));
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 3, "tags": ["c"]})"));
  CHECK_FALSE(accepts(g, R"({"name": "Al", "age": 3, "kind": "cat"})"));
  check_random_documents(kPerson);
}

TEST_CASE("many optional properties make a grammar linear in their number") {
  std::string schema = R"({"type": "object", "properties": {)";
  for (int i = 0; i < 200; ++i) schema += (i ? ", " : "") + std::string("\"p") + std::to_string(i) + "\": {\"type\": \"integer\"}";
  schema += R"(}, "required": ["p150"]})";
  const auto g = compile(schema);
  CHECK(accepts(g, R"({"p3": 1, "p150": 2, "p199": 3})"));
  CHECK(accepts(g, R"({"p150": 2})"));
  CHECK_FALSE(accepts(g, R"({"p3": 1})"));
  CHECK_FALSE(accepts(g, R"({"p150": 2, "p3": 1})"));
  CHECK_FALSE(accepts(g, R"({, "p150": 2})"));
}

TEST_CASE("additional properties: a schema, or anything, under other names only") {
  const std::string schema = R"({"type": "object", "properties": {"id": {"type": "integer"}, "idx": {"type": "boolean"}},
    "additionalProperties": {"type": "string"}})";
  const auto g = compile(schema);
  CHECK(accepts(g, R"({"id": 1, "i": "x", "idy": "y", "": "z", "idxx": "w"})"));
  CHECK(accepts(g, R"({"extra": "x"})"));
  CHECK_FALSE(accepts(g, R"({"id": 1, "id": "x"})"));     // a declared name is not another property
  CHECK_FALSE(accepts(g, R"({"id": 1, "idx": "x"})"));
  CHECK_FALSE(accepts(g, R"({"extra": 1})"));
  check_random_documents(schema);
  const auto any = compile(R"({"type": "object", "properties": {"a": {"type": "null"}}, "additionalProperties": true})");
  CHECK(accepts(any, R"({"a": null, "b": [1, {"c": "d"}]})"));
}

TEST_CASE("integer bounds are exact") {
  for (const auto& bounds : std::vector<std::pair<int, int>>{{0, 130}, {-57, 1234}, {-1000, -10}, {7, 7}, {95, 105}}) {
    const int lo = bounds.first;  // not a structured binding: clang 14's INFO cannot capture one
    const int hi = bounds.second;
    const auto g = compile(R"({"type": "integer", "minimum": )" + std::to_string(lo) + R"(, "maximum": )" +
                           std::to_string(hi) + "}");
    for (int n = -1500; n <= 1500; ++n) {
      INFO(lo, " ", hi, " ", n);
      CHECK(accepts(g, std::to_string(n)) == (n >= lo && n <= hi));
    }
    CHECK_FALSE(accepts(g, "007"));
    CHECK_FALSE(accepts(g, "-0"));
  }
  const auto open_above = compile(R"({"type": "integer", "exclusiveMinimum": 99})");
  CHECK_FALSE(accepts(open_above, "99"));
  CHECK(accepts(open_above, "100"));
  CHECK(accepts(open_above, "123456789012"));
  CHECK_FALSE(accepts(open_above, "-5"));
  const auto below = compile(R"({"type": "integer", "exclusiveMaximum": -3})");
  CHECK(accepts(below, "-4"));
  CHECK(accepts(below, "-99999999"));
  CHECK_FALSE(accepts(below, "-3"));
  CHECK_FALSE(accepts(below, "0"));
}

TEST_CASE("number bounds: integer-valued ones exactly, the sign always") {
  const auto g = compile(R"({"type": "number", "minimum": -2, "maximum": 3})");
  for (const char* yes : {"0", "-0", "3", "3.0", "3.000", "-2", "-2.00", "-1.99", "2.999", "0.5", "-0.5"}) {
    INFO(yes);
    CHECK(accepts(g, yes));
  }
  for (const char* no : {"3.001", "4", "-2.01", "-3", "1e2", "10"}) {
    INFO(no);
    CHECK_FALSE(accepts(g, no));
  }
  const auto positive = compile(R"({"type": "number", "minimum": 0})");
  CHECK(accepts(positive, "12.5"));
  CHECK_FALSE(accepts(positive, "-0.1"));
  const auto any = compile(R"({"type": "number"})");
  CHECK(accepts(any, "-1.5e-7"));
  CHECK_FALSE(accepts(any, "01"));
  CHECK_FALSE(accepts(any, "1."));
}

TEST_CASE("strings: escapes, patterns and formats") {
  const auto plain = compile(R"({"type": "string"})");
  CHECK(accepts(plain, R"("a\"b\\c\n\u00e9\uD7FF")"));
  CHECK_FALSE(accepts(plain, R"("\uD800")"));  // a lone surrogate
  CHECK_FALSE(accepts(plain, "\"a\nb\""));     // a raw control character
  CHECK_FALSE(accepts(plain, R"("\q")"));

  const auto quoted = compile(R"({"type": "string", "pattern": "^\"[^\"]*\"$"})");
  CHECK(accepts(quoted, R"("\"hi\"")"));
  CHECK_FALSE(accepts(quoted, R"("\"h\"i\"")"));
  const auto anywhere = compile(R"({"type": "string", "pattern": "ab+c"})");
  CHECK(accepts(anywhere, R"("xxabbbcyy")"));
  CHECK_FALSE(accepts(anywhere, R"("xxacyy")"));
  const auto classes = compile(R"({"type": "string", "pattern": "^(?:\\d{2,3}|[A-F]x?)(-\\w+)*\\.?$"})");
  CHECK(accepts(classes, R"("123-ab_c-d.")"));
  CHECK(accepts(classes, R"("Fx")"));
  CHECK_FALSE(accepts(classes, R"("1")"));
  CHECK_FALSE(accepts(classes, R"("Gx")"));

  const auto date = compile(R"({"type": "string", "format": "date"})");
  CHECK(accepts(date, R"("2024-01-31")"));
  CHECK(accepts(date, R"("2024-04-30")"));
  CHECK_FALSE(accepts(date, R"("2024-04-31")"));
  CHECK_FALSE(accepts(date, R"("2024-13-01")"));
  const auto date_time = compile(R"({"type": "string", "format": "date-time"})");
  CHECK(accepts(date_time, R"("2024-01-31T23:59:59.5+05:30")"));
  CHECK(accepts(date_time, R"("2024-01-31T00:00:00Z")"));
  CHECK_FALSE(accepts(date_time, R"("2024-01-31T24:00:00Z")"));
  const auto uuid = compile(R"({"type": "string", "format": "uuid"})");
  CHECK(accepts(uuid, R"("123e4567-e89b-12d3-a456-426614174000")"));
  CHECK_FALSE(accepts(uuid, R"("123e4567-e89b-12d3-a456-42661417400")"));
  for (const char* format : {"date", "time", "date-time", "uuid"})
    check_random_documents(std::string(R"({"type": "string", "format": ")") + format + "\"}", 10);
  check_random_documents(R"({"type": "string", "pattern": "^(?:\\d{2,3}|[A-F]x?)(-\\w+)*\\.?$"})", 20);
  check_random_documents(R"({"type": "string", "pattern": "a[^b\"]c|\\s\\S.$"})", 20);
}

TEST_CASE("anyOf, $ref and recursion, nullable, json_object") {
  const std::string tree = R"({
    "$defs": {"node": {"type": "object", "properties": {
      "value": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string", "maxLength": 2}]},
      "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
      "required": ["value"]}},
    "$ref": "#/$defs/node"})";
  const auto g = compile(tree);
  CHECK(accepts(g, R"({"value": 1, "children": [{"value": "ab"}, {"value": 2, "children": []}]})"));
  CHECK_FALSE(accepts(g, R"({"value": 0})"));
  CHECK_FALSE(accepts(g, R"({"value": "abc"})"));
  CHECK_FALSE(accepts(g, R"({"value": 1, "children": [{}]})"));
  check_random_documents(tree);

  const auto nullable = compile(R"({"type": "integer", "nullable": true, "maximum": 5})");
  CHECK(accepts(nullable, "null"));
  CHECK(accepts(nullable, "5"));
  CHECK_FALSE(accepts(nullable, "6"));

  const auto object = kiln::grammar::parse_gbnf(kiln::grammar::json_object_gbnf());
  CHECK(accepts(object, R"({"a": [1, 2.5e3, true, null, {"b": "c"}]})"));
  CHECK(accepts(object, "{}"));
  CHECK_FALSE(accepts(object, "[]"));
  CHECK_FALSE(accepts(object, R"({"a": 1,})"));
  const auto anything = compile("{}");
  CHECK(accepts(anything, R"(["x", 1, {"y": false}])"));
}

TEST_CASE("what cannot be enforced is refused by name") {
  CHECK(conversion_error(R"({"type": "object", "properties": {"a": {"type": "string", "contentEncoding": "base64"}}})") ==
        "JSON schema at /properties/a: unsupported keyword 'contentEncoding'");
  CHECK(conversion_error(R"({"type": "array", "uniqueItems": true})") == "JSON schema at /: unsupported keyword 'uniqueItems'");
  CHECK(conversion_error(R"({"allOf": [{"type": "string"}]})") == "JSON schema at /: unsupported keyword 'allOf'");
  CHECK(conversion_error(R"({"type": "string", "format": "email"})") == "JSON schema at /: format 'email'");
  CHECK(conversion_error(R"({"type": "string", "pattern": "(a)\\1"})") ==
        "JSON schema at /: pattern '(a)\\1': the escape \\1 is not supported");
  CHECK(conversion_error(R"j({"type": "string", "pattern": "a(?=b)"})j") ==
        "JSON schema at /: pattern 'a(?=b)': lookaround (?=...) is not supported");
  CHECK(conversion_error(R"({"type": "number", "minimum": 0.5})") ==
        "JSON schema at /: 'minimum' 0.5 on a number (only integer bounds are enforced)");
  CHECK(conversion_error(R"({"type": "number", "exclusiveMaximum": 1})") ==
        "JSON schema at /: 'exclusiveMaximum' on a number cannot be enforced");
  CHECK(conversion_error(R"({"type": "integer", "minimum": 5, "maximum": 4})") == "JSON schema at /: no integer is within the bounds");
  CHECK(conversion_error(R"({"$ref": "#/$defs/missing"})") == "JSON schema at /: '$ref' #/$defs/missing points at nothing");
  CHECK(conversion_error(R"({"$ref": "#"})") ==
        "grammar: rule 'ref' is left-recursive (it can reach itself before reading a character)");
  CHECK(conversion_error(R"({"type": "object", "required": ["a"]})") ==
        "JSON schema at /: required property 'a' is not in 'properties'");
  CHECK(conversion_error("{\"type\": ").rfind("JSON schema: not JSON", 0) == 0);
  CHECK(conversion_error(R"({"type": "integer", "nullable": "yes"})").rfind("JSON schema: a keyword's value has the wrong type", 0) == 0);
  // Annotations are ignored.
  CHECK(conversion_error(R"({"title": "t", "description": "d", "examples": [1], "$schema": "x", "type": "integer"})") == "");
  std::string deep = "{}";
  for (int i = 0; i < 100; ++i) deep = R"({"type": "array", "items": )" + deep + "}";
  CHECK(conversion_error(deep) == "JSON schema at /items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items/items: nested deeper than 64");
}
