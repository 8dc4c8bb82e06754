// GBNF grammars: what the parser accepts and refuses (with the line and
// column of the fault), and the languages the matcher reads.
#include <doctest/doctest.h>

#include <string>

#include "engine/error/error.hpp"
#include "engine/grammar/grammar.hpp"
#include "engine/grammar/matcher.hpp"

using kiln::grammar::Matcher;
using kiln::grammar::parse_gbnf;

namespace {

// Whether `text` is a whole sentence of the grammar.
bool matches(const std::string& grammar, const std::string& text) {
  Matcher m(parse_gbnf(grammar));
  return m.accept(text) && m.can_end();
}

std::string parse_error(const std::string& grammar) {
  try {
    parse_gbnf(grammar);
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("literals, sequences, alternatives and groups") {
  const std::string g = R"(root ::= "ab" ("c" | "de") x  # a comment
x ::= "!" | "")";
  CHECK(matches(g, "abc!"));
  CHECK(matches(g, "abde"));
  CHECK_FALSE(matches(g, "abd"));
  CHECK_FALSE(matches(g, "ab"));
  CHECK_FALSE(matches(g, "abc!!"));
  Matcher m(parse_gbnf(g));
  CHECK(m.accept("ab"));
  CHECK_FALSE(m.can_end());
  CHECK_FALSE(m.accept("x"));  // refused and not read
  CHECK(m.accept("c"));
  CHECK(m.can_end());
  CHECK_FALSE(m.is_finished());
  CHECK(m.accept("!"));
  CHECK(m.is_finished());
}

TEST_CASE("repetitions") {
  CHECK(matches(R"(root ::= "a"*)", ""));
  CHECK(matches(R"(root ::= "a"*)", "aaaa"));
  CHECK_FALSE(matches(R"(root ::= "a"+)", ""));
  CHECK(matches(R"(root ::= "ab"+)", "ababab"));
  CHECK_FALSE(matches(R"(root ::= "ab"+)", "aba"));
  CHECK(matches(R"(root ::= "a"? "b")", "b"));
  CHECK(matches(R"(root ::= "a"? "b")", "ab"));
  const std::string bounded = R"(root ::= [0-9]{2,4})";
  CHECK_FALSE(matches(bounded, "1"));
  CHECK(matches(bounded, "12"));
  CHECK(matches(bounded, "1234"));
  CHECK_FALSE(matches(bounded, "12345"));
  CHECK(matches(R"(root ::= "x"{3})", "xxx"));
  CHECK_FALSE(matches(R"(root ::= "x"{3})", "xx"));
  CHECK(matches(R"(root ::= "x"{2,} "y")", "xxxxxy"));
  CHECK_FALSE(matches(R"(root ::= "x"{2,} "y")", "xy"));
  CHECK(matches(R"(root ::= ("a" | "b"){0,3})", "bab"));
}

TEST_CASE("character classes and escapes") {
  const std::string g = R"(root ::= [a-c0-9_]+ [^a-z] . "\x41\u00e9\U0001F600\t\n\\\"" [\]\-])";
  CHECK(matches(g, "a0_Zq" "A\xC3\xA9\xF0\x9F\x98\x80\t\n\\\"" "-"));
  CHECK(matches(g, "cZ\xE2\x82\xAC" "A\xC3\xA9\xF0\x9F\x98\x80\t\n\\\"" "]"));
  CHECK_FALSE(matches(g, "dZq" "A\xC3\xA9\xF0\x9F\x98\x80\t\n\\\"" "]"));
  CHECK_FALSE(matches(g, "azq" "A\xC3\xA9\xF0\x9F\x98\x80\t\n\\\"" "]"));
  // Multi-line rules, nesting inside parentheses across lines, names with - and _.
  const std::string json_like = R"(
root   ::= object
object ::=
  "{" ws (
     pair
     ("," ws pair)*
  )? "}"
pair ::= str ":" ws str ws
str ::= "\"" [^"]* "\"" ws
ws_x ::= ""
ws ::= [ \t\n]*
)";
  CHECK(matches(json_like, R"({ "a": "b" ,  "c":"d"})"));
  CHECK(matches(json_like, "{}"));
  CHECK_FALSE(matches(json_like, R"({"a" "b"})"));
}

TEST_CASE("UTF-8 is read a byte at a time") {
  Matcher m(parse_gbnf(R"(root ::= [\u00e0-\u00ff] "z")"));
  CHECK_FALSE(Matcher(m).accept("\xC2"));  // U+0080-U+00BF: none in the class
  CHECK(m.accept("\xC3"));                 // U+00C0-U+00FF: some are
  CHECK_FALSE(Matcher(m).accept("\x9F"));  // U+00DF
  CHECK(m.accept("\xA0"));
  CHECK(m.accept("z"));
  CHECK(m.can_end());
  // Overlong forms, surrogates and stray continuation bytes are no characters.
  CHECK_FALSE(matches("root ::= .", "\xC0\x80"));
  CHECK_FALSE(matches("root ::= .", "\xE0\x80\x80"));
  CHECK_FALSE(matches("root ::= .", "\xED\xA0\x80"));
  CHECK_FALSE(matches("root ::= .", "\x80"));
  CHECK(matches("root ::= .", "\xF4\x8F\xBF\xBF"));
  CHECK_FALSE(matches("root ::= .", "\xF4\x90\x80\x80"));
}

TEST_CASE("malformed grammars are refused with one line naming where") {
  CHECK(parse_error("root ::= \"a\" foo") == "grammar line 1, column 14: undefined rule 'foo'");
  CHECK(parse_error("a ::= \"x\"") == "grammar: no 'root' rule");
  CHECK(parse_error("root ::= \"abc") == "grammar line 1, column 14: unterminated string literal");
  CHECK(parse_error("root ::= [a-") == "grammar line 1, column 13: unterminated character class");
  CHECK(parse_error("root ::= \"a\"\n  x = \"b\"") == "grammar line 2, column 5: expected '::=' after the rule name, found '='");
  CHECK(parse_error("root ::= (\"a\"") == "grammar line 1, column 14: expected ')', found the end of the grammar");
  CHECK(parse_error("root ::= \"a\"{3,1}") == "grammar line 1, column 13: a repetition {m,n} with n < m");
  CHECK(parse_error("root ::= [z-a]") == "grammar line 1, column 11: a character range whose end comes before its start");
  CHECK(parse_error("root ::= \"\\q\"") == "grammar line 1, column 11: unknown escape \\q");
  CHECK(parse_error("root ::= \"a\"\nroot ::= \"b\"") == "grammar line 2, column 1: rule 'root' is defined twice");
  CHECK(parse_error("root ::= root \"a\" | \"b\"") ==
        "grammar: rule 'root' is left-recursive (it can reach itself before reading a character)");
  CHECK(parse_error("root ::= x \"a\"\nx ::= \"\" | root") ==
        "grammar: rule 'root' is left-recursive (it can reach itself before reading a character)");
  CHECK(parse_error("root ::= <[1]>") == "grammar line 1, column 10: token references (<...>) are not supported");
  CHECK(parse_error("root ::= \xFF") == "grammar line 1, column 10: unexpected '\xFF'");
}

TEST_CASE("hostile grammars stop at the limits") {
  CHECK(parse_error("root ::= " + std::string(100, '(') + "\"a\"" + std::string(100, ')')).find("nested more than 64") !=
        std::string::npos);
  CHECK(parse_error("root ::= \"a\"{99999999999}").find("repetition count above") != std::string::npos);
  std::string wide = "root ::=";
  for (int i = 0; i < 20; ++i) wide += " \"x\"{60000}";  // repetitions expand linearly, but add up
  CHECK(parse_error(wide) == "grammar line 1, column 200: the grammar expands to more than 1048576 elements");
  // Ambiguity does not multiply the parses: equal stacks are merged.
  Matcher m(parse_gbnf(R"(root ::= ("a" | "a" | "aa")*)"));
  CHECK(m.accept(std::string(2000, 'a')));
  CHECK(m.can_end());
}

TEST_CASE("a long text's states are compacted and matching goes on") {
  // Each count of the repetition is a state of its own: more than the
  // automaton keeps, so it compacts on the way.
  Matcher m(parse_gbnf(R"(root ::= [0-9]{0,30000} "x")"));
  for (int i = 0; i < 20000; ++i) REQUIRE(m.accept(std::string(1, static_cast<char>('0' + i % 10))));
  CHECK_FALSE(m.can_end());
  CHECK(m.accept("x"));
  CHECK(m.is_finished());
}
