// Widening into FloatVec lane by lane, for instruction sets without a file of
// their own (x86-64 baseline SSE2, AVX without AVX2, aarch64 without NEON).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "kernels/bf16.hpp"
#include "kernels/fp16.hpp"

namespace kiln::kernels::arch {

inline constexpr int kLanes = static_cast<int>(xsimd::batch<float>::size);
inline constexpr int kRegisters = 16;  // vector registers the compiler can allocate

// The batch of element(i) for i < kLanes.
template <class Element>
xsimd::batch<float> by_lanes(Element element) {
  alignas(xsimd::batch<float>::arch_type::alignment()) float lanes[kLanes];
  for (int i = 0; i < kLanes; ++i) lanes[i] = element(i);
  return xsimd::batch<float>::load_aligned(lanes);
}

inline uint16_t half_bits(const uint8_t* p, int i) {
  uint16_t h;
  std::memcpy(&h, p + 2 * i, sizeof h);
  return h;
}

// Any instruction set: nothing to ask of the compiler.
inline void keep_in_register(xsimd::batch<float>&) {}

inline xsimd::batch<float> widen_f16(const uint8_t* p) {
  return by_lanes([&](int i) { return fp16_to_fp32(half_bits(p, i)); });
}

inline xsimd::batch<float> widen_bf16(const uint8_t* p) {
  return by_lanes([&](int i) { return bf16_to_fp32(half_bits(p, i)); });
}

template <bool Signed>
xsimd::batch<float> widen_bytes(const uint8_t* p) {
  return by_lanes([&](int i) { return Signed ? float(static_cast<int8_t>(p[i])) : float(p[i]); });
}

inline void narrow_f16(const float* in, uint16_t* out) {
  for (int i = 0; i < kLanes; ++i) out[i] = fp32_to_fp16(in[i]);
}

inline xsimd::batch<float> sum_each(const xsimd::batch<float>* acc) {
  return by_lanes([&](int p) { return xsimd::hadd(acc[p]); });
}

inline xsimd::batch<float> max_each(const xsimd::batch<float>* acc) {
  return by_lanes([&](int p) {
    alignas(xsimd::batch<float>::arch_type::alignment()) float lanes[kLanes];
    acc[p].store_aligned(lanes);
    return *std::max_element(lanes, lanes + kLanes);
  });
}

}  // namespace kiln::kernels::arch
