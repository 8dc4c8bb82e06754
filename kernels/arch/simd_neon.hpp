// Widening into 4-lane FloatVec with aarch64 NEON (which converts halves natively).
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

namespace kiln::kernels::arch {

inline constexpr int kLanes = 4;
inline constexpr int kRegisters = 32;  // vector registers the compiler can allocate

inline void keep_in_register(xsimd::batch<float>& v) { asm("" : "+w"(v.data)); }

inline xsimd::batch<float> widen_f16(const uint8_t* p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
}

inline xsimd::batch<float> widen_bf16(const uint8_t* p) {
  return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p)), 16));
}

template <bool Signed>
xsimd::batch<float> widen_bytes(const uint8_t* p) {
  uint32_t four;
  std::memcpy(&four, p, sizeof four);
  const uint8x8_t bytes = vreinterpret_u8_u32(vdup_n_u32(four));
  if constexpr (Signed) return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(bytes)))));
  return vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(bytes))));
}

inline void narrow_f16(const float* in, uint16_t* out) {
  vst1_u16(out, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(in))));
}

inline xsimd::batch<float> sum_each(const xsimd::batch<float>* acc) {
  return vpaddq_f32(vpaddq_f32(acc[0], acc[1]), vpaddq_f32(acc[2], acc[3]));
}

inline xsimd::batch<float> max_each(const xsimd::batch<float>* acc) {
  return vpmaxq_f32(vpmaxq_f32(acc[0], acc[1]), vpmaxq_f32(acc[2], acc[3]));
}

}  // namespace kiln::kernels::arch
