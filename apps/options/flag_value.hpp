// The text after a flag, read as the flag needs it. Every error is one line
// that names the flag as it was typed ("--n-predict: expected an integer,
// got 'ten'").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "apps/cli_support.hpp"

namespace kiln {

struct FlagValue {
  std::string flag;
  std::string text;

  // An integer in [min, max].
  template <class Int>
  Int integer(Int min, Int max) const {
    return static_cast<Int>(parse_int(flag, text, min, max));
  }
  // Any number but NaN; the sampler checks the ranges that depend on the parameter.
  float number() const;
  // "128,512": each at least `min`.
  std::vector<int> list(int min) const;
  // "1 716 235" or "1,716,235": token ids, checked against the vocabulary later.
  std::vector<int32_t> token_ids() const;
  // The text, which must be one of `choices`.
  const std::string& one_of(std::initializer_list<const char*> choices) const;
};

}  // namespace kiln
