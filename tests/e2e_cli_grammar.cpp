// The stories260K program with --grammar, --grammar-file, -j and -jf: its
// output follows the grammar and generation stops where the grammar ends;
// JSON satisfies the schema (judged by tests/json_schema_check, not by the
// converter); each reply of a conversation follows it; a faulty grammar,
// schema or file, two grammars at once, or a grammar with -i are refused in
// one line naming the flag.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/json_schema_check.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_folder.hpp"

using kiln::test::ProcessResult;
using kiln::test::TempFolder;

namespace {

ProcessResult run(std::vector<std::string> args, const std::string& stdin_text = "") {
  args.insert(args.begin(), STORIES_BIN);
  return kiln::test::run_process(args, stdin_text);
}

// The generated text alone: the prompt is not printed, and the program ends it with a newline.
std::string generated(const ProcessResult& r) {
  REQUIRE(r.exit_code == 0);
  REQUIRE(!r.out.empty());
  REQUIRE(r.out.back() == '\n');
  return r.out.substr(0, r.out.size() - 1);
}

// A one-line refusal (exit status 1) containing `part`.
void check_refused(const ProcessResult& r, const std::string& part) {
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_MESSAGE(r.err.find(part) != std::string::npos, r.err);
}

const std::vector<std::string> kPrompt = {"-p", "Once upon a time", "--no-display-prompt", "-n", "200"};

std::vector<std::string> with(std::vector<std::string> args) {
  args.insert(args.begin(), kPrompt.begin(), kPrompt.end());
  return args;
}

const char* const kPersonSchema = R"({"type": "object", "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 12},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "pets": {"type": "array", "items": {"enum": ["cat", "dog"]}, "maxItems": 3}},
  "required": ["name", "age"], "additionalProperties": false})";

}  // namespace

TEST_CASE("--grammar: the text is one of the grammar's, and generation stops where the grammar ends") {
  for (const char* seed : {"1", "2", "3", "4"}) {
    const ProcessResult r = run(with({"--grammar", R"(root ::= ("yes" | "no") "." )", "-s", seed, "--temp", "1"}));
    const std::string text = generated(r);
    CHECK_MESSAGE((text == "yes." || text == "no."), text);
  }
  // Greedy decoding too: the mask comes before the argmax.
  const std::string text = generated(run(with({"--grammar", R"(root ::= [a-z]{3,5} " " [0-9]{1,3} "!")", "--temp", "0"})));
  REQUIRE(text.size() >= 6);
  CHECK(std::all_of(text.begin(), text.begin() + 3, [](char c) { return c >= 'a' && c <= 'z'; }));
  CHECK(text.back() == '!');
}

TEST_CASE("-j and -jf: the text is JSON that the schema allows") {
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(kPersonSchema);
  TempFolder tmp("cli-grammar");
  const std::string schema_file = tmp.file("person.json");
  std::ofstream(schema_file) << kPersonSchema;
  for (const char* seed : {"1", "2", "3"}) {
    for (const std::vector<std::string>& flag : {std::vector<std::string>{"-j", kPersonSchema},
                                                 std::vector<std::string>{"-jf", schema_file}}) {
      std::vector<std::string> args = with(flag);
      args.insert(args.end(), {"-s", seed});
      const std::string text = generated(run(args));
      const nlohmann::ordered_json value = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
      REQUIRE_MESSAGE(!value.is_discarded(), text);
      CHECK_MESSAGE(kiln::test::satisfies(schema, value), text);
    }
  }
}

TEST_CASE("--grammar-file reads the grammar from a file") {
  TempFolder tmp("cli-grammar-file");
  const std::string file = tmp.file("answer.gbnf");
  std::ofstream(file) << "# an answer\nroot ::= answer \".\"\nanswer ::= \"yes\" | \"no\"\n";
  const std::string text = generated(run(with({"--grammar-file", file, "-s", "7"})));
  CHECK_MESSAGE((text == "yes." || text == "no."), text);
}

TEST_CASE("-cnv: each reply follows the grammar from its start") {
  const ProcessResult r = run({"-cnv", "--grammar", R"(root ::= "yes" | "no")", "-s", "5"}, "Is it red?\nIs it big?\n");
  REQUIRE(r.exit_code == 0);
  // "> " before each line read, each reply on a line of its own.
  std::vector<std::string> replies;
  for (size_t at = 0; (at = r.out.find("> ", at)) != std::string::npos; at += 2) {
    const size_t end = r.out.find('\n', at);
    if (end != std::string::npos) replies.push_back(r.out.substr(at + 2, end - at - 2));
  }
  REQUIRE(replies.size() == 2);
  for (const std::string& reply : replies) CHECK_MESSAGE((reply == "yes" || reply == "no"), reply);
}

TEST_CASE("a faulty grammar, schema or file is refused in one line naming the flag") {
  check_refused(run(with({"--grammar", "root ::= missing"})), "--grammar: ");
  check_refused(run(with({"--grammar", "root ::= (\"a\""})), "--grammar: ");
  check_refused(run(with({"-j", R"({"type": "object", "not": {}})"})),
                "--json-schema: JSON schema at /: unsupported keyword 'not'");
  check_refused(run(with({"-j", "{not json"})), "--json-schema: JSON schema: not JSON");
  TempFolder tmp("cli-grammar-faults");
  check_refused(run(with({"--grammar-file", tmp.file("absent.gbnf")})), "--grammar-file: cannot read grammar file");
  check_refused(run(with({"-jf", tmp.path.string()})), "--json-schema-file: '" + tmp.path.string() + "' is a folder");
}

TEST_CASE("two grammars, or a grammar with -i, are refused") {
  check_refused(run(with({"--grammar", "root ::= \"a\"", "-j", "{}"})), "give at most one of them");
  check_refused(run(with({"-i", "--grammar", "root ::= \"a\""})), "-i: cannot be combined with a grammar");
}
