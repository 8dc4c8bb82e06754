// kiln-chat-template CASES.json [--dir TEMPLATE_DIR] [--date YYYY-MM-DD]
//
// Checks kiln's template renderer against rendered conversations: CASES.json
// is a list of {"template": file, "bos_token", "eos_token", "cases": [{"name",
// "messages", "add_generation_prompt", "expected" | "error", "extra"?, ...}]}
// (the format of ../shared/chat-templates/cases.json; any other key of a case
// is a template variable, as in ../shared/chat-templates/tools/cases.json).
// Templates are read from TEMPLATE_DIR (default: the folder of CASES.json).
// Prints each mismatch and "N/M cases match"; exits 0 only when all do.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "apps/cli_support.hpp"
#include "engine/chat/chat_template.hpp"
#include "engine/chat/json.hpp"
#include "engine/error/error.hpp"

namespace {

using kiln::Error;
using namespace kiln::chat;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path.string() + "'");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const Value& field(const Value& obj, const std::string& key, const std::string& where) {
  if (!obj.is_object()) throw Error(where + ": expected an object");
  const Value* v = obj.as_object().find(key);
  if (v == nullptr) throw Error(where + ": missing \"" + key + "\"");
  return *v;
}

std::string string_field(const Value& obj, const std::string& key, const std::string& where) {
  const Value& v = field(obj, key, where);
  if (!v.is_string()) throw Error(where + ": \"" + key + "\" is not a string");
  return v.as_text().str();
}

// The keys of a case that say what to render and what to expect; "extra" is
// an object of more variables. Every other key is one more template variable
// (tools, enable_thinking, ...), as apply_chat_template(..., **kwargs) hands
// them to the template in Python.
bool is_case_field(const std::string& key) {
  return key == "name" || key == "messages" || key == "add_generation_prompt" || key == "expected" ||
         key == "error" || key == "extra";
}

std::shared_ptr<Object> template_variables(const Value& test_case) {
  auto vars = make_object();
  if (const Value* extra = test_case.as_object().find("extra"); extra && extra->is_object())
    vars->items = extra->as_object().items;
  for (const auto& [key, value] : test_case.as_object().items)
    if (!is_case_field(key)) vars->set(key, value);
  return vars;
}

std::tm parse_date(const std::string& text) {
  std::tm t{};
  std::istringstream in(text);
  in >> std::get_time(&t, "%Y-%m-%d");
  if (in.fail() || in.peek() != EOF) throw Error("--date: expected YYYY-MM-DD, got '" + text + "'");
  t.tm_hour = 12;
  std::time_t flat = timegm(&t);  // fills in the day of the week and of the year
  gmtime_r(&flat, &t);
  return t;
}

// Where two strings first differ, with a little of each from there.
std::string first_difference(const std::string& expected, const std::string& got) {
  size_t i = 0;
  while (i < expected.size() && i < got.size() && expected[i] == got[i]) ++i;
  const auto show = [&](const std::string& s) { return to_json(Value(s.substr(i, 60))); };
  return "first difference at byte " + std::to_string(i) + ": expected " + show(expected) + ", got " + show(got);
}

int run(int argc, char** argv) {
  std::string cases_path, dir, date = "2026-12-03";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--dir" || arg == "--date") && i + 1 < argc) (arg == "--dir" ? dir : date) = argv[++i];
    else if (arg == "-h" || arg == "--help") {
      std::puts("usage: kiln-chat-template CASES.json [--dir TEMPLATE_DIR] [--date YYYY-MM-DD]");
      return 0;
    } else if (cases_path.empty() && !arg.starts_with("-")) cases_path = arg;
    else throw Error("unexpected argument '" + arg + "' (usage: kiln-chat-template CASES.json [--dir DIR] [--date YYYY-MM-DD])");
  }
  if (cases_path.empty()) throw Error("usage: kiln-chat-template CASES.json [--dir TEMPLATE_DIR] [--date YYYY-MM-DD]");
  if (dir.empty()) dir = std::filesystem::path(cases_path).parent_path().string();
  const std::tm now = parse_date(date);

  const Value all = parse_json(read_file(cases_path));
  if (!all.is_array()) throw Error(cases_path + ": expected a list of templates");
  int total = 0, matched = 0;
  for (const Value& entry : all.as_array()) {
    const std::string file = string_field(entry, "template", cases_path);
    const std::string where = cases_path + ": " + file;
    const ChatTemplate tmpl(read_file(std::filesystem::path(dir) / file), file);
    const Value& cases = field(entry, "cases", where);
    if (!cases.is_array()) throw Error(where + ": \"cases\" is not a list");
    for (const Value& c : cases.as_array()) {
      const std::string name = string_field(c, "name", where);
      ChatInputs in;
      in.messages = field(c, "messages", where + " " + name);
      in.add_generation_prompt = field(c, "add_generation_prompt", where + " " + name).truthy();
      in.bos_token = string_field(entry, "bos_token", where);
      in.eos_token = string_field(entry, "eos_token", where);
      in.now = now;
      in.extra = template_variables(c);
      const bool want_error = c.as_object().find("error") != nullptr;
      const std::string expected = want_error ? "" : string_field(c, "expected", where + " " + name);
      ++total;
      std::string problem;
      try {
        const std::string got = tmpl.render(in).str();
        if (want_error) problem = "expected an error, rendered " + to_json(Value(got.substr(0, 80)));
        else if (got != expected) problem = first_difference(expected, got);
      } catch (const Error& e) {
        if (!want_error) problem = std::string("error: ") + e.what();
      }
      if (problem.empty()) ++matched;
      else std::printf("MISMATCH %s / %s: %s\n", file.c_str(), name.c_str(), problem.c_str());
    }
  }
  std::printf("%d/%d cases match\n", matched, total);
  return matched == total ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return kiln::run_reporting_errors("kiln-chat-template", [&] { return run(argc, argv); });
}
