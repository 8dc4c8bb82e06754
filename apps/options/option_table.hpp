// The one table of the flags every program of a compiled model takes, in the
// manner of llama.cpp's: each flag once, with its spellings, what value it
// takes, which programs take it, how the value is stored and its help line,
// whose default comes from Options itself. parse_options reads argv with it
// and usage() writes --help from it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "apps/options/flag_value.hpp"
#include "apps/options/options.hpp"

namespace kiln {

struct ModelEntry;

struct Option {
  std::vector<std::string> names;  // {"-n", "--n-predict"}
  std::string value_name;          // "N", "FILE"; empty: a switch, which takes no value
  unsigned programs;               // Program bits
  std::string help;                // empty: left out of --help (a flag for kiln's own use)
  std::function<void(Options&, const FlagValue&)> store;
  // The default as --help shows it; "" (or no function) shows none.
  std::function<std::string(const ModelEntry&)> shown_default;
};

const std::vector<Option>& option_table();

}  // namespace kiln
