// Tool calls through the server on stories260K, whose GGUF has no chat
// template (ChatML: the generic JSON format), and with small templates in
// each other format: at temperature 1 over several
// seeds, tool_choice "required" and a named function always give valid calls
// whose arguments satisfy the function's schema, a stream's tool-call deltas
// add up to the same calls as the whole answer, a conversation with a call
// and its result renders, and malformed tools are a one-line 400.
#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/json_schema_check.hpp"
#include "tests/support/server_process.hpp"
#include "tests/support/temp_folder.hpp"

using nlohmann::json;
using kiln::test::post;
using kiln::test::Reply;

namespace {

// Small, as stories260K's context is 512 tokens and the generic format
// writes the schemas into the prompt.
const char* kWeather = R"({"type": "object", "properties": {"city": {"type": "string", "maxLength": 8},
  "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city", "days"]})";

const char* kClock = R"({"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"]})";

// Small templates in the formats of Hermes/Qwen2.5 and of Qwen3-Coder (the
// real ones' system prompts would not leave room in stories260K's context).
const char* kHermesTemplate =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% for c in m.tool_calls or [] %}"
    "<tool_call>\n{{ c.function | tojson }}\n</tool_call>{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if tools %}<|im_start|>system\n{{ tools | map(attribute='function') | map(attribute='name') | join(', ') }}<|im_end|>\n{% endif %}"
    "<|im_start|>assistant\n";
const char* kXmlTemplate =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}{% for c in m.tool_calls or [] %}"
    "<tool_call>\n<function={{ c.function.name }}>\n{% for k, v in c.function.arguments | items %}"
    "<parameter={{ k }}>\n{{ v }}\n</parameter>\n{% endfor %}</function>\n</tool_call>{% endfor %}<|im_end|>\n{% endfor %}"
    "<|im_start|>assistant\n";
// ChatML that names another format's marker (in a comment: the server tells
// a format from the template's text), for the formats whose real templates'
// prompts would not fit either.
std::string chatml_naming(const std::string& marker) {
  return "{# " + marker + " #}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
         "<|im_start|>assistant\n";
}

json tool(const char* name, const char* schema) {
  return {{"type", "function"}, {"function", {{"name", name}, {"parameters", json::parse(schema)}}}};
}

// One call per reply unless the test asks for more: the model, free to go
// on, could write calls until the context is full.
json request(int seed, const json& tool_choice, bool both_tools = true) {
  json tools = json::array({tool("get_weather", kWeather)});
  if (both_tools) tools.push_back(tool("get_time", kClock));
  return {{"messages", {{{"role", "user"}, {"content", "Weather?"}}}},
          {"tools", tools},
          {"tool_choice", tool_choice},
          {"parallel_tool_calls", false},
          {"temperature", 1.0},
          {"seed", seed},
          {"max_tokens", 200}};
}

// Each call is well formed and its arguments satisfy its function's schema;
// returns them as [name, arguments] pairs.
std::vector<std::pair<std::string, json>> checked_calls(const json& calls, const std::string& only = "") {
  std::vector<std::pair<std::string, json>> out;
  REQUIRE(calls.is_array());
  REQUIRE(!calls.empty());
  for (const json& c : calls) {
    CHECK(c["type"] == "function");
    CHECK(c["id"].get<std::string>().size() == 9);
    const std::string name = c["function"]["name"];
    if (!only.empty()) CHECK(name == only);
    REQUIRE((name == "get_weather" || name == "get_time"));
    const auto args = nlohmann::ordered_json::parse(c["function"]["arguments"].get<std::string>());
    CHECK(kiln::test::satisfies(nlohmann::ordered_json::parse(name == "get_weather" ? kWeather : kClock), args));
    out.emplace_back(name, json(args));
  }
  return out;
}

// The tool calls a stream's deltas add up to for choice `index`, as the whole answer has them.
json streamed_calls(const std::vector<json>& events, std::string& finish_reason, int index = 0) {
  json calls = json::array();
  for (const json& e : events) {
    const json& choice = e["choices"][0];
    if (choice["index"] != index) continue;
    if (!choice["finish_reason"].is_null()) finish_reason = choice["finish_reason"];
    if (!choice.contains("delta") || !choice["delta"].contains("tool_calls")) continue;
    for (const json& d : choice["delta"]["tool_calls"]) {
      const size_t i = d["index"];
      if (i == calls.size()) calls.push_back({{"id", d["id"]}, {"type", d["type"]}, {"function", {{"name", d["function"]["name"]}, {"arguments", ""}}}});
      REQUIRE(i < calls.size());
      calls[i]["function"]["arguments"] = calls[i]["function"]["arguments"].get<std::string>() + d["function"]["arguments"].get<std::string>();
    }
  }
  return calls;
}

// tool_choice required and named over several seeds: valid calls, the same
// streamed. `both_tools`: offer two (else only get_weather, so that the
// generic format's prompt, which holds the schemas, fits the context).
// `several`: the format writes more than one call per reply.
void check_forced_calls(const kiln::test::ServerProcess& server, bool both_tools, bool several) {
  const std::string named_function = both_tools ? "get_time" : "get_weather";
  const json named = {{"type", "function"}, {"function", {{"name", named_function}}}};
  for (int seed = 1; seed <= 6; ++seed) {
    const bool by_name = seed % 2 == 0;
    json body = request(seed, by_name ? named : json("required"), both_tools);
    const Reply r = post(server, "/v1/chat/completions", body.dump());
    INFO("seed ", seed, ": ", r.body.dump());
    REQUIRE(r.status == 200);
    const json& choice = r.body["choices"][0];
    CHECK(choice["finish_reason"] == "tool_calls");
    const auto calls = checked_calls(choice["message"]["tool_calls"], by_name ? named_function : "");
    CHECK(calls.size() == 1);
    std::string finish;
    const json streamed = streamed_calls(kiln::test::stream_events(server, "/v1/chat/completions", body), finish);
    CHECK(finish == "tool_calls");
    CHECK(checked_calls(streamed) == calls);
  }
  // With parallel_tool_calls a reply may hold several calls, and
  // stories260K goes on writing them until max_tokens cuts it ("length").
  // The calls it completed are returned (in the tagged formats; the
  // generic format's one JSON object is cut, so it has none) and are valid.
  size_t most_calls = 0;
  for (int seed = 1; seed <= 4; ++seed) {
    json body = request(seed, "required", both_tools);
    body["parallel_tool_calls"] = true;
    const Reply r = post(server, "/v1/chat/completions", body.dump());
    INFO("parallel, seed ", seed, ": ", r.body.dump());
    REQUIRE(r.status == 200);
    const json& choice = r.body["choices"][0];
    CHECK((choice["finish_reason"] == "tool_calls" || choice["finish_reason"] == "length"));
    if (choice["message"].contains("tool_calls"))
      most_calls = std::max(most_calls, checked_calls(choice["message"]["tool_calls"]).size());
  }
  if (both_tools && several) CHECK(most_calls >= 2);
}

}  // namespace

TEST_CASE("generic format (ChatML): forced calls are valid, streamed alike; auto answers JSON; a round trip renders") {
  kiln::test::ServerProcess server(SERVER_BIN, {});
  CHECK(kiln::test::get(server, "/props").body["tool_call_format"] == "generic");
  check_forced_calls(server, false, true);
  for (int seed = 1; seed <= 3; ++seed) {
    const Reply r = post(server, "/v1/chat/completions", request(seed, "auto", false).dump());
    REQUIRE(r.status == 200);
    const json& choice = r.body["choices"][0];
    INFO(r.body.dump());
    if (choice["finish_reason"] == "tool_calls") checked_calls(choice["message"]["tool_calls"]);
    else CHECK(choice["message"]["content"].is_string());
  }
  // An earlier call (arguments as a JSON string, as OpenAI clients send them) and its result.
  json body = request(1, "auto", false);
  body["messages"].push_back({{"role", "assistant"}, {"content", nullptr},
                              {"tool_calls", {{{"id", "abc123XYZ"}, {"type", "function"},
                                               {"function", {{"name", "get_weather"}, {"arguments", R"({"city": "Paris", "days": 1})"}}}}}}});
  body["messages"].push_back({{"role", "tool"}, {"tool_call_id", "abc123XYZ"}, {"content", R"({"sky": "clear"})"}});
  CHECK(post(server, "/v1/chat/completions", body.dump()).status == 200);
  // n choices: each its own calls, streamed under its index.
  json two = request(3, "required", false);
  two["n"] = 2;
  const Reply both = post(server, "/v1/chat/completions", two.dump());
  REQUIRE(both.status == 200);
  REQUIRE(both.body["choices"].size() == 2);
  const std::vector<json> events = kiln::test::stream_events(server, "/v1/chat/completions", two);
  for (int i = 0; i < 2; ++i) {
    const json& choice = both.body["choices"][i];
    CHECK(choice["finish_reason"] == "tool_calls");
    std::string finish;
    CHECK(checked_calls(streamed_calls(events, finish, i)) == checked_calls(choice["message"]["tool_calls"]));
    CHECK(finish == "tool_calls");
  }
  // tool_choice none: a plain reply.
  const Reply none = post(server, "/v1/chat/completions", request(1, "none").dump());
  REQUIRE(none.status == 200);
  CHECK_FALSE(none.body["choices"][0]["message"].contains("tool_calls"));
}

TEST_CASE("each model family's format: forced calls are valid and streamed alike") {
  const kiln::test::TempFolder dir("server-tools");
  struct Family {
    std::string format, source;
    bool several;  // calls per reply
  };
  const std::vector<Family> families = {
      {"hermes", kHermesTemplate, true},
      {"qwen-xml", kXmlTemplate, true},
      {"mistral", chatml_naming("[TOOL_CALLS]"), true},
      {"llama-3.1", chatml_naming("<|python_tag|>"), false},
      {"harmony", chatml_naming("<|channel|>"), false},
      {"gemma4", chatml_naming("<|tool_call>"), true},
  };
  for (const Family& family : families) {
    const std::string file = dir.file(family.format + ".jinja");
    std::ofstream(file) << family.source;
    kiln::test::ServerProcess server(SERVER_BIN, {"--chat-template-file", file});
    INFO(family.format);
    CHECK(kiln::test::get(server, "/props").body["tool_call_format"] == family.format);
    check_forced_calls(server, true, family.several);
    if (family.source.starts_with("{#")) continue;  // the round trip needs a template that writes calls
    json body = request(2, "auto");
    body["messages"].push_back({{"role", "assistant"}, {"content", ""},
                                {"tool_calls", {{{"id", "abc123XYZ"}, {"type", "function"},
                                                 {"function", {{"name", "get_time"}, {"arguments", R"({"zone": "UTC"})"}}}}}}});
    body["messages"].push_back({{"role", "tool"}, {"tool_call_id", "abc123XYZ"}, {"content", "12:00"}});
    CHECK(post(server, "/v1/chat/completions", body.dump()).status == 200);
  }
}

TEST_CASE("malformed tools are a one-line 400 naming the field") {
  kiln::test::ServerProcess server(SERVER_BIN, {});
  const auto error = [&](const json& change) {
    json body = request(1, "auto");
    body.update(change);
    const Reply r = post(server, "/v1/chat/completions", body.dump());
    CHECK(r.status == 400);
    const std::string message = r.body["error"]["message"];
    CHECK(message.find('\n') == std::string::npos);
    return message;
  };
  CHECK(error({{"tools", {{"name", "get_weather"}}}}) ==
        R"('tools' must be a list of {"type": "function", "function": {...}})");
  CHECK(error({{"tools", {{{"type", "function"}, {"function", {{"description", "no name"}}}}}}}) ==
        "'tools[0].function.name' is required");
  CHECK(error({{"tool_choice", {{"type", "function"}, {"function", {{"name", "fly"}}}}}}) ==
        "'tool_choice.function.name' names 'fly', which is not in 'tools'");
  CHECK(error({{"tool_choice", "always"}}) ==
        R"('tool_choice' must be auto, none, required or {"type": "function", "function": {"name": ...}})");
  CHECK(error({{"tools", json::array()}, {"tool_choice", "required"}}) == "'tool_choice' is 'required' but no tools are given");
  json bad_args = request(1, "auto");
  bad_args["messages"].push_back({{"role", "assistant"}, {"tool_calls", {{{"function", {{"name", "get_time"}, {"arguments", "{oops"}}}}}}});
  const Reply r = post(server, "/v1/chat/completions", bad_args.dump());
  CHECK(r.status == 400);
  CHECK(r.body["error"]["message"] == "'messages[1].tool_calls[0].function.arguments' must be a JSON object or a string holding one");
  CHECK(post(server, "/v1/chat/completions", request(1, "required").dump()).status == 200);  // still serving
}
