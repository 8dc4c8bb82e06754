// What this build of kiln requires of the CPU: compiled with the kernels'
// -march flag, so the compiler's own macros say which extensions its code may
// use; a constant, initialized at compile time, so the checks compiled for
// the baseline (cpu_start_check.cpp, capi/cpu_gate.cpp) read it without
// running any of this file's code.
#include "kernels/arch/cpu_features.hpp"

namespace kiln::cpu {

namespace {

constexpr uint32_t required() {
  uint32_t f = 0;
#if defined(__SSE3__)
  f |= kSse3;
#endif
#if defined(__SSSE3__)
  f |= kSsse3;
#endif
#if defined(__SSE4_1__)
  f |= kSse41;
#endif
#if defined(__SSE4_2__)
  f |= kSse42;
#endif
#if defined(__POPCNT__)
  f |= kPopcnt;
#endif
#if defined(__AVX__)
  f |= kAvx;
#endif
#if defined(__AVX2__)
  f |= kAvx2;
#endif
#if defined(__FMA__)
  f |= kFma;
#endif
#if defined(__F16C__)
  f |= kF16c;
#endif
#if defined(__BMI2__)
  f |= kBmi2;
#endif
#if defined(__AVX512F__)
  f |= kAvx512f;
#endif
#if defined(__AVX512BW__)
  f |= kAvx512bw;
#endif
#if defined(__AVX512VL__)
  f |= kAvx512vl;
#endif
#if defined(__AVX512DQ__)
  f |= kAvx512dq;
#endif
#if defined(__AVX512CD__)
  f |= kAvx512cd;
#endif
#if defined(__AVX512VNNI__)
  f |= kAvx512vnni;
#endif
#if defined(__AVX512BF16__)
  f |= kAvx512bf16;
#endif
#if defined(__AVXVNNI__)
  f |= kAvxvnni;
#endif
#if defined(__ARM_FEATURE_DOTPROD)
  f |= kNeonDotprod;
#endif
  return f;
}

}  // namespace

constinit const uint32_t kRequiredFeatures = required();

}  // namespace kiln::cpu
