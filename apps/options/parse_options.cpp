#include "apps/options/parse_options.hpp"

#include <algorithm>

#include "apps/cli_support.hpp"
#include "apps/options/combinations.hpp"
#include "apps/options/option_table.hpp"
#include "apps/options/usage.hpp"
#include "engine/error/error.hpp"

namespace kiln {

namespace {

// The option of `program` spelt `arg`; nullptr for none. Programs may spell
// different options alike (-p: the CLI's prompt, the bench's prompt sizes).
const Option* find_option(Program program, const std::string& arg) {
  for (const Option& option : option_table())
    if ((option.programs & program) && std::ranges::find(option.names, arg) != option.names.end()) return &option;
  return nullptr;
}

}  // namespace

std::optional<Options> parse_options(Program program, int argc, char** argv, const ModelEntry& model) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const Option* option = find_option(program, arg);
    if (!option) throw Error("unknown argument '" + arg + "' (see --help)");
    // The next argument is the value even when it starts with '-' (-n -1).
    const std::string value = option->value_name.empty() ? std::string() : flag_value(argc, argv, i);
    option->store(options, FlagValue{arg, value});
  }
  if (options.help) {
    print_text(usage(program, model));
    return std::nullopt;
  }
  check_combinations(program, options);
  return options;
}

}  // namespace kiln
