// The one place that decides the float vector: its width and the
// instructions that widen stored values (fp16, bf16, bytes) into it.
//
// FloatVec is xsimd's batch for the instruction set the build targets
// (KILN_ARCH): 16 lanes with AVX-512, 8 with AVX or AVX2, 4 with SSE2 or NEON.
// No kernel assumes a width; they ask kFloatLanes. The widenings come from
// one file per instruction set, picked here by the compiler's own macros (the
// same ones xsimd picks its batch by); a set without a file of its own uses
// the lane-by-lane one. All conversions are exact (and the fp16 rounding is
// to nearest even everywhere), so the width never changes what a lane holds.
#pragma once

#include <xsimd/xsimd.hpp>

namespace kiln::kernels {

using FloatVec = xsimd::batch<float>;
inline constexpr int kFloatLanes = static_cast<int>(FloatVec::size);

}  // namespace kiln::kernels

#if defined(__AVX512F__)
#include "kernels/arch/simd_avx512.hpp"
#elif defined(__AVX2__) && defined(__F16C__)
#include "kernels/arch/simd_avx2.hpp"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include "kernels/arch/simd_neon.hpp"
#else
#include "kernels/arch/simd_generic.hpp"
#endif

namespace kiln::kernels {

// kFloatLanes consecutive IEEE halves (raw bits, any alignment), as floats.
using arch::widen_f16;
// kFloatLanes consecutive bfloat16 values (raw bits), as floats.
using arch::widen_bf16;
// kFloatLanes bytes, as floats: widen_bytes<false> unsigned, <true> signed.
using arch::widen_bytes;
// kFloatLanes floats rounded to IEEE halves, nearest even (as fp32_to_fp16).
using arch::narrow_f16;
// Keeps a loaded vector in a register where the compiler would rather read
// it from memory once per instruction that uses it (an FMA's memory operand):
// a vector many FMAs share is then loaded once.
using arch::keep_in_register;
// kFloatLanes vectors summed each: lane p of the result is the sum of
// acc[p]'s lanes (in a fixed order for the instruction set).
using arch::sum_each;
// The same with the largest lane instead of the sum, for vectors without
// NaNs (exact, so the same whatever order the instruction set compares in).
using arch::max_each;

// How many float vectors fit in registers at once (32 with AVX-512 and NEON,
// 16 otherwise): tiles are sized by it.
inline constexpr int kFloatRegisters = arch::kRegisters;

static_assert(arch::kLanes == kFloatLanes, "the widening file does not match xsimd's batch");

}  // namespace kiln::kernels
