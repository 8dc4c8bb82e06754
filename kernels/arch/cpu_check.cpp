// The check of cpu_features.hpp: what the CPU has, and the line saying what
// it lacks. Compiled for the baseline of its architecture (no -march of
// kiln's), so that it runs on any CPU; its callers (cpu_start_check.cpp,
// capi/cpu_gate.cpp) are too.
#include <cstdio>
#include <cstring>

#include "kernels/arch/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#ifndef KILN_ARCH_NAME
#error "KILN_ARCH_NAME (the -march the kernels were built with) must be defined"
#endif

namespace kiln::cpu {

namespace {

struct Named {
  Feature bit;
  const char* name;
};

constexpr Named kNames[] = {
    {kSse3, "SSE3"},       {kSsse3, "SSSE3"},         {kSse41, "SSE4.1"},        {kSse42, "SSE4.2"},
    {kPopcnt, "POPCNT"},   {kAvx, "AVX"},             {kAvx2, "AVX2"},           {kFma, "FMA"},
    {kF16c, "F16C"},       {kBmi2, "BMI2"},           {kAvx512f, "AVX-512F"},    {kAvx512bw, "AVX-512BW"},
    {kAvx512vl, "AVX-512VL"}, {kAvx512dq, "AVX-512DQ"}, {kAvx512cd, "AVX-512CD"}, {kAvx512vnni, "AVX-512 VNNI"},
    {kAvx512bf16, "AVX-512 BF16"}, {kAvxvnni, "AVX-VNNI"}, {kNeonDotprod, "the NEON dot product (dotprod)"},
};

}  // namespace

uint32_t present_features() {
  uint32_t f = 0;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();  // constructors may run before libgcc's own
  // F16C and AVX-VNNI straight from CPUID: clang 14's __builtin_cpu_supports
  // does not know their names (leaf 1 ECX bit 29; leaf 7 subleaf 1 EAX bit 4).
  unsigned a = 0, b = 0, c = 0, d = 0;
  const bool f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;
  const bool avxvnni = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
  const struct {
    Feature bit;
    bool present;
  } checks[] = {
      {kSse3, __builtin_cpu_supports("sse3") != 0},
      {kSsse3, __builtin_cpu_supports("ssse3") != 0},
      {kSse41, __builtin_cpu_supports("sse4.1") != 0},
      {kSse42, __builtin_cpu_supports("sse4.2") != 0},
      {kPopcnt, __builtin_cpu_supports("popcnt") != 0},
      {kAvx, __builtin_cpu_supports("avx") != 0},
      {kAvx2, __builtin_cpu_supports("avx2") != 0},
      {kFma, __builtin_cpu_supports("fma") != 0},
      {kF16c, f16c},
      {kBmi2, __builtin_cpu_supports("bmi2") != 0},
      {kAvx512f, __builtin_cpu_supports("avx512f") != 0},
      {kAvx512bw, __builtin_cpu_supports("avx512bw") != 0},
      {kAvx512vl, __builtin_cpu_supports("avx512vl") != 0},
      {kAvx512dq, __builtin_cpu_supports("avx512dq") != 0},
      {kAvx512cd, __builtin_cpu_supports("avx512cd") != 0},
      {kAvx512vnni, __builtin_cpu_supports("avx512vnni") != 0},
      {kAvx512bf16, __builtin_cpu_supports("avx512bf16") != 0},
      {kAvxvnni, avxvnni},
  };
  for (const auto& c : checks)
    if (c.present) f |= c.bit;
#elif defined(__aarch64__)
  if ((getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0) f |= kNeonDotprod;
#endif
  return f;
}

bool missing_features(uint32_t required, uint32_t present, const char* arch, char* line, size_t size) {
  const uint32_t missing = required & ~present;
  if (missing == 0) return false;
  char names[384] = "";
  int count = 0;
  for (const Named& n : kNames) {
    if ((missing & n.bit) == 0) continue;
    if (count++ > 0) std::strncat(names, ", ", sizeof names - std::strlen(names) - 1);
    std::strncat(names, n.name, sizeof names - std::strlen(names) - 1);
  }
  std::snprintf(line, size, "this binary needs %s (compiled with -march=%s%s); this CPU lacks %s", names, arch,
                std::strcmp(arch, "native") == 0 ? " on another machine" : "", count == 1 ? "it" : "them");
  return true;
}

bool this_cpu_lacks(char* line, size_t size) {
  return missing_features(kRequiredFeatures, present_features(), KILN_ARCH_NAME, line, size);
}

}  // namespace kiln::cpu
