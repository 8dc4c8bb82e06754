// The README's flags against the programs: every flag in the flag tables of
// "The program", "Serving", "Benchmarks" and "Perplexity" is accepted by the
// program that section is about, and that program's --help lists it spelt as
// the README spells it ("-m, --model FILE"). The programs are those of a
// synthetic model, which needs no fixtures.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_process.hpp"

namespace {

using kiln::test::run_process;

// A flag as a README table cell writes it: "-m, --model FILE".
struct DocumentedFlag {
  std::string spec;                // the whole cell text between backquotes
  std::vector<std::string> names;  // {"-m", "--model"}
  std::string value_name;          // "FILE"; empty for a switch
};

DocumentedFlag parse_spec(const std::string& spec) {
  DocumentedFlag flag{spec, {}, {}};
  std::istringstream words(spec);
  for (std::string word; words >> word;) {
    if (word.back() == ',') word.pop_back();
    if (word.starts_with("-")) flag.names.push_back(word);
    else flag.value_name = word;
  }
  return flag;
}

// Section ("## Serving") -> the flags of its tables: the backquoted specs in
// the first cell of each row that starts with a flag.
std::map<std::string, std::vector<DocumentedFlag>> readme_flags() {
  std::ifstream in(README_PATH);
  REQUIRE_MESSAGE(in, "cannot read " README_PATH);
  std::map<std::string, std::vector<DocumentedFlag>> flags;
  const std::regex quoted("`([^`]+)`");
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) section = line;
    if (!line.starts_with("| `-")) continue;
    const std::string cell = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator m(cell.begin(), cell.end(), quoted), end; m != end; ++m)
      flags[section].push_back(parse_spec((*m)[1]));
  }
  return flags;
}

// A value each kind of README placeholder stands for, valid for every flag that takes one.
std::string sample_value(const std::string& value_name) {
  static const std::map<std::string, std::string> samples = {
      {"FILE", "some-file"}, {"TEXT", "Once upon a time"}, {"N", "4"},   {"T", "0.5"},         {"P", "0.5"},
      {"X", "1.1"},          {"IDS", "1 2 3"},             {"LIST", "1,2"}, {"FORMAT", "json"}, {"HOST", "localhost"},
      {"KEY", "secret"},     {"NAME", "story"},             {"GBNF", "root ::= \"a\""}, {"SCHEMA", "{}"},
      {"MODE", "deepseek"},  {"BUDGET", "0"},               {"JSON", "{}"}, {"SECONDS", "2.5"}};
  const auto it = samples.find(value_name);
  REQUIRE_MESSAGE(it != samples.end(), "the README names a value '" << value_name << "' this test has no sample of");
  return it->second;
}

void check_program(const std::string& program, const std::vector<DocumentedFlag>& flags) {
  REQUIRE_MESSAGE(!flags.empty(), "no flag table found for " << program);
  const auto help = run_process({program, "--help"});
  REQUIRE(help.exit_code == 0);
  for (const DocumentedFlag& flag : flags) {
    CAPTURE(flag.spec);
    CHECK_MESSAGE(help.out.find(flag.spec) != std::string::npos, program << " --help does not list " << flag.spec);
    for (const std::string& name : flag.names) {
      std::vector<std::string> argv = {program, name};
      if (!flag.value_name.empty()) argv.push_back(sample_value(flag.value_name));
      // --help last: every flag before it is read and checked, then the help
      // is printed instead of running the model.
      argv.push_back("--help");
      const auto r = run_process(argv);
      CAPTURE(name);
      CHECK_MESSAGE(r.exit_code == 0, r.err);
      CHECK(r.out.starts_with("usage: "));
    }
  }
}

}  // namespace

TEST_CASE("every flag the README documents is taken by its program and listed in its --help") {
  const auto flags = readme_flags();
  // Each section with a flag table is about one program; a new one must be added here.
  const std::map<std::string, std::string> programs = {{"## The program", CLI_BIN},
                                                       {"## Serving", SERVER_BIN},
                                                       {"## Benchmarks", BENCH_BIN},
                                                       {"## Perplexity", PERPLEXITY_BIN}};
  // Not structured bindings: CHECK_MESSAGE's and CAPTURE's lambdas cannot capture them in Clang 14.
  for (const auto& table : flags)
    CHECK_MESSAGE(programs.contains(table.first),
                  "README: a flag table under '" << table.first << "', about no known program");
  for (const auto& entry : programs) {
    const std::string& section = entry.first;
    const std::string& program = entry.second;
    CAPTURE(section);
    if (program.empty()) {
      MESSAGE("skipped: no <name>-server in this build (cpp-httplib or nlohmann-json missing)");
      continue;
    }
    check_program(program, flags.contains(section) ? flags.at(section) : std::vector<DocumentedFlag>{});
  }
}
