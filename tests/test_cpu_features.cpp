// The start-up check that the CPU has what the kernels were compiled for
// (kernels/arch/cpu_features.hpp). That it stops a real program on a CPU
// without the features is checked in CI (.ci/isa-matrix.sh) by running an
// AVX-512 build under an emulated CPU without AVX-512.
#include <doctest/doctest.h>

#include <string>

#include "kernels/arch/cpu_features.hpp"

using namespace kiln::cpu;

namespace {

std::string message(uint32_t required, uint32_t present, const char* arch) {
  char line[512];
  return missing_features(required, present, arch, line, sizeof line) ? line : "";
}

TEST_CASE("cpu features: this test runs, so this CPU has what the build requires") {
  CHECK((kRequiredFeatures & ~present_features()) == 0);
  CHECK(message(kRequiredFeatures, present_features(), "native").empty());
  char line[512];
  CHECK(!this_cpu_lacks(line, sizeof line));
}

TEST_CASE("cpu features: one line naming what is missing") {
  CHECK(message(kAvx2 | kFma, kAvx2 | kFma | kAvx512f, "x86-64-v3").empty());
  CHECK(message(kAvx2 | kAvx512vnni, kAvx2, "native") ==
        "this binary needs AVX-512 VNNI (compiled with -march=native on another machine); this CPU lacks it");
  CHECK(message(kAvx512f | kAvx512bw | kAvx2, kAvx2, "x86-64-v4") ==
        "this binary needs AVX-512F, AVX-512BW (compiled with -march=x86-64-v4); this CPU lacks them");
  CHECK(message(kNeonDotprod, 0, "armv8.2-a+dotprod") ==
        "this binary needs the NEON dot product (dotprod) (compiled with -march=armv8.2-a+dotprod); this CPU lacks it");
}

}  // namespace
