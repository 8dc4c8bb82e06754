// The instruction-set extensions a build of kiln may be compiled for, and the
// start-up check that the CPU it runs on has them (cpu_check.cpp): a binary
// built with -march=native on one machine and copied to an older one stops
// with one line naming what is missing, instead of an illegal-instruction
// crash somewhere in the first kernel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::cpu {

enum Feature : uint32_t {
  kSse3 = 1u << 0,
  kSsse3 = 1u << 1,
  kSse41 = 1u << 2,
  kSse42 = 1u << 3,
  kPopcnt = 1u << 4,
  kAvx = 1u << 5,
  kAvx2 = 1u << 6,
  kFma = 1u << 7,
  kF16c = 1u << 8,
  kBmi2 = 1u << 9,
  kAvx512f = 1u << 10,
  kAvx512bw = 1u << 11,
  kAvx512vl = 1u << 12,
  kAvx512dq = 1u << 13,
  kAvx512cd = 1u << 14,
  kAvx512vnni = 1u << 15,
  kAvx512bf16 = 1u << 16,
  kAvxvnni = 1u << 17,
  kNeonDotprod = 1u << 18,
};

// The features this build's kernels were compiled to use (cpu_required.cpp).
uint32_t required_features();

// The features of the CPU running this process.
uint32_t present_features();

// False if `present` covers `required`; otherwise true, with the line to
// print in `line` (cut to `size`), e.g. "this binary needs AVX-512 VNNI
// (compiled with -march=native on another machine); this CPU lacks it".
// Plain C strings: it runs before main, in code built for the baseline, and
// must not share a library template's instantiation with code built for more.
bool missing_features(uint32_t required, uint32_t present, const char* arch, char* line, size_t size);

}  // namespace kiln::cpu
