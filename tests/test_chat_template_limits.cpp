// The chat-template renderer against hostile templates (a GGUF's, or
// --chat-template-file): each of these fails with one line naming the limit
// it hit, instead of overflowing the stack, exhausting memory or hanging;
// and templates as deep or as large as the limits allow still render.
// tests/fuzz/chat_template_seeds/ holds the same cases for the fuzzer.
#include <doctest/doctest.h>

#include <string>

#include "engine/chat/chat_template.hpp"
#include "engine/error/error.hpp"

using namespace kiln::chat;

namespace {

std::string render(const std::string& source) {
  ChatInputs in;
  in.messages = Value(Array{});
  return ChatTemplate(source, "t").render(in).str();
}

// The error message of rendering (or parsing) `source`.
std::string error_of(const std::string& source) {
  try {
    render(source);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("repetition past the size limits is refused before anything is built") {
  CHECK(error_of(R"({{ "x" * 60000000 * 1000000 }})") == "t:1:8: text longer than 16 MiB (the renderer's limit)");
  CHECK(error_of(R"({{ "x" * (60000000 * 1000000) }})") == "t:1:8: text longer than 16 MiB (the renderer's limit)");
  CHECK(error_of("{{ [1, 2] * 600000 }}") == "t:1:11: list longer than 1048576 items (the renderer's limit)");
  CHECK(error_of("{% set ns = namespace(l=[0] * 1000000) %}{% set ns.l = ns.l + ns.l %}") ==
        "t:1:61: list longer than 1048576 items (the renderer's limit)");
  CHECK(contains(error_of("{{ ('x' * 2000000) | list | length }}"), "list longer than 1048576 items"));
  CHECK(contains(error_of("{{ ('x ' * 1100000).split() | length }}"), "list longer than 1048576 items"));
}

TEST_CASE("copies of a string share its bytes; what expressions build is bounded in all") {
  // 100,000 copies of a 10 MB string: a list of 100,000 values, not a terabyte.
  CHECK(render(R"({% set s = "x" * 10000000 %}{{ ([s] * 100000) | length }})") == "100000");
  // 300 strings of 1 MB, each dropped after it is built: 300 MB built in all.
  CHECK(error_of(R"({% set s = "x" * 1000000 %}{% for i in range(300) %}{% set t = s ~ i %}{% endfor %})") ==
        "t:1:66: the template built more than 256 MiB of strings and lists (the renderer's limit)");
}

TEST_CASE("loop iterations count against the step budget, empty bodies too") {
  CHECK(error_of("{% for x in range(3000) %}{% for y in range(10000) %}{% endfor %}{% endfor %}") ==
        "t:1:30: the template did not finish within 1000000 steps (the renderer's limit)");
  CHECK(error_of("{% set r = range(10000) %}{% for x in r %}{% for y in r %}{% endfor %}{% endfor %}") ==
        "t:1:46: the template did not finish within 1000000 steps (the renderer's limit)");
}

TEST_CASE("values nest at most 1000 levels; a namespace holds no namespace, so nothing contains itself") {
  // One level per iteration, kept in a namespace: refused at the limit
  // instead of a million levels that printing or freeing would recurse into.
  CHECK(error_of("{% set ns = namespace(x=none) %}{% for i in range(1000000) %}{% set ns.x = [ns.x] %}{% endfor %}"
                 "{{ ns.x }}") == "t:1:76: a value nested deeper than 1000 levels (the renderer's limit)");
  CHECK(error_of(repeated("{% set x = [x] %}", 1200)) == "t:1:17012: a value nested deeper than 1000 levels (the renderer's limit)");

  const std::string refused = "a namespace cannot hold a namespace, itself or another";
  CHECK(contains(error_of("{% set ns = namespace(a=1) %}{% set ns.me = ns %}{{ [ns] }}"), refused));
  CHECK(contains(error_of("{% set ns = namespace(a=[]) %}{% set ns.a = ns.a + [ns] %}{{ ns.a }}"), refused));
  CHECK(contains(error_of("{% set ns = namespace() %}{% set other = namespace(inner={'x': [ns]}) %}"), refused));
  // Lists cannot change, so no list can be appended to itself.
  CHECK(error_of("{% set l = [1] %}{% set _ = l.append(l) %}") == "t:1:37: 'append' is undefined");

  // What real templates do with namespaces still works: lists and dicts in them.
  CHECK(render("{% set ns = namespace(items=[], last={}) %}{% for i in range(3) %}{% set ns.items = ns.items + "
               "[{'i': [i]}] %}{% set ns.last = {'i': i} %}{% endfor %}{{ ns.items }} {{ ns.last }}") ==
        "[{'i': [0]}, {'i': [1]}, {'i': [2]}] {'i': 2}");
  // As deep as the limit allows renders (and is freed) without trouble.
  CHECK(render("{% set ns = namespace(x=0) %}{% for i in range(999) %}{% set ns.x = [ns.x] %}{% endfor %}"
               "{{ (ns.x | string) | length }}") == "1999");
}

TEST_CASE("nesting: a million-level list literal, statements, expressions and macro calls") {
  CHECK(error_of("{{ " + std::string(1000000, '[') + std::string(1000000, ']') + " }}") ==
        "t: the template is 2000006 bytes, longer than 1 MiB (the renderer's limit)");
  CHECK(contains(error_of("{{ " + std::string(300000, '[') + std::string(300000, ']') + " }}"),
                 "t:1:2005: tag longer than 2000 tokens"));
  // On one line: lexing takes time in proportion to the line, not its square.
  CHECK(error_of(repeated("{% if true %}", 80000)) == "t:1:2568: nested deeper than 200 levels");
  // A chain of 999 additions is evaluated 999 calls deep, left operands first.
  CHECK(error_of("{{ 1" + repeated(" + 1", 999) + " }}") ==
        "t:1:2002: statements, expressions and macro calls nested deeper than 500 levels (the renderer's limit)");
  CHECK(render("{{ 1" + repeated(" + 1", 450) + " }}") == "451");
  CHECK(contains(error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
                 "macro calls nested deeper than 100"));
  CHECK(render("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}.{% endmacro %}{{ f(99) | length }}") == "100");
}
