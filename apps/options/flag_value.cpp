#include "apps/options/flag_value.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "engine/error/error.hpp"

namespace kiln {

float FlagValue::number() const {
  char* end = nullptr;
  const float v = std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || v != v) throw Error(flag + ": expected a number, got '" + text + "'");
  return v;
}

std::vector<int> FlagValue::list(int min) const {
  std::vector<int> out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(FlagValue{flag, item}.integer(min, 1 << 24));
  if (out.empty()) throw Error(flag + ": empty list");
  return out;
}

std::vector<int32_t> FlagValue::token_ids() const {
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::vector<int32_t> ids;
  std::istringstream in(spaced);
  for (std::string item; in >> item;) {
    const int32_t id = FlagValue{flag, item}.integer(INT32_MIN, INT32_MAX);
    if (id < 0) throw Error(flag + ": token ids are not negative, got " + item);
    ids.push_back(id);
  }
  if (ids.empty()) throw Error(flag + ": no token ids given");
  return ids;
}

const std::string& FlagValue::one_of(std::initializer_list<const char*> choices) const {
  std::string expected;
  for (const char* choice : choices) {
    if (text == choice) return text;
    expected.append(expected.empty() ? "" : " or ").append(choice);
  }
  throw Error(flag + ": expected " + expected + ", got '" + text + "'");
}

}  // namespace kiln
