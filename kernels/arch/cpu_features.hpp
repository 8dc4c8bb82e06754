// The instruction-set extensions a build of kiln may be compiled for, and the
// check that the CPU it runs on has them (cpu_check.cpp): a program built
// with -march=native on one machine and copied to an older one stops at
// start-up with one line naming what is missing (cpu_start_check.cpp),
// instead of an illegal-instruction crash somewhere in the first kernel; a
// model's shared library says so through kiln_model_load instead
// (capi/cpu_gate.cpp), never exiting its host.
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

// The features this build's kernels were compiled to use (cpu_required.cpp):
// a constant in the program's data, so that reading it runs no code
// compiled for them.
extern const uint32_t kRequiredFeatures;

// The features of the CPU running this process.
uint32_t present_features();

// False if `present` covers `required`; otherwise true, with the line to
// print in `line` (cut to `size`), e.g. "this binary needs AVX-512 VNNI
// (compiled with -march=native on another machine); this CPU lacks it".
// Plain C strings: it runs before main, in code built for the baseline, and
// must not share a library template's instantiation with code built for more.
bool missing_features(uint32_t required, uint32_t present, const char* arch, char* line, size_t size);

// missing_features for this build on this CPU: kRequiredFeatures, the
// features present, and the -march the kernels were built with.
bool this_cpu_lacks(char* line, size_t size);

}  // namespace kiln::cpu
