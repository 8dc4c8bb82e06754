// Picks the integer block product (kernels/int8_dot.hpp) for the instruction
// set the build targets, and with it how many weight rows are interleaved
// into one group (kernels/interleave.hpp): the rows one register holds.
// Every choice computes the same bits as the portable one (exact integer
// products, one float accumulator per row), so the results of the
// quantized types do not depend on the instruction set.
#pragma once

#include "kernels/arch/int8_portable.hpp"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include "kernels/arch/int8_avx512_vnni.hpp"
namespace kiln::kernels { using NativeInt8Ops = arch::Avx512VnniInt8Ops; }
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "kernels/arch/int8_avx2.hpp"
namespace kiln::kernels { using NativeInt8Ops = arch::Avx2Int8Ops; }
#elif defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#include "kernels/arch/int8_neon_dot.hpp"
namespace kiln::kernels { using NativeInt8Ops = arch::NeonDotInt8Ops; }
#else
namespace kiln::kernels { using NativeInt8Ops = arch::PortableInt8Ops<8>; }
#endif

namespace kiln::kernels {

inline constexpr int kInterleaveRows = NativeInt8Ops::kRows;

// The plain version with the same number of rows, for tests.
using PortableInt8Ops = arch::PortableInt8Ops<kInterleaveRows>;

}  // namespace kiln::kernels
