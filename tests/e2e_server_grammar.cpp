// Constrained decoding through the server on stories260K: at temperature 1,
// over several seeds, every reply to a request with a JSON schema (OpenAI's
// response_format, llama-server's json_schema) parses and satisfies the
// schema, json_object replies are objects, a `grammar` reply is in the
// grammar's language, and schemas or grammars that cannot be served are a
// 400 naming what is wrong.
#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <string>

#include "engine/grammar/grammar.hpp"
#include "engine/grammar/matcher.hpp"
#include "tests/support/json_schema_check.hpp"
#include "tests/support/server_process.hpp"

using nlohmann::json;
using kiln::test::post;
using kiln::test::Reply;

namespace {

struct Server : kiln::test::ServerProcess {
  Server() : ServerProcess(SERVER_BIN, {}) {}
};

const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "happy": {"type": "boolean"},
    "color": {"enum": ["red", "green", "blue"]},
    "friends": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3},
    "pet": {"type": ["string", "null"], "pattern": "^[a-z]{1,6}$"}
  },
  "required": ["name", "age", "happy", "color", "friends"],
  "additionalProperties": false
})";

std::string chat_text(const Reply& r) {
  REQUIRE(r.status == 200);
  CHECK(r.body["choices"][0]["finish_reason"] == "stop");
  return r.body["choices"][0]["message"]["content"].get<std::string>();
}

}  // namespace

TEST_CASE("json_schema replies satisfy the schema at temperature 1") {
  Server server;
  const auto schema = nlohmann::ordered_json::parse(kSchema);
  for (int seed = 1; seed <= 8; ++seed) {
    json body = {{"messages", {{{"role", "user"}, {"content", "Tell me about a girl."}}}},
                 {"temperature", 1.0},
                 {"seed", seed},
                 {"max_tokens", 450}};
    // OpenAI's form for odd seeds, llama-server's for even ones.
    if (seed % 2) body["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "girl"}, {"schema", json::parse(kSchema)}}}};
    else body["json_schema"] = json::parse(kSchema);
    const std::string text = chat_text(post(server, "/v1/chat/completions", body.dump()));
    INFO("seed ", seed, ": ", text);
    nlohmann::ordered_json value;
    REQUIRE_NOTHROW(value = nlohmann::ordered_json::parse(text));
    CHECK(kiln::test::satisfies(schema, value));
  }
  for (int seed = 1; seed <= 3; ++seed) {
    const json body = {{"prompt", "Once upon a time"}, {"temperature", 1.0}, {"seed", seed}, {"max_tokens", 450},
                       {"response_format", {{"type", "json_object"}}}};
    const Reply r = post(server, "/v1/completions", body.dump());
    REQUIRE(r.status == 200);
    const std::string text = r.body["choices"][0]["text"].get<std::string>();
    INFO("seed ", seed, ": ", text);
    if (r.body["choices"][0]["finish_reason"] == "stop") CHECK(json::parse(text).is_object());  // else cut by max_tokens
  }
}

TEST_CASE("grammar replies are in the grammar's language") {
  Server server;
  const std::string gbnf = R"(root ::= "The " animal " was " [a-z]{1,10} "." (" It " ("ran" | "slept") ".")?
animal ::= "cat" | "dog" | "bird")";
  const auto grammar = kiln::grammar::parse_gbnf(gbnf);
  for (int seed = 1; seed <= 6; ++seed) {
    const json body = {{"prompt", "Once upon a time"}, {"temperature", 1.0}, {"seed", seed}, {"max_tokens", 100},
                       {"grammar", gbnf}};
    const Reply r = post(server, "/v1/completions", body.dump());
    REQUIRE(r.status == 200);
    const std::string text = r.body["choices"][0]["text"].get<std::string>();
    INFO("seed ", seed, ": ", text);
    CHECK(r.body["choices"][0]["finish_reason"] == "stop");
    kiln::grammar::Matcher m(grammar);
    CHECK(m.accept(text));
    CHECK(m.can_end());
  }
}

TEST_CASE("what cannot be served is a 400 naming it") {
  Server server;
  const auto error = [&](const json& extra) {
    json body = {{"prompt", "Once"}, {"max_tokens", 4}};
    body.update(extra);
    const Reply r = post(server, "/v1/completions", body.dump());
    CHECK(r.status == 400);
    return r.body["error"]["message"].get<std::string>();
  };
  CHECK(error({{"json_schema", {{"type", "string"}, {"format", "email"}}}}) == "JSON schema at /: format 'email'");
  CHECK(error({{"grammar", "root ::= foo"}}) == "grammar line 1, column 10: undefined rule 'foo'");
  CHECK(error({{"response_format", {{"type", "xml"}}}}) == "'response_format.type' must be text, json_object or json_schema");
  CHECK(error({{"grammar", "root ::= \"a\""}, {"json_schema", json::object()}}) ==
        "'grammar' cannot be given with another of grammar, json_schema, response_format");
  // The server goes on serving.
  const Reply ok = post(server, "/v1/completions", R"({"prompt": "Once", "max_tokens": 2, "response_format": {"type": "text"}})");
  CHECK(ok.status == 200);
}
