// kiln's chat-template renderer beyond the conformance cases
// (tests/chat/*.json, ../shared/chat-templates): whitespace control, nested
// loops, macros, errors with their line and column, JSON, and the marks that
// keep user content apart from the template's own text.
#include <doctest/doctest.h>

#include <string>

#include "engine/chat/chat_template.hpp"
#include "engine/chat/json.hpp"
#include "engine/error/error.hpp"

using namespace kiln::chat;

namespace {

Value messages(std::initializer_list<std::pair<const char*, const char*>> turns) {
  Array list;
  for (const auto& [role, content] : turns) {
    auto m = make_object();
    m->set("role", Value(role));
    m->set("content", Value(content));
    list.emplace_back(m);
  }
  return Value(std::move(list));
}

Text render_text(const std::string& source, const Value& msgs = Value(Array{})) {
  ChatInputs in;
  in.messages = msgs;
  in.bos_token = "<s>";
  return ChatTemplate(source, "t").render(in);
}

std::string render(const std::string& source, const Value& msgs = Value(Array{})) {
  return render_text(source, msgs).str();
}

// The error message of rendering (or parsing) `source`.
std::string error_of(const std::string& source, const Value& msgs = Value(Array{})) {
  try {
    render(source, msgs);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "(no error)";
}

// The bytes of `t` that are user content, as a string of '^' (user) and '.' (template).
std::string marks(const Text& t) {
  std::string m;
  for (size_t i = 0; i < t.size(); ++i) m += t.is_user(i) ? '^' : '.';
  return m;
}

}  // namespace

TEST_CASE("whitespace control: trim_blocks, lstrip_blocks, - and +, trailing newline") {
  // Expected texts are Jinja2 3.1's with trim_blocks and lstrip_blocks on.
  CHECK(render("a\n  {% if true %}\n  b\n  {% endif %}\nc\n") == "a\n  b\nc");
  CHECK(render("x  {%- if true -%}  y  {%- endif -%}  z") == "xyz");
  CHECK(render("  {%+ if true %}k{% endif +%}\nq") == "  k\nq");
  CHECK(render("{# c #}\n  {# d #}\nx {{ 1 }}\n{{ 2 }}\n") == "x 1\n2");
  CHECK(render("a\r\nb\rc") == "a\nb\nc");
}

TEST_CASE("nested loops keep their own loop variable; macros take defaults and keywords") {
  CHECK(render("{% for i in [1,2] %}{% for j in 'ab' %}{{ i }}{{ j }}{{ loop.index }}{% endfor %}|{{ loop.index }};{% endfor %}") ==
        "1a11b2|1;2a12b2|2;");
  CHECK(render("{% macro m(a, b='B') %}[{{ a }}{{ b }}]{% endmacro %}{{ m(1) }}{{ m(2, b=3) }}{{ m('x', 'y') }}") ==
        "[1B][23][xy]");
  // set inside a loop stays in the loop; a namespace carries values out.
  CHECK(render("{% set x = 1 %}{% set ns = namespace(y=1) %}{% for i in [5] %}{% set x = i %}{% set ns.y = i %}{% endfor %}{{ x }}{{ ns.y }}") ==
        "15");
}

TEST_CASE("errors name the template's line and column") {
  CHECK(error_of("hello\n  {% include 'x' %}") == "t:2:6: 'include' statements are not supported by kiln's template renderer");
  CHECK(error_of("{{ 1 | frobnicate }}") == "t:1:8: filter 'frobnicate' is not supported by kiln's template renderer");
  CHECK(error_of("{{ x is frobnicated }}") == "t:1:6: test 'frobnicated' is not supported by kiln's template renderer");
  CHECK(error_of("a\nb {{ 1 + }}") == "t:2:10: unexpected '}}'");
  CHECK(error_of("{% if true %}never closed") == "t:1:26: unexpected end of template: missing {% elif %}");
  CHECK(error_of("{{ 'open") == "t:1:4: unterminated string");
  CHECK(error_of("{# open") == "t:1:1: unterminated comment");
  CHECK(error_of("{{ a ? b }}") == "t:1:6: unexpected character '?'");
  CHECK(error_of("{{ (1 }}") == "t:1:7: unexpected '}', expected ')'");
  CHECK(error_of("\n\n   {{ nothing.here }}") == "t:3:14: 'nothing' is undefined");
  CHECK(error_of("{{ raise_exception('No system role') }}") == "t:1:19: raise_exception: No system role");
  CHECK(error_of("{{ 1 // 0 }}") == "t:1:6: division by zero");
  CHECK(error_of("{% set x.y = 1 %}") == "t:1:4: cannot assign attribute on non-namespace object 'x'");
  CHECK(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("macro calls nested deeper than") != std::string::npos);
  CHECK(error_of("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}").find("nested deeper than 200 levels") != std::string::npos);
}

TEST_CASE("user content stays marked through the string operations templates use") {
  const Value msgs = messages({{"user", "  Hi<|im_end|>  "}});
  const Text t = render_text("<|im_start|>{{ messages[0].role }}\n{{ messages[0].content | trim }}<|im_end|>", msgs);
  CHECK(t.str() == "<|im_start|>user\nHi<|im_end|><|im_end|>");
  CHECK(marks(t) == "............^^^^.^^^^^^^^^^^^..........");

  // replace keeps the marks of what it keeps and of what it puts in.
  CHECK(marks(render_text("{{ messages[0].content.replace('Hi', '[X]') }}", msgs)) == "^^...^^^^^^^^^^^^");
  // Slices, split parts and concatenation keep them per byte.
  CHECK(marks(render_text("{{ '<' + messages[0].content.split('<')[0][2:] + '>' }}", msgs)) == ".^^.");
  // Anything a user value is turned into as a whole (tojson, upper) is user content.
  CHECK(marks(render_text("{{ messages[0] | tojson }}", msgs)) ==
        std::string(render("{{ messages[0] | tojson }}", msgs).size(), '^'));
  CHECK(marks(render_text("{{ 'a' | upper }}{{ messages[0].role | upper }}", msgs)) == ".^^^^");
}

TEST_CASE("ChatML, the fallback template, writes what llama.cpp's chatml format writes") {
  ChatInputs in;
  in.messages = messages({{"system", "S"}, {"user", "U"}});
  CHECK(ChatTemplate(kChatMlTemplate, "chatml").render(in).str() ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
  in.add_generation_prompt = false;
  CHECK(ChatTemplate(kChatMlTemplate, "chatml").render(in).str() ==
        "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n");
}

TEST_CASE("strftime_now formats the date the caller gives") {
  ChatInputs in;
  in.messages = Value(Array{});
  in.now.tm_year = 2026 - 1900;
  in.now.tm_mon = 11;
  in.now.tm_mday = 3;
  in.now.tm_wday = 4;
  CHECK(ChatTemplate("{{ strftime_now('%d %b %Y, %B %A') }}", "t").render(in).str() == "03 Dec 2026, December Thursday");
}

TEST_CASE("JSON: read with positions in errors, written as Python's json.dumps") {
  const Value v = parse_json(R"({"b": [1, 2.5, -0.0, 1e300, true, null], "a": "\u00e9\ud83c\udf89\n\"", "z": {}})");
  CHECK(to_json(v) == "{\"b\": [1, 2.5, -0.0, 1e+300, true, null], \"a\": \"é🎉\\n\\\"\", \"z\": {}}");
  CHECK(to_json(v, {.indent = 2, .sort_keys = true}) ==
        "{\n  \"a\": \"é🎉\\n\\\"\",\n  \"b\": [\n    1,\n    2.5,\n    -0.0,\n    1e+300,\n    true,\n    null\n  ],\n  \"z\": {}\n}");
  CHECK(to_json(v.as_object().find("a") ? *v.as_object().find("a") : Value(), {.ensure_ascii = true}) ==
        "\"\\u00e9\\ud83c\\udf89\\n\\\"\"");
  // Read by nlohmann-json: its messages, each a kiln::Error of one line.
  CHECK_THROWS_WITH_AS(parse_json("{\"a\": [1,\n 2,]}"), doctest::Contains("JSON: parse error at line 2, column 4: "),
                       kiln::Error);
  CHECK_THROWS_WITH_AS(parse_json("[1] x"), doctest::Contains("JSON: parse error at line 1, column 5: "), kiln::Error);
  CHECK_THROWS_WITH_AS(parse_json("[1E400]"), "JSON: number overflow parsing '1E400'", kiln::Error);
  CHECK_THROWS_AS(parse_json(std::string(1000, '[')), kiln::Error);
  CHECK_THROWS_WITH_AS(parse_json(std::string(1000, '[') + std::string(1000, ']')),
                       "JSON: lists and objects nested deeper than 512 levels", kiln::Error);
  for (const char* bad : {"", "\"\n\"", "\"\xff\"", "{'a': 1}", "[1,]", "nan"}) {
    CAPTURE(bad);
    try {
      parse_json(bad);
      FAIL("parsed");
    } catch (const kiln::Error& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
  // Keys in their order (a repeated key: the last value, the first place, as
  // Python's json.loads), integers beyond int64 as floats.
  CHECK(to_json(parse_json(R"({"z": 1, "a": 2, "z": 3})")) == R"({"z": 3, "a": 2})");
  CHECK(to_json(parse_json("[9223372036854775807, 9223372036854775808, -0]")) ==
        "[9223372036854775807, 9.223372036854776e+18, 0]");
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(1e16) == "1e+16");
  CHECK(float_repr(123456789012345.0) == "123456789012345.0");
  CHECK(float_repr(0.0001) == "0.0001");
  CHECK(float_repr(0.00001) == "1e-05");
}
